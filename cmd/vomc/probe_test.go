package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbeCommandLine checks that vomc probe refuses a bad command line
// before any work, and writes nothing.
func TestProbeCommandLine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"probe", "--model", "m", "--data", "d"}, 2, "--out"},
		{[]string{"probe", "--model", "m", "--data", "d", "--out", out, "--bands", "16,x"}, 2, `"x" is not a position`},
		{[]string{"probe", "--model", "m", "--data", "d", "--out", out, "--positions", "-3"}, 2, "--positions -3"},
		{[]string{"probe", "--model", "m", "--data", "d", "--out", out, "--bands", "64,16"}, 2, "--bands"},
		{[]string{"probe", "--model", filepath.Join(t.TempDir(), "none"), "--data", t.TempDir(), "--out", out}, 1, "data set"},
	} {
		code, stderr := stderrOf(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and a message naming %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused command line left %s (%v)", out, err)
	}
}
