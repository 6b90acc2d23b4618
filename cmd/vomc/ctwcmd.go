package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/memest"
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
	x, al, err := symbols.ReadFile(fs.Arg(0), m, *alphabet)
	if err != nil {
		return err
	}
	init, err := ctw.ParseInit(*initS)
	if err != nil {
		return usageError{err.Error()}
	}
	A := al.Size()
	lambda, err := parseLambda(*lam, A)
	if err != nil {
		return err
	}
	cfg := ctw.Config{A: A, D: *D, Lambda: lambda, Alpha: *alpha, Init: init}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := ctw.CheckMemory(cfg, int64(len(x))); err != nil {
		return err
	}
	if err := checkMemory(fmt.Sprintf("CTW with A=%d, D=%d on %d symbols", A, *D, len(x)), memest.CTW(cfg, x, 0)); err != nil {
		return err
	}
	if err := checkOutputs(*force, *mapOut, *weights, *preds); err != nil {
		return err
	}
	if *mapOut != "" && !draw.KnownFormat(*mapOut) {
		return usagef("--map %s: unknown tree format (use %s)", *mapOut, draw.Formats)
	}
	// One counting pass serves the log marginal likelihood and the MAP
	// tree; the shorter convention has no batch recursion.
	var counts *ctw.Counts
	var ml float64
	if init == ctw.Shorter {
		ml, err = ctw.LogMarginalLikelihood(cfg, x)
	} else if counts, err = ctw.CountSequence(cfg, x); err == nil {
		ml = counts.LogML()
	}
	if err != nil {
		return err
	}
	counted := len(x)
	if init == ctw.Condition {
		counted = max(0, len(x)-*D)
	}
	fmt.Printf("file %s: %d symbols, alphabet %v, A=%d\n", fs.Arg(0), len(x), al, A)
	fmt.Printf("CTW D=%d λ=%g α=%g init=%v\n", *D, lambda, *alpha, init)
	fmt.Printf("ln P(x) = %.6f nats = %.6f bits", ml, ml/math.Ln2)
	if counted > 0 {
		fmt.Printf(" (%.6f bits/symbol over %d predicted symbols)", -ml/math.Ln2/float64(counted), counted)
	}
	fmt.Println()
	if counts != nil {
		// The MAP tree's internal nodes have all A children, each leaf A
		// probabilities: size it before building it.
		nodes := counts.MAPNodes()
		if err := checkMemory(fmt.Sprintf("the MAP tree (%d nodes)", nodes), memest.CTW(cfg, x, nodes)); err != nil {
			return err
		}
		mp := counts.MAPTree()
		fmt.Printf("MAP tree: %d leaves, depth %d, posterior probability %.4g\n", mp.Tree.NumLeaves(), mp.Tree.Depth(), math.Exp(mp.LogPosterior))
		leaves := mp.Tree.Leaves()
		for i, lf := range leaves {
			if i == maxPrintedLeaves {
				fmt.Printf("  … %d more leaves (write them all with --map FILE.json)\n", len(leaves)-i)
				break
			}
			fmt.Printf("  leaf %-12s p = %s\n", suffixString(lf.Suffix, al), probString(lf.P))
		}
		if *mapOut != "" {
			if err := writeTree(mp.Tree, *mapOut, *force); err != nil {
				return err
			}
			fmt.Printf("wrote %s\n", *mapOut)
		}
	}
	if *weights != "" || *preds != "" {
		if err := writeCTWTrace(cfg, x, *weights, *preds, *force); err != nil {
			return err
		}
	}
	return nil
}

// maxPrintedLeaves bounds the MAP leaves printed on the terminal.
const maxPrintedLeaves = 40

// parseLambda reads λ, where "auto" is the BCT default 1 − 2^{−(A−1)} for
// A ≤ 16 and 1/2 (classic CTW) for larger alphabets, where the BCT value
// rounds to 1.
func parseLambda(s string, A int) (float64, error) {
	if s == "auto" {
		if A > 16 {
			return 0.5, nil
		}
		return 1 - math.Pow(2, -float64(A-1)), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, usagef("--lambda %q is not a number or auto", s)
	}
	return v, nil
}

func suffixString(s []byte, al symbols.Alphabet) string {
	if len(s) == 0 {
		return "()"
	}
	if al.Chars == nil {
		return fmt.Sprint(s)
	}
	return string(al.Format(s))
}

func probString(p []float64) string {
	s := "["
	for i, v := range p {
		if i > 0 {
			s += " "
		}
		s += strconv.FormatFloat(v, 'f', 3, 64)
	}
	return s + "]"
}

// writeCTWTrace writes ω_{n,l} to wPath and/or the predictive
// distributions to pPath at every position as CSV
// (ctw.WriteWeightsCSV, ctw.WritePredictionsCSV).
func writeCTWTrace(cfg ctw.Config, x []byte, wPath, pPath string, force bool) error {
	for _, f := range []struct {
		path  string
		write func(io.Writer, ctw.Config, []byte) error
	}{{wPath, ctw.WriteWeightsCSV}, {pPath, ctw.WritePredictionsCSV}} {
		if f.path == "" {
			continue
		}
		if err := fsutil.WriteFile(f.path, force, func(w io.Writer) error { return f.write(w, cfg, x) }); err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "wrote %s\n", f.path)
	}
	return nil
}
