package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/vomc/vomc/construct"
	"github.com/vomc/vomc/internal/fsutil"
)

func runConstruct(args []string) error {
	return constructCmd(args, os.Stdout)
}

// constructCmd is `vomc construct`, writing its report to w.
func constructCmd(args []string, w io.Writer) error {
	fs := newFlags("construct", "[flags]", `
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
--ff-max-k and draws max |P_TF − P_CTW| against W.`)
	A := fs.Int("A", 3, "alphabet size")
	D := fs.Int("D", 2, "maximum depth D (≥ 1)")
	lambda := fs.Float64("lambda", 0.15, "stop probability λ in (0,1)")
	alpha := fs.Float64("alpha", 0.5, "Dirichlet parameter α")
	cS := fs.String("c", "inf", "attention temperature c: inf (exact hard-attention limit) or a positive number")
	input := fs.String("input", "0120112", "input symbols: digits (A ≤ 10) or comma-separated integers")
	N := fs.Int("N", 0, "positional period N (0: the number of positions, len(input)+D+1)")
	show := fs.Bool("show", false, "print the layout, the layers and every layer's intermediate quantities per position")
	literal := fs.Bool("literal", false, "build the induction layers literally as in the paper (inexact; for comparison)")
	weights := fs.String("weights", "", "write the attention weights to this safetensors file")
	errPlot := fs.String("error-plot", "", "write the error-vs-c plot to this file (.png, .svg or .pdf)")
	cRange := fs.String("c-range", "1,1000", "temperature range lo,hi of the error-vs-c plot (log-spaced)")
	cPoints := fs.Int("c-points", 25, "number of temperatures in the error-vs-c plot")
	force := fs.Bool("force", false, "overwrite existing output files")
	ffMode := fs.String("ff", "exact", "FF sub-layers: exact (Go functions) or mlp (constructed ReLU networks, --width)")
	width := fs.Int("width", 0, "with --ff mlp: the widest hidden layer of each FF network")
	ffPlot := fs.String("ff-plot", "", "write max |P_TF − P_CTW| against the FF width W (ReLU networks, K = 1..--ff-max-k) to this file")
	ffMaxK := fs.Int("ff-max-k", 1024, "largest number of segments per smooth function in --ff-plot")
	random := fs.Int("random", 0, "use n i.i.d. uniform random symbols (seed --seed) instead of --input")
	seed := fs.Uint64("seed", 1, "seed of --random")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := checkOutputs(*force, *weights, *errPlot); err != nil {
		return err
	}
	c := 0.0
	if s := strings.ToLower(*cS); s != "inf" && s != "∞" && s != "+inf" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usagef("--c %q: want inf or a positive number", *cS)
		}
		c = v
	}
	x, err := parseSymbols(*input, *A)
	if err != nil {
		return usageError{err.Error()}
	}
	if *random > 0 {
		r := rand.New(rand.NewPCG(*seed, 0x636f6e73))
		x = make([]byte, *random)
		for i := range x {
			x[i] = byte(r.IntN(*A))
		}
		*input = fmt.Sprintf("random:%d (seed %d)", *random, *seed)
	}
	switch *ffMode {
	case "exact":
		if *width != 0 {
			return usagef("--width is for --ff mlp")
		}
	case "mlp":
		if *width <= 0 {
			return usagef("--ff mlp needs --width W > 0")
		}
	default:
		return usagef("--ff %q: want exact or mlp", *ffMode)
	}
	if *ffMaxK < 1 {
		return usagef("--ff-max-k %d: want ≥ 1", *ffMaxK)
	}
	cfg := construct.Config{A: *A, D: *D, Lambda: *lambda, Alpha: *alpha, C: c, N: *N, LiteralInduction: *literal}
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if cfg.N == 0 {
		cfg.N = len(x) + cfg.D + 1
	}
	con, err := construct.Build(cfg)
	if err != nil {
		return err
	}
	if *ffMode == "mlp" {
		nets, K, err := con.UseMLPWidth(*width)
		if err != nil {
			return usageError{err.Error()}
		}
		fmt.Fprintf(w, "FF sub-layers: ReLU networks, K=%d segments per smooth function, widest hidden layer %d ≤ %d, %d hidden units in all\n", K, nets.Width(), *width, nets.Units())
	}
	tr, err := con.Run(x, *show)
	if err != nil {
		return err
	}
	if *show {
		if err := con.WriteSummary(w); err != nil {
			return err
		}
		if err := con.WriteTrace(w, x, tr); err != nil {
			return err
		}
		fmt.Fprintln(w)
	} else {
		temp := "∞"
		if !cfg.Hard() {
			temp = strconv.FormatFloat(c, 'g', -1, 64)
		}
		fmt.Fprintf(w, "TF-construct A=%d D=%d λ=%g α=%g c=%s N=%d: %d layers, E=%d, input %s\n",
			cfg.A, cfg.D, cfg.Lambda, cfg.Alpha, temp, cfg.N, len(con.TF.Layers), con.Layout.E, *input)
	}
	ref, err := construct.CTWDist(cfg, x)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%4s  %-28s  %-28s  %s\n", "j", "P_TF(x_{j+1} | x_1^j)", "P_CTW", "max|diff|")
	worst := 0.0
	for j := range tr.Dist {
		e := 0.0
		for a := range ref[j] {
			e = math.Max(e, math.Abs(tr.Dist[j][a]-ref[j][a]))
		}
		worst = math.Max(worst, e)
		fmt.Fprintf(w, "%4d  %-28s  %-28s  %.3g\n", j, fmtProbs(tr.Dist[j]), fmtProbs(ref[j]), e)
	}
	fmt.Fprintf(w, "max |P_TF − P_CTW| over all %d positions: %.3g\n", len(tr.Dist), worst)

	if *weights != "" {
		if err := fsutil.WriteFile(*weights, *force, con.WriteSafetensors); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%d tensors)\n", *weights, len(con.Tensors()))
	}
	if *ffPlot != "" {
		s, err := construct.FFSweep(cfg, x, *ffMaxK)
		if err != nil {
			return err
		}
		s.Label = fmt.Sprintf("A=%d D=%d N=%d", cfg.A, cfg.D, cfg.N)
		fmt.Fprintf(w, "error vs FF width (ReLU networks):\n  %6s %8s  %s\n", "K", "W", "max|P_TF − P_CTW|")
		for k := range s.K {
			fmt.Fprintf(w, "  %6d %8.0f  %.3g\n", s.K[k], s.W[k], s.Err[k])
		}
		title := fmt.Sprintf("TF-construct with ReLU FF layers vs CTW: A=%d D=%d N=%d, input %s", cfg.A, cfg.D, cfg.N, *input)
		if err := construct.WriteFFWidthPlot(*ffPlot, *force, title, []construct.FFSeries{s}, false); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", *ffPlot)
	}
	if *errPlot != "" {
		lo, hi, err := parseRange(*cRange)
		if err != nil {
			return usageError{err.Error()}
		}
		if *cPoints < 2 {
			return usagef("--c-points %d: want at least 2", *cPoints)
		}
		cs := construct.LogSpace(lo, hi, *cPoints)
		errs, err := construct.ErrorVsC(cfg, x, cs)
		if err != nil {
			return err
		}
		hcfg := cfg
		hcfg.C = 0
		hard, err := construct.MaxError(hcfg, x)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "error vs c (N=%d):\n", cfg.N)
		for k := range cs {
			fmt.Fprintf(w, "  c=%-10.4g max|P_TF − P_CTW| = %.3g\n", cs[k], errs[k])
		}
		fmt.Fprintf(w, "  c=∞          max|P_TF − P_CTW| = %.3g\n", hard)
		title := fmt.Sprintf("TF-construct vs CTW: A=%d D=%d, input %s (N=%d)", cfg.A, cfg.D, *input, cfg.N)
		if err := construct.WriteErrorPlot(*errPlot, *force, title, cs, errs, hard); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s\n", *errPlot)
	}
	return nil
}

// parseSymbols reads "0120112" (digits, A ≤ 10) or "0,1,12,3".
func parseSymbols(s string, A int) ([]byte, error) {
	s = strings.TrimSpace(s)
	var fields []string
	if strings.ContainsAny(s, ", ") {
		fields = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	} else {
		for _, r := range s {
			fields = append(fields, string(r))
		}
	}
	x := make([]byte, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v >= A {
			return nil, fmt.Errorf("input symbol %q is not in 0..%d", f, A-1)
		}
		x = append(x, byte(v))
	}
	return x, nil
}

// parseRange reads "lo,hi" with 0 < lo < hi < ∞.
func parseRange(s string) (float64, float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) == 2 {
		lo, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
		hi, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
		if err1 == nil && err2 == nil && lo > 0 && hi > lo && !math.IsInf(hi, 0) {
			return lo, hi, nil
		}
	}
	return 0, 0, fmt.Errorf("--c-range %q: want lo,hi with 0 < lo < hi", s)
}

func fmtProbs(p []float64) string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = strconv.FormatFloat(v, 'f', 5, 64)
	}
	return strings.Join(parts, " ")
}
