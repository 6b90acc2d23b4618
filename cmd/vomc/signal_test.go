package main

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startVomc starts one vomc command as a child process of the test binary
// (see TestMain).
func startVomc(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VOMC_TEST_CHILD="+strings.Join(args, "\x1f"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// waitForTemp polls dir (recursively) until a temporary file or directory
// of a writer (".….tmp-…") appears, and reports whether it did before the
// child exited or the deadline passed.
func waitForTemp(dir string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".tmp") {
				found = true
			}
			return nil
		})
		if found {
			return true
		}
		select {
		case <-exited:
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
	return false
}

// interruptMidWrite starts args, waits until the command is writing a
// temporary, sends sig, and checks the exit status 128+sig and that the
// output directory out holds nothing but what keep names afterwards.
func interruptMidWrite(t *testing.T, sig syscall.Signal, out string, keep map[string]bool, args ...string) {
	t.Helper()
	cmd := startVomc(t, args...)
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	if !waitForTemp(out, exited) {
		<-exited
		t.Skipf("the command finished (%v) before a temporary appeared: the machine is too fast for this input", waitErr)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	<-exited
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != 128+int(sig) {
		t.Fatalf("exit %v, want status %d", waitErr, 128+int(sig))
	}
	var left []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != out && !keep[d.Name()] {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("left behind after %v: %v", sig, left)
	}
}

// TestSignalDecompress interrupts 'vomc decompress' of a large file with
// SIGINT and SIGTERM while it writes its output.
func TestSignalDecompress(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 24 MB first")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"tree ", "context ", "weighting ", "markov ", "order ", "the ", "of ", "\n"}
	var b strings.Builder
	for b.Len() < 24<<20 {
		b.WriteString(words[r.IntN(len(words))])
	}
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	z := filepath.Join(dir, "in.vmcz")
	if code := run([]string{"compress", "--model", "ppm", in, z}); code != 0 {
		t.Fatalf("compress exited %d", code)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+sig.String())
			interruptMidWrite(t, sig, out, nil, "decompress", z, filepath.Join(out, "sub", "x.txt"))
			if _, err := os.Stat(out); err == nil {
				t.Errorf("the output directory %s created by the command is still there", out)
			}
		})
	}
}

// TestSignalData interrupts 'vomc data' with SIGINT and SIGTERM while it
// writes a data set.
func TestSignalData(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large data set")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			interruptMidWrite(t, sig, root, nil, "data", "-A", "3", "-D", "3", "-K", "20000", "-N", "256", "--seed", "1", "--out", filepath.Join(root, "ds"))
		})
	}
}
