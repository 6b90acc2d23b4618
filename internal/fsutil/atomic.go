package fsutil

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// The one atomic file writer of vomc. Every writer of a whole file —
// WriteFile and WriteBytes here, plot's figures, dataset's .npy copies,
// transformer's checkpoints and model files — goes through WriteAtomic, so
// all have the same guarantees: the content goes to a temporary in the
// target's directory (named by TempPattern and registered, so an interrupt
// removes it and SweepStale finds it after a kill), the temporary is made
// 0644 and synced, it is renamed over the target (or, without overwriting,
// linked to it, which fails if the target exists), and the directory is
// synced so that the new name survives a crash. On any error the temporary
// is removed and the target is untouched. transformer, plot and dataset
// import fsutil (it imports no other vomc package), so no lower-level
// package is needed.

// syncDirHook syncs a directory after a rename; tests replace it to see
// that it is called (and to make it fail).
var syncDirHook = SyncDir

// SyncDir fsyncs dir, so that renames and links in it are durable. Some systems cannot sync a directory (EINVAL); the
// file itself was synced, so that is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}

// WriteAtomic writes path with the bytes produced by write (buffered) as
// described above: temporary in path's directory, fsync, rename (overwrite
// true) or link (overwrite false: an existing target is an error wrapping
// ErrExists, also when it appears during the write), fsync of the
// directory. The directory must exist (WriteFile creates it).
func WriteAtomic(path string, overwrite bool, write func(w io.Writer) error) (err error) {
	f, done, err := CreateTemp(path)
	if err != nil {
		return err
	}
	defer done()
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if overwrite {
		err = os.Rename(tmp, path)
	} else if err = os.Link(tmp, path); err == nil {
		err = os.Remove(tmp)
	} else if errors.Is(err, fs.ErrExist) {
		err = fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err != nil {
		return err
	}
	return syncDirHook(filepath.Dir(path))
}
