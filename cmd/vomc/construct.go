package main

import (
	"io"
	"os"

	"github.com/vomc/vomc/construct"
)

const constructHelp = `
Builds the paper's (D+2)-layer transformer construction of CTW (Section 4.4,
Theorems 3–5, Appendix "Construction of Transformer for CTW") for the prior
(A, D, λ, α), runs it on a short input and prints its predictions next to
CTW's (Pad convention: D zeros precede the input). --show prints every
layer's intermediate quantities by named embedding block (copied suffix, g,
g←, recovered counts, p, ℓ^e, ℓ^w of path nodes and siblings with the
positions they were copied from, δ, ω). --weights writes the attention
matrices (safetensors, F64); --error-plot draws the maximal deviation from
CTW against the temperature c over --c-range.

The construction departs from the paper where the paper's layers are not
exact (see 'go doc github.com/vomc/vomc/construct'). --literal keys the
induction heads as the paper writes them (on the suffix s_{u,dc} ending at
u, copying ℓ^w of u's own path node computed at u, without the added
context-chain heads) to show that lookup's error; it keeps this
implementation's index repairs (the BOS sink for never-seen nodes, match
weight 4 instead of c·I, the padding positions for the dummy context and
the total count i−D), so it is "index-corrected", not the paper verbatim.

FF layers: the paper only says they are "sufficiently wide". --ff exact
(default) computes each FF as the exact function; --ff mlp --width W
replaces every FF sub-layer by a constructed ReLU network whose widest
hidden layer has at most W units (exact integer count machinery plus
piecewise-linear exp and log-add-exp with K segments, K as large as W
allows; see construct/mlp.go). --ff-plot FILE sweeps K = 1, 2, 4, …,
--ff-max-k and draws max |P_TF − P_CTW| against W.`

func runConstruct(args []string) error {
	return constructCmd(args, os.Stdout)
}

// constructCmd is 'vomc construct', writing its report to w.
func constructCmd(args []string, w io.Writer) error {
	fs := newFlags("construct", "[flags]", constructHelp)
	var o construct.CompareOptions
	fs.IntVar(&o.A, "A", 3, "alphabet size")
	fs.IntVar(&o.D, "D", 2, "maximum depth D (≥ 1)")
	fs.Float64Var(&o.Lambda, "lambda", 0.15, "stop probability λ in (0,1)")
	fs.Float64Var(&o.Alpha, "alpha", 0.5, "Dirichlet parameter α")
	cS := fs.String("c", "inf", "attention temperature c: inf (exact hard-attention limit) or a positive number")
	fs.StringVar(&o.InputName, "input", "0120112", "input symbols: digits (A ≤ 10) or comma-separated integers")
	fs.IntVar(&o.N, "N", 0, "positional period N (0: the number of positions, len(input)+D+1)")
	fs.BoolVar(&o.Show, "show", false, "print the layout, the layers and every layer's intermediate quantities per position")
	fs.BoolVar(&o.LiteralInduction, "literal", false, "build the induction layers literally as in the paper (inexact; for comparison)")
	fs.StringVar(&o.Weights, "weights", "", "write the attention weights to this safetensors file")
	fs.StringVar(&o.ErrorPlot, "error-plot", "", "write the error-vs-c plot to this file (.png, .svg or .pdf)")
	fs.StringVar(&o.CRange, "c-range", "1,1000", "temperature range lo,hi of the error-vs-c plot (log-spaced)")
	fs.IntVar(&o.CPoints, "c-points", 25, "number of temperatures in the error-vs-c plot")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
	fs.StringVar(&o.FF, "ff", "exact", "FF sub-layers: exact (Go functions) or mlp (constructed ReLU networks, --width)")
	fs.IntVar(&o.Width, "width", 0, "with --ff mlp: the widest hidden layer of each FF network")
	fs.StringVar(&o.FFPlot, "ff-plot", "", "write max |P_TF − P_CTW| against the FF width W (ReLU networks, K = 1..--ff-max-k) to this file")
	fs.IntVar(&o.FFMaxK, "ff-max-k", 1024, "largest number of segments per smooth function in --ff-plot")
	fs.IntVar(&o.Random, "random", 0, "use n i.i.d. uniform random symbols (seed --seed) instead of --input")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of --random")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := checkOutputs(o.Force, o.Weights, o.ErrorPlot); err != nil {
		return err
	}
	var err error
	if o.C, err = construct.ParseTemperature(*cS); err != nil {
		return usagef("--c %q: want inf or a positive number", *cS)
	}
	if o.Input, err = construct.ParseSymbols(o.InputName, o.A); err != nil {
		return usageError{err.Error()}
	}
	return flagError(construct.Compare(w, o))
}
