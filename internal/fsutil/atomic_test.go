package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tempsIn lists the temporaries of path's base in dir.
func tempsIn(t *testing.T, dir, base string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ts []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "."+base+".tmp-") {
			ts = append(ts, e.Name())
		}
	}
	return ts
}

func TestWriteAtomicCrashSafety(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bin")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	var synced []string
	defer func(h func(string) error) { syncDirHook = h }(syncDirHook)
	syncDirHook = func(d string) error { synced = append(synced, d); return nil }

	// A failing write: the old content stays, no temporary is left, the
	// temporary was registered (CleanupTemps would remove it) and the
	// target never showed partial content.
	boom := errors.New("boom")
	err := WriteAtomic(path, true, func(w io.Writer) error {
		if _, err := w.Write([]byte("partial")); err != nil {
			return err
		}
		if ts := tempsIn(t, dir, "f.bin"); len(ts) != 1 {
			t.Errorf("temporaries during the write: %v", ts)
		}
		temps.Lock()
		n := len(temps.live)
		temps.Unlock()
		if n == 0 {
			t.Error("the temporary is not registered")
		}
		if b, _ := os.ReadFile(path); string(b) != "old" {
			t.Errorf("target during the write: %q", b)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("target after a failed write: %q", b)
	}
	if ts := tempsIn(t, dir, "f.bin"); len(ts) != 0 {
		t.Errorf("temporaries left: %v", ts)
	}
	if len(synced) != 0 {
		t.Errorf("directory synced after a failed write: %v", synced)
	}

	// A successful write replaces the target (0644) and syncs the directory.
	if err := WriteAtomic(path, true, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("target = %q", b)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", info.Mode())
	}
	if len(synced) != 1 || synced[0] != dir {
		t.Errorf("directory syncs %v, want [%s]", synced, dir)
	}
	temps.Lock()
	n := len(temps.live)
	temps.Unlock()
	if n != 0 {
		t.Errorf("%d temporaries still registered", n)
	}

	// A failing directory sync is reported.
	syncDirHook = func(string) error { return boom }
	if err := WriteAtomic(path, true, func(w io.Writer) error { return nil }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want the directory sync's", err)
	}
}

func TestWriteAtomicNoOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := w.Write([]byte(s)); return err }
	}
	if err := WriteAtomic(path, false, write("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(path, false, write("two")); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	// The target appearing during the write is not replaced either.
	other := filepath.Join(dir, "g")
	err := WriteAtomic(other, false, func(w io.Writer) error {
		return os.WriteFile(other, []byte("racer"), 0o644)
	})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	for p, want := range map[string]string{path: "one", other: "racer"} {
		if b, _ := os.ReadFile(p); string(b) != want {
			t.Errorf("%s = %q, want %q", p, b, want)
		}
	}
	if ts := append(tempsIn(t, dir, "f"), tempsIn(t, dir, "g")...); len(ts) != 0 {
		t.Errorf("temporaries left: %v", ts)
	}
}
