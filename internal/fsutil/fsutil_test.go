package fsutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "out.txt")
	if err := WriteBytes(p, false, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(p, false, []byte("two")); !errors.Is(err, ErrExists) {
		t.Fatalf("overwrite without force: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("content %q after refused overwrite", b)
	}
	// A failing writer leaves the old content and no temporary file.
	boom := errors.New("boom")
	if err := WriteFile(p, true, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("content %q after failed write", b)
	}
	if err := WriteBytes(p, true, []byte("three")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "three" {
		t.Fatalf("content %q after forced write", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}
}
