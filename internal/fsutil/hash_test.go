package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFileSHA256: the FIPS 180-2 example digest of "abc"; a missing file
// is an error.
func TestFileSHA256(t *testing.T) {
	p := filepath.Join(t.TempDir(), "abc")
	if err := os.WriteFile(p, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FileSHA256(p)
	if want := "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; err != nil || got != want {
		t.Errorf("FileSHA256(abc) = %s, %v; want %s", got, err, want)
	}
	if _, err := FileSHA256(p + ".missing"); err == nil {
		t.Error("missing file: no error")
	}
}
