package dataset

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMissing: a data set directory that does not exist, a file, and a
// directory without a manifest are each a *MissingError saying which, and
// fs.ErrNotExist, for Read, ReadWindows and ReadHeader alike.
func TestMissing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "tset"): "data set " + filepath.Join(dir, "tset") + ": no such directory",
		file:                       "data set " + file + ": not a directory",
		dir:                        "data set " + dir + ": the directory holds no manifest.json (it is not a data set)",
	} {
		for name, read := range map[string]func(string) error{
			"Read":        func(d string) error { _, err := Read(d); return err },
			"ReadWindows": func(d string) error { _, err := ReadWindows(d); return err },
			"ReadHeader":  func(d string) error { _, err := ReadHeader(d); return err },
		} {
			err := read(path)
			var me *MissingError
			if !errors.As(err, &me) || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s(%s) = %v, want %q (a *MissingError, fs.ErrNotExist)", name, path, err, want)
			}
		}
	}
}
