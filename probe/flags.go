package probe

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Flags are the flags of 'vomc probe': Options but the backend, the
// events and the memory limit, which the command decides.
type Flags struct {
	o     Options
	bands string
}

// AddFlags defines the flags of 'vomc probe' on fs.
func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	o := &f.o
	fs.StringVar(&o.Model, "model", "", "a run directory of 'vomc train' (either engine) or 'vomc synth', or its model.safetensors")
	fs.StringVar(&o.Data, "data", "", "data set (from 'vomc data'): its windows are probed and its prior defines the targets")
	fs.StringVar(&o.Out, "out", "", "output directory (probe.json, probe.csv, probe.png)")
	fs.IntVar(&o.Train, "train", 400, "training windows (whole trees of --data)")
	fs.IntVar(&o.Val, "val", 100, "validation windows, on which each probe's penalty is chosen")
	fs.IntVar(&o.Test, "test", 200, "test windows, on which the scores and their intervals are computed")
	fs.IntVar(&o.Positions, "positions", 64, "positions probed per window, drawn at random (-1: every position)")
	fs.StringVar(&f.bands, "bands", "16,64,256", "upper edges of the position bands (0-based positions), comma-separated")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the splits, positions, shuffled targets and bootstrap")
	fs.Uint64Var(&o.InitSeed, "init-seed", 1, "seed of the control model's initial parameters (same architecture)")
	fs.IntVar(&o.Bootstrap, "bootstrap", 500, "resamples of the test windows behind each 95% interval")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines computing the targets (0: all cores); the results do not depend on it")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing outputs")
	return f
}

// Options returns the options the flags give; an error names the flag.
func (f *Flags) Options() (Options, error) {
	o := f.o
	if o.Out == "" {
		return o, fmt.Errorf("--out DIR is required")
	}
	o.Bands = []int{}
	for _, s := range strings.Split(f.bands, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return o, fmt.Errorf("--bands %q: %q is not a position", f.bands, s)
		}
		o.Bands = append(o.Bands, v)
	}
	return o, nil
}
