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
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrExists is returned (wrapped) when the target exists and overwriting was
// not allowed.
var ErrExists = errors.New("file exists")

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

// WriteFile writes path atomically with the bytes produced by write (see
// WriteAtomic), creating its directory if needed (and removing the
// directories it created if the write fails). An existing path is an error
// wrapping ErrExists unless force is true.
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
	if err := WriteAtomic(path, force, write); err != nil {
		undo()
		return err
	}
	keep()
	return nil
}

// WriteBytes writes data to path atomically (see WriteFile).
func WriteBytes(path string, force bool, data []byte) error {
	return WriteFile(path, force, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ReadSized opens the file at path and calls read with a buffered reader
// of its contents and its size in bytes (for readers that check a header
// against the size before allocating anything); an error from read is
// prefixed with path.
func ReadSized[T any](path string, read func(r io.Reader, size int64) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return zero, err
	}
	v, err := read(bufio.NewReaderSize(f, 1<<20), st.Size())
	if err != nil {
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
