// Package datadir does the work of `vomc data`: it builds a data set from
// a configuration and writes it to a directory (with .npy exports on
// request), after checking the directory and the memory estimate
// (MemoryEstimate).
package datadir

import (
	"fmt"
	"io"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/internal/sysmem"
)

// NPYFiles are the files Options.NPY adds (dataset.Dataset.ExportNPY).
var NPYFiles = []string{"symbols.npy", "tree_of.npy"}

// Options say where and how Make writes the data set.
type Options struct {
	Dir     string
	Workers int
	NPY     bool // also write NPYFiles
	// Force replaces an existing non-empty directory; without it the
	// data set's files must not exist.
	Force bool
	// Warn receives the stale temporaries removed next to the outputs,
	// Progress a progress bar over the trees (nil: discarded).
	Warn, Progress io.Writer
	// Memory, if set, refuses work whose estimated peak memory (bytes)
	// exceeds what is available; what names the work.
	Memory func(what string, est int64) error
}

// MemoryEstimate estimates the peak memory of Make on cfg: the process
// itself (sysmem.Base) and building and writing the data set
// (dataset.Config.BuildMemoryEstimate).
func MemoryEstimate(cfg dataset.Config) int64 {
	return sysmem.Base + cfg.BuildMemoryEstimate()
}

// Make validates cfg, checks the directory and the memory estimate
// (MemoryEstimate), builds the data set (dataset.Build) and writes it to
// o.Dir (and the .npy files with o.NPY).
func Make(cfg dataset.Config, o Options) (*dataset.Dataset, error) {
	if err := cfg.Prior.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	names := []string{dataset.ManifestFile, dataset.SymbolsFile, dataset.TreeOfFile}
	if o.NPY {
		names = append(names, NPYFiles...)
	}
	if o.Force {
		names = nil // only the directory itself is checked
	}
	if err := fsutil.CheckOutputDir(o.Warn, o.Dir, o.Force, names...); err != nil {
		return nil, err
	}
	pr := cfg.Prior
	if o.Memory != nil {
		if err := o.Memory(fmt.Sprintf("a data set of K=%d trees (A=%d, D=%v) and %d windows of N=%d", cfg.K, pr.A, pr.Depths, cfg.K*cfg.WindowsPerTree(), cfg.N), MemoryEstimate(cfg)); err != nil {
			return nil, err
		}
	}
	bar := progress.New(o.Progress, "trees", cfg.K).DelayStart(2 * time.Second)
	ds, err := dataset.Build(cfg, o.Workers, bar.Update)
	bar.Done()
	if err != nil {
		return nil, err
	}
	if err := ds.Write(o.Dir, o.Force); err != nil {
		return nil, err
	}
	if o.NPY {
		if err := ds.ExportNPY(o.Dir); err != nil {
			return nil, err
		}
	}
	return ds, nil
}
