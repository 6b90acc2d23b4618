package main

import (
	"os"
	"strconv"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/ctw/ctwfile"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/source/draw"
)

func runCTW(args []string) error {
	fs := newFlags("ctw", "[flags] FILE", `
Runs CTW on a symbol file (text: one character per symbol, whitespace
ignored; or --mode raw: bytes, A=256) and prints the log marginal likelihood
ln P(x) (nats and bits) and the MAP context tree. Optionally writes the MAP
tree (JSON, SVG, PNG, DOT), the posterior weights ω_{n,l} over context
lengths l = 0..D at every position (CSV), and the predictive distributions.

Defaults follow the R package BCT for real data: λ = 1 − 2^{−(A−1)}
(--lambda auto; 1/2 when A > 16), α = 1/2, and the first D symbols only as
initial context (--init condition).`)
	mode := fs.String("mode", "text", "file mode: text or raw")
	alphabet := fs.String("alphabet", "", "text alphabet in symbol order (default: the characters present, sorted)")
	D := fs.Int("D", 5, "maximum depth (order) D")
	lam := fs.String("lambda", "auto", "stop probability λ in (0,1), or auto = 1−2^{−(A−1)} (1/2 for A > 16)")
	alpha := fs.Float64("alpha", 0.5, "Dirichlet parameter α of the leaves")
	initS := fs.String("init", "condition", "initial context: pad (D zeros precede x), condition (first D symbols are context), shorter")
	mapOut := fs.String("map", "", "write the MAP tree to this file (.json, .svg, .png or .dot)")
	weights := fs.String("weights", "", "write ω_{n,l} at every position to this CSV file")
	preds := fs.String("predictions", "", "write the predictive distribution at every position to this CSV file")
	force := fs.Bool("force", false, "overwrite existing output files")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one FILE, got %d arguments", fs.NArg())
	}
	m, err := symbols.ParseMode(*mode)
	if err != nil {
		return usageError{err.Error()}
	}
	init, err := ctw.ParseInit(*initS)
	if err != nil {
		return usageError{err.Error()}
	}
	o := ctwfile.Options{File: fs.Arg(0), Mode: m, Alphabet: *alphabet, D: *D, AutoLambda: *lam == "auto", Alpha: *alpha, Init: init,
		Map: *mapOut, Weights: *weights, Predictions: *preds, Force: *force, Log: os.Stdout, Warn: os.Stderr, Memory: checkMemory}
	if !o.AutoLambda {
		if o.Lambda, err = strconv.ParseFloat(*lam, 64); err != nil {
			return usagef("--lambda %q is not a number or auto", *lam)
		}
	}
	if *mapOut != "" && !draw.KnownFormat(*mapOut) {
		return usagef("--map %s: unknown tree format (use %s)", *mapOut, draw.Formats)
	}
	_, err = ctwfile.Run(o)
	return err
}
