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

	"github.com/vomc/vomc/dynamics"
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

// TestSignalDynamics interrupts 'vomc dynamics' with SIGINT once it has
// kept a snapshot in its checkpoint: it exits 130 leaving the checkpoint
// and no outputs; the same command then resumes from it and writes the
// dynamics.json of an uninterrupted run, removing the checkpoint.
func TestSignalDynamics(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model with 40 snapshots")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "30", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "8", "--out", p("data"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "40", "-N", "32", "--seed", "9", "--out", p("test"))
	runOK(t, "train", "--data", p("data"), "--layers", "2", "--heads", "2", "-E", "16", "--batch", "8",
		"--max-steps", "40", "--snapshots", "every:1", "--seed", "2", "--out", p("run"))
	args := []string{"dynamics", "--run", p("run"), "--data", p("test"), "--windows", "40", "--head-windows", "20", "--workers", "1"}
	runOK(t, append(args, "--out", p("whole"))...)

	out := p("interrupted")
	ck := filepath.Join(out, dynamics.CheckpointFile)
	cmd := startVomc(t, append(args, "--out", out)...)
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	kept := func() int {
		b, _ := os.ReadFile(ck)
		return strings.Count(string(b), "\n") - 1 // less the header
	}
	deadline := time.Now().Add(120 * time.Second)
	for kept() < 1 && time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Skipf("the measurement finished (%v) before a snapshot was kept: the machine is too fast for this input", waitErr)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-exited
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != 130 {
		if waitErr == nil {
			t.Skip("the measurement finished before the signal arrived")
		}
		t.Fatalf("exit %v, want status 130", waitErr)
	}
	n := kept()
	if n < 1 || n >= 40 {
		t.Fatalf("after SIGINT the checkpoint keeps %d snapshots, want some of 40", n)
	}
	if _, err := os.Stat(filepath.Join(out, "dynamics.json")); err == nil {
		t.Fatal("an interrupted measurement wrote dynamics.json")
	}
	t.Logf("interrupted with %d of 40 snapshots kept", n)
	runOK(t, append(args, "--out", out)...)
	if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("checkpoint left after the resumed run: %v", err)
	}
	a, _ := os.ReadFile(filepath.Join(p("whole"), "dynamics.json"))
	b, _ := os.ReadFile(filepath.Join(out, "dynamics.json"))
	// the run field names the same run; every point must agree
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("resumed dynamics.json (%d bytes, %d snapshots kept before the interrupt) differs from the uninterrupted one (%d bytes)", len(b), n, len(a))
	}
}
