// Package datadir does the work of `vomc data`: it builds a data set from
// a configuration and writes it to a directory (with .npy exports on
// request), after checking the directory and the memory estimate
// (MemoryEstimate).
package datadir

import (
	"fmt"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
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
	// Events receives the progress over the trees (task "trees") and the
	// stale temporaries removed next to the outputs as warnings (nil:
	// discarded).
	Events events.Sink
	// MemoryLimit refuses work whose estimated peak memory exceeds it
	// (bytes; 0: no check; sysmem.Limit).
	MemoryLimit int64
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
	ev := events.Or(o.Events)
	if err := fsutil.CheckOutputDir(events.WarnWriter(ev), o.Dir, o.Force, names...); err != nil {
		return nil, err
	}
	pr := cfg.Prior
	if err := sysmem.Limit(fmt.Sprintf("a data set of K=%d trees (A=%d, D=%v) and %d windows of N=%d", cfg.K, pr.A, pr.Depths, cfg.K*cfg.WindowsPerTree(), cfg.N), MemoryEstimate(cfg), o.MemoryLimit); err != nil {
		return nil, err
	}
	ds, err := dataset.Build(cfg, o.Workers, events.ProgressFunc(ev, "trees"))
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
