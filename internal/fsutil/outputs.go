package fsutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckOutputs checks, before any work is done, that every output file can
// be written: it must not exist (unless force; and then it must not be a
// directory nor another non-regular file), and its nearest existing
// ancestor must be a directory. Empty paths are skipped. It also removes
// the temporaries that killed runs left next to the outputs (SweepStale)
// and reports each on log (nil: not reported).
func CheckOutputs(log io.Writer, force bool, paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		info, err := os.Lstat(p)
		switch {
		case err == nil && !force:
			return fmt.Errorf("%s: %w", p, ErrExists)
		case err == nil && info.IsDir():
			return fmt.Errorf("%s is a directory; the output must be a file", p)
		case err == nil && !info.Mode().IsRegular():
			return fmt.Errorf("%s exists and is not a regular file; refusing to replace it", p)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := checkParent(p); err != nil {
			return err
		}
		sweepReport(log, filepath.Dir(p))
	}
	return nil
}

// CheckOutputDir is CheckOutputs for an output directory: dir may exist
// only as a directory, and its files names must not exist unless force.
func CheckOutputDir(log io.Writer, dir string, force bool, names ...string) error {
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := checkParent(filepath.Join(dir, "x")); err != nil {
		return err
	}
	sweepReport(log, filepath.Dir(filepath.Clean(dir)))
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(dir, n)
	}
	return CheckOutputs(log, force, files...)
}

// checkParent checks that the nearest existing ancestor of p is a
// directory (so that the missing ones can be created).
func checkParent(p string) error {
	for d := filepath.Dir(filepath.Clean(p)); ; d = filepath.Dir(d) {
		info, err := os.Stat(d)
		if err == nil {
			if !info.IsDir() {
				return fmt.Errorf("cannot write %s: %s is not a directory", p, d)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// sweepReport removes the stale temporaries of killed runs in dir
// (SweepStale) and reports them, and a failure to remove one, on log.
func sweepReport(log io.Writer, dir string) {
	removed, err := SweepStale(dir)
	if log == nil {
		return
	}
	for _, r := range removed {
		fmt.Fprintf(log, "vomc: removed %s, a temporary left by an interrupted run\n", r)
	}
	if err != nil {
		fmt.Fprintf(log, "vomc: %v\n", err)
	}
}

// OpenInput opens a file given as input, saying so plainly when it is a
// directory or otherwise not a regular file.
func OpenInput(path string) (*os.File, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return os.Open(path)
}
