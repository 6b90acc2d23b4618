package main

import (
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary run one vomc command as a child process:
// VOMC_TEST_CHILD holds its arguments separated by \x1f. When
// VOMC_TEST_PEAK names a file, the child writes its peak resident memory
// (VmHWM of /proc/self/status) there before it exits. With VOMC_TEST_ARGV=1
// it runs the vomc command in its own arguments, so that the processes a
// command starts with os.Executable (reproduce --jobs) run vomc too.
func TestMain(m *testing.M) {
	if args := os.Getenv("VOMC_TEST_CHILD"); args != "" {
		code := run(strings.Split(args, "\x1f"))
		if p := os.Getenv("VOMC_TEST_PEAK"); p != "" {
			if st, err := os.ReadFile("/proc/self/status"); err == nil {
				for _, line := range strings.Split(string(st), "\n") {
					if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
						os.WriteFile(p, []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
					}
				}
			}
		}
		os.Exit(code)
	}
	if os.Getenv("VOMC_TEST_ARGV") == "1" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		os.Exit(run(os.Args[1:]))
	}
	os.Exit(m.Run())
}
