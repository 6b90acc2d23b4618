package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary run one vomc command as a child process:
// VOMC_TEST_CHILD holds its arguments separated by \x1f.
func TestMain(m *testing.M) {
	if args := os.Getenv("VOMC_TEST_CHILD"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}
