package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
)

// defaultMaxMemMB is decompress's default --max-mem: the model memory it
// accepts from an untrusted header without being asked (compress's
// default --mem is 256).
const defaultMaxMemMB = 1024

// memAvailable is sysmem.Available, replaceable by tests.
var memAvailable = sysmem.Available

// availableMiB returns the available memory in MiB, 0 when unknown.
func availableMiB() int64 { return memAvailable() >> 20 }

// checkMemory refuses work whose estimated peak memory est (bytes) exceeds
// the available memory, naming what needs it and both numbers.
func checkMemory(what string, est int64) error {
	avail := memAvailable()
	if avail > 0 && est > avail {
		return fmt.Errorf("%s needs about %s of memory (estimate), but only %s is available", what, fmtBytes(est), fmtBytes(avail))
	}
	return nil
}

func fmtBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", (b+1023)>>10)
}

// openInput opens a file given as input, saying so plainly when it is a
// directory or otherwise not a regular file.
func openInput(path string) (*os.File, error) {
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

// checkOutputs checks, before any work is done, that every output file can
// be written: it must not exist (unless force; and then it must not be a
// directory), and its nearest existing ancestor must be a directory. It
// also removes the temporaries that killed runs left next to the outputs
// (fsutil.SweepStale) and says so on standard error.
func checkOutputs(force bool, paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		info, err := os.Lstat(p)
		switch {
		case err == nil && !force:
			return fmt.Errorf("%s: %w", p, fsutil.ErrExists)
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
		sweep(filepath.Dir(p))
	}
	return nil
}

// checkOutputDir is checkOutputs for an output directory: it may exist
// only as a directory, and its files (names) must not exist unless force.
func checkOutputDir(dir string, force bool, names ...string) error {
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
	sweep(filepath.Dir(filepath.Clean(dir)))
	var files []string
	for _, n := range names {
		files = append(files, filepath.Join(dir, n))
	}
	return checkOutputs(force, files...)
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

// sweep removes the stale temporaries of killed runs in dir, reporting
// them.
func sweep(dir string) {
	removed, err := fsutil.SweepStale(dir)
	for _, r := range removed {
		fmt.Fprintf(os.Stderr, "vomc: removed %s, a temporary left by an interrupted run\n", r)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vomc: %v\n", err)
	}
}
