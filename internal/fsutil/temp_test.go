//go:build unix

package fsutil

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary act as the child process of the signal
// tests: with VOMC_FSUTIL_CHILD set it starts a write into that path,
// says "ready" on stdout once the temporary holds data, and blocks.
func TestMain(m *testing.M) {
	if target := os.Getenv("VOMC_FSUTIL_CHILD"); target != "" {
		child(target)
		return
	}
	os.Exit(m.Run())
}

func child(target string) {
	if os.Getenv("VOMC_FSUTIL_NOHANDLER") == "" {
		HandleSignals(false, os.Stderr)
	}
	tmpDir := target + ".dir"
	undo, keep, err := MkdirAll(filepath.Dir(target))
	if err != nil {
		panic(err)
	}
	_ = undo
	_ = keep
	d, _, err := MkdirTemp(tmpDir)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(d, "big"), make([]byte, 1<<20), 0o644); err != nil {
		panic(err)
	}
	err = WriteFile(target, false, func(w io.Writer) error {
		if _, err := w.Write(make([]byte, 1<<20)); err != nil {
			return err
		}
		os.Stdout.WriteString("ready\n")
		select {}
	})
	panic(err)
}

// startChild runs the test binary as a writer of target and waits until
// it is mid-write.
func startChild(t *testing.T, target string, handler bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VOMC_FSUTIL_CHILD="+target)
	if !handler {
		cmd.Env = append(cmd.Env, "VOMC_FSUTIL_NOHANDLER=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not get ready: %q, %v", line, err)
	}
	return cmd
}

// listAll returns every path under root (relative), root excluded.
func listAll(t *testing.T, root string) []string {
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if p != root {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		return nil
	})
	return out
}

// TestSignalCleanup interrupts a real child process in the middle of an
// atomic write (a temporary file and a temporary directory, inside parent
// directories it created) with SIGINT and SIGTERM: it must exit with 130 /
// 143 and leave nothing behind.
func TestSignalCleanup(t *testing.T) {
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(s.String(), func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "new", "sub", "out.bin")
			cmd := startChild(t, target, true)
			if got := listAll(t, root); len(got) < 4 {
				t.Fatalf("child has not created its temporaries: %v", got)
			}
			if err := cmd.Process.Signal(s); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(s) {
				t.Fatalf("child exit: %v, want status %d", err, 128+int(s))
			}
			if got := listAll(t, root); len(got) != 0 {
				t.Errorf("left behind after %v: %v", s, got)
			}
		})
	}
}

// TestSweepStale kills a writer outright (SIGKILL: no clean-up possible)
// and checks that SweepStale removes its temporaries, and only those.
func TestSweepStale(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "out.bin")
	cmd := startChild(t, target, false)
	// A live process's temporary (ours) must survive the sweep.
	f, done, err := CreateTemp(filepath.Join(root, "mine"))
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	f.Close()
	other := filepath.Join(root, ".unrelated.tmp-x")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := listAll(t, root)
	removed, err := SweepStale(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Fatalf("removed %v from %v, want the child's temporary file and directory", removed, before)
	}
	for _, p := range removed {
		if !strings.Contains(filepath.Base(p), ".tmp-") {
			t.Errorf("removed %s", p)
		}
	}
	got := listAll(t, root)
	if len(got) != 2 {
		t.Errorf("after the sweep: %v, want our temporary and the unrelated file", got)
	}
	if _, err := os.Stat(f.Name()); err != nil {
		t.Errorf("live temporary removed: %v", err)
	}
}

// TestWriteFileRemovesCreatedDirs: a failed write removes the parent
// directories it created, and only those.
func TestWriteFileRemovesCreatedDirs(t *testing.T) {
	root := t.TempDir()
	boom := errors.New("boom")
	err := WriteFile(filepath.Join(root, "a", "b", "c.txt"), false, func(w io.Writer) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got := listAll(t, root); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	WriteFile(filepath.Join(root, "a", "b", "c.txt"), false, func(w io.Writer) error { return boom })
	if got := listAll(t, root); len(got) != 1 || got[0] != "a" {
		t.Errorf("after a failed write under an existing directory: %v, want [a]", got)
	}
}

// TestWriteFileForceSpecial: --force never replaces a device or other
// non-regular file (renaming over /dev/null would).
func TestWriteFileForceSpecial(t *testing.T) {
	err := WriteBytes("/dev/null", true, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("writing over /dev/null with force: %v", err)
	}
	if info, err := os.Stat("/dev/null"); err != nil || info.Mode().IsRegular() {
		t.Fatalf("/dev/null: %v, %v", info, err)
	}
}
