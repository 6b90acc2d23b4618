package main

import (
	"fmt"
	"os"

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

// checkOutputs is fsutil.CheckOutputs reporting swept temporaries on
// standard error.
func checkOutputs(force bool, paths ...string) error {
	return fsutil.CheckOutputs(os.Stderr, force, paths...)
}

// checkOutputDir is fsutil.CheckOutputDir reporting on standard error.
func checkOutputDir(dir string, force bool, names ...string) error {
	return fsutil.CheckOutputDir(os.Stderr, dir, force, names...)
}
