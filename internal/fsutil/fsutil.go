// Package fsutil writes output files atomically: the content goes to a
// temporary file in the target's directory, is synced, and is renamed over
// the target only when complete, so a crash or an error never leaves a
// half-written file and never destroys what was there before. Temporaries
// are registered while they exist (TrackTemp, CreateTemp, MkdirTemp) so
// that an interrupt removes them (HandleSignals), and carry the process
// id so that a later run removes those of a killed one (SweepStale).
// Directories a failed write created are removed again.
package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned (wrapped) when the target exists and overwriting was
// not allowed.
var ErrExists = errors.New("file exists (use --force to overwrite)")

// CheckNew returns an error wrapping ErrExists when path exists (for
// writers that must not replace it), or the error of looking it up.
func CheckNew(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// WriteFile writes path atomically with the bytes produced by write. An
// existing path is an error wrapping ErrExists unless force is true.
func WriteFile(path string, force bool, write func(w io.Writer) error) (err error) {
	if !force {
		if err := CheckNew(path); err != nil {
			return err
		}
	} else if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		// Renaming over a directory fails, but over a device (e.g.
		// /dev/null) or a socket it would replace it.
		return fmt.Errorf("%s exists and is not a regular file; refusing to replace it", path)
	}
	undo, keep, err := MkdirAll(filepath.Dir(path))
	if err != nil {
		return err
	}
	f, done, err := CreateTemp(path)
	if err != nil {
		undo()
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			undo()
		} else {
			keep()
		}
		done()
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp, 0o644); err != nil {
		return err
	}
	if !force {
		// Link fails if the target appeared meanwhile; rename would not.
		if err = os.Link(tmp, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("%s: %w", path, ErrExists)
			}
			return err
		}
		return os.Remove(tmp)
	}
	return os.Rename(tmp, path)
}

// WriteBytes writes data to path atomically (see WriteFile).
func WriteBytes(path string, force bool, data []byte) error {
	return WriteFile(path, force, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
