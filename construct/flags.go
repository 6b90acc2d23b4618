package construct

import (
	"flag"
	"strconv"
)

// AddFlags defines the flags of 'vomc construct' on fs into o, with their
// defaults (the hard-attention limit, c = inf, for --c).
func (o *CompareOptions) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.A, "A", 3, "alphabet size")
	fs.IntVar(&o.D, "D", 2, "maximum depth D (≥ 1)")
	fs.Float64Var(&o.Lambda, "lambda", 0.15, "stop probability λ in (0,1)")
	fs.Float64Var(&o.Alpha, "alpha", 0.5, "Dirichlet parameter α")
	fs.Var((*temperature)(&o.C), "c", "attention temperature c: inf (exact hard-attention limit; default) or a positive number")
	fs.StringVar(&o.InputName, "input", "0120112", "without --random: input symbols: digits (A ≤ 10) or comma-separated integers")
	fs.IntVar(&o.N, "N", 0, "positional period N (0: the number of positions, len(input)+D+1)")
	fs.BoolVar(&o.Show, "show", false, "print the layout, the layers and every layer's intermediate quantities per position")
	fs.BoolVar(&o.LiteralInduction, "literal", false, "build the induction layers literally as in the paper (inexact; for comparison)")
	fs.StringVar(&o.Weights, "weights", "", "write the attention weights to this safetensors file")
	fs.StringVar(&o.ErrorPlot, "error-plot", "", "write the error-vs-c plot to this file (.png, .svg or .pdf)")
	fs.StringVar(&o.CRange, "c-range", "1,1000", "with --error-plot: temperature range lo,hi of the error-vs-c plot (log-spaced)")
	fs.IntVar(&o.CPoints, "c-points", 25, "with --error-plot: number of temperatures in the error-vs-c plot")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
	fs.StringVar(&o.FF, "ff", "exact", "FF sub-layers: exact (Go functions) or mlp (constructed ReLU networks, --width)")
	fs.IntVar(&o.Width, "width", 0, "with --ff mlp: the widest hidden layer of each FF network")
	fs.StringVar(&o.FFPlot, "ff-plot", "", "write max |P_TF − P_CTW| against the FF width W (ReLU networks, K = 1..--ff-max-k) to this file")
	fs.IntVar(&o.FFMaxK, "ff-max-k", 1024, "with --ff-plot: largest number of segments per smooth function")
	fs.IntVar(&o.Random, "random", 0, "use n i.i.d. uniform random symbols (seed --seed) instead of --input")
	fs.Uint64Var(&o.Seed, "seed", 1, "with --random: seed of the random symbols")
}

// temperature is Config.C as a flag: "inf" (0, the hard-attention limit)
// or a positive number (ParseTemperature).
type temperature float64

func (t *temperature) String() string {
	if *t == 0 {
		return "inf"
	}
	return strconv.FormatFloat(float64(*t), 'g', -1, 64)
}

func (t *temperature) Set(s string) (err error) {
	c, err := ParseTemperature(s)
	*t = temperature(c)
	return err
}
