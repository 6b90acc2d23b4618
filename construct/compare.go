package construct

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
)

// CompareOptions are the options of Compare.
type CompareOptions struct {
	// Config is the prior, the temperature and the positional period
	// (N = 0: the number of positions, len(Input)+D+1).
	Config
	// Input is the input sequence, named InputName in the report. With
	// Random > 0 it is replaced by Random i.i.d. uniform symbols drawn
	// with seed Seed (named "random:Random (seed Seed)").
	Input     []byte
	InputName string
	Random    int
	Seed      uint64
	// Show writes the layout, the layers and every layer's intermediate
	// quantities per position (WriteSummary, WriteTrace) instead of the
	// one-line summary.
	Show bool
	// FF selects the FF sub-layers: "exact" the exact functions, "mlp"
	// ReLU networks whose widest hidden layer has at most Width (> 0; 0
	// with exact) units (UseMLPWidth).
	FF    string
	Width int
	// Weights, when not empty, is the safetensors file of the attention
	// weights (WriteSafetensors).
	Weights string
	// FFPlot, when not empty, is the plot of the error against the FF
	// width for K = 1, 2, 4, …, FFMaxK segments (FFSweep; FFMaxK ≥ 1).
	FFPlot string
	FFMaxK int
	// ErrorPlot, when not empty, is the plot of the error against the
	// temperature c at CPoints (≥ 2) log-spaced temperatures in CRange,
	// "lo,hi" with 0 < lo < hi < ∞ (ErrorVsC).
	ErrorPlot string
	CRange    string
	CPoints   int
	// Force lets existing output files be replaced.
	Force bool
}

// Compare builds the construction of o.Config, runs it on the input and
// writes to w its predictions next to CTW's with the largest deviation;
// then it writes the files o asks for (weights, FF-width plot, error
// plot) and their tables. Errors in the options are *OptionError.
func Compare(w io.Writer, o CompareOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	cfg := o.Config
	x, name := o.Input, o.InputName
	if o.Random > 0 {
		r := rand.New(rand.NewPCG(o.Seed, 0x636f6e73))
		x = make([]byte, o.Random)
		for i := range x {
			x[i] = byte(r.IntN(o.A))
		}
		name = fmt.Sprintf("random:%d (seed %d)", o.Random, o.Seed)
	}
	if cfg.N == 0 {
		cfg.N = len(x) + cfg.D + 1
	}
	con, err := Build(cfg)
	if err != nil {
		return err
	}
	if err := con.compareTable(w, x, name, o.Width, o.Show); err != nil {
		return err
	}
	if o.Weights != "" {
		if err := fsutil.WriteFile(o.Weights, o.Force, con.WriteSafetensors); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s (%d tensors)\n", o.Weights, len(con.Tensors()))
	}
	if o.FFPlot != "" {
		if err := ffWidthReport(w, cfg, x, name, o); err != nil {
			return err
		}
	}
	if o.ErrorPlot != "" {
		return errorReport(w, cfg, x, name, o)
	}
	return nil
}

// validate checks the options that need no construction.
func (o *CompareOptions) validate() error {
	switch {
	case o.FF == "exact" && o.Width != 0:
		return optErr("%s is for %s mlp", "Width FF")
	case o.FF == "mlp" && o.Width <= 0:
		return optErr("%s mlp needs %s W > 0", "FF Width")
	case o.FF != "exact" && o.FF != "mlp":
		return optErr("%s %q: want exact or mlp", "FF", o.FF)
	case o.FFMaxK < 1:
		return optErr("%s %d: want ≥ 1", "FFMaxK", o.FFMaxK)
	}
	if err := o.Config.Validate(); err != nil {
		return optErr("%s", "", err.Error())
	}
	return nil
}

// compareTable writes the header (or, with show, the summary and trace)
// and the table of P_TF against P_CTW at every position j of x, with
// ReLU FF networks of at most width units when width > 0.
func (c *Construction) compareTable(w io.Writer, x []byte, name string, width int, show bool) error {
	cfg := c.Config
	if width > 0 {
		nets, K, err := c.UseMLPWidth(width)
		if err != nil {
			return optErr("%s", "", err.Error())
		}
		fmt.Fprintf(w, "FF sub-layers: ReLU networks, K=%d segments per smooth function, widest hidden layer %d ≤ %d, %d hidden units in all\n", K, nets.Width(), width, nets.Units())
	}
	tr, err := c.Run(x, show)
	if err != nil {
		return err
	}
	if show {
		if err := c.WriteSummary(w); err != nil {
			return err
		}
		if err := c.WriteTrace(w, x, tr); err != nil {
			return err
		}
		fmt.Fprintln(w)
	} else {
		temp := "∞"
		if !cfg.Hard() {
			temp = strconv.FormatFloat(cfg.C, 'g', -1, 64)
		}
		fmt.Fprintf(w, "TF-construct A=%d D=%d λ=%g α=%g c=%s N=%d: %d layers, E=%d, input %s\n",
			cfg.A, cfg.D, cfg.Lambda, cfg.Alpha, temp, cfg.N, len(c.TF.Layers), c.Layout.E, name)
	}
	ref, err := CTWDist(cfg, x)
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
	return nil
}

// fmtProbs formats a distribution with five decimals, separated by
// spaces.
func fmtProbs(p []float64) string {
	parts := make([]string, len(p))
	for i, v := range p {
		parts[i] = strconv.FormatFloat(v, 'f', 5, 64)
	}
	return strings.Join(parts, " ")
}

// ffWidthReport writes the table of the error against the FF width
// (FFSweep up to o.FFMaxK segments) to w and its plot to o.FFPlot.
func ffWidthReport(w io.Writer, cfg Config, x []byte, name string, o CompareOptions) error {
	s, err := FFSweep(cfg, x, o.FFMaxK)
	if err != nil {
		return err
	}
	s.Label = fmt.Sprintf("A=%d D=%d N=%d", cfg.A, cfg.D, cfg.N)
	fmt.Fprintf(w, "error vs FF width (ReLU networks):\n  %6s %8s  %s\n", "K", "W", "max|P_TF − P_CTW|")
	for k := range s.K {
		fmt.Fprintf(w, "  %6d %8.0f  %.3g\n", s.K[k], s.W[k], s.Err[k])
	}
	title := fmt.Sprintf("TF-construct with ReLU FF layers vs CTW: A=%d D=%d N=%d, input %s", cfg.A, cfg.D, cfg.N, name)
	if err := WriteFFWidthPlot(o.FFPlot, o.Force, title, []FFSeries{s}, false); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", o.FFPlot)
	return nil
}

// errorReport writes the table of the error against the temperature c
// (o.CPoints values log-spaced in o.CRange, then c = ∞) to w and its plot
// to o.ErrorPlot.
func errorReport(w io.Writer, cfg Config, x []byte, name string, o CompareOptions) error {
	lo, hi, err := ParseRange(o.CRange)
	if err != nil {
		return optErr("%s %q: want lo,hi with 0 < lo < hi", "CRange", o.CRange)
	}
	if o.CPoints < 2 {
		return optErr("%s %d: want at least 2", "CPoints", o.CPoints)
	}
	cs := LogSpace(lo, hi, o.CPoints)
	errs, err := ErrorVsC(cfg, x, cs)
	if err != nil {
		return err
	}
	hcfg := cfg
	hcfg.C = 0
	hard, err := MaxError(hcfg, x)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "error vs c (N=%d):\n", cfg.N)
	for k := range cs {
		fmt.Fprintf(w, "  c=%-10.4g max|P_TF − P_CTW| = %.3g\n", cs[k], errs[k])
	}
	fmt.Fprintf(w, "  c=∞          max|P_TF − P_CTW| = %.3g\n", hard)
	title := fmt.Sprintf("TF-construct vs CTW: A=%d D=%d, input %s (N=%d)", cfg.A, cfg.D, name, cfg.N)
	if err := WriteErrorPlot(o.ErrorPlot, o.Force, title, cs, errs, hard); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s\n", o.ErrorPlot)
	return nil
}

// ParseRange reads "lo,hi" with 0 < lo < hi < ∞.
func ParseRange(s string) (lo, hi float64, err error) {
	parts := strings.Split(s, ",")
	if len(parts) == 2 {
		lo, err1 := strconv.ParseFloat(strings.TrimSpace(parts[0]), 64)
		hi, err2 := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
		if err1 == nil && err2 == nil && lo > 0 && hi > lo && !math.IsInf(hi, 0) {
			return lo, hi, nil
		}
	}
	return 0, 0, fmt.Errorf("construct: range %q: want lo,hi with 0 < lo < hi", s)
}

// ParseTemperature reads the temperature c: "inf", "+inf" or "∞" (any
// case) is 0, the hard-attention limit (Config.C); otherwise a finite
// number > 0.
func ParseTemperature(s string) (float64, error) {
	if s := strings.ToLower(s); s == "inf" || s == "∞" || s == "+inf" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(strings.ToLower(s), 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("construct: temperature %q: want inf or a positive number", s)
	}
	return v, nil
}

// ParseSymbols reads an input sequence of symbols 0..A−1: digits
// ("0120112", for A ≤ 10) or integers separated by commas or spaces
// ("0,1,12,3").
func ParseSymbols(s string, A int) ([]byte, error) {
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
