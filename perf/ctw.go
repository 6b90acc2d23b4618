// Package perf measures vomc's throughput for `vomc bench`. Every speed is
// reported next to a reference measured in the same run (for CTW, the
// counts-only pass over the same data, which any CTW implementation must
// make), so that the ratios are comparable across machines.
package perf

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/source"
)

// CTWReport holds the CTW timings of one run, each the best of Reps
// repetitions on one core.
type CTWReport struct {
	A, D    int
	Lambda  float64
	Symbols int
	Reps    int
	// Counts is the counts-only pass (the floor), LogML the log marginal
	// likelihood (counts plus the recursion), Sequential the full
	// predictive distribution at every position with the blend form, and
	// Theorem1 the same with the literal log-domain form.
	Counts, LogML, Sequential, Theorem1 time.Duration
	LogMLValue                          float64 // ln P(x) in nats, as a check
}

// Rate is symbols per second for a duration.
func (r CTWReport) Rate(d time.Duration) float64 { return float64(r.Symbols) / d.Seconds() }

// best returns the fastest of reps runs of f.
func best(reps int, f func()) time.Duration {
	var b time.Duration
	for i := 0; i < reps; i++ {
		runtime.GC()
		t := time.Now()
		f()
		if d := time.Since(t); i == 0 || d < b {
			b = d
		}
	}
	return b
}

// BenchCTW samples a tree from the paper's prior (A, D, λ, α = 0.5) with the
// given seed, generates n symbols from it and times the CTW computations.
func BenchCTW(A, D int, lambda float64, n, reps int, seed uint64) (*CTWReport, error) {
	prior := source.Prior{A: A, Depths: []int{D}, Lambda: lambda, Alpha: []float64{0.5}}
	rng := source.RNG(seed, 0)
	tree, err := prior.Sample(rng)
	if err != nil {
		return nil, err
	}
	x, err := tree.Generate(rng, n, nil)
	if err != nil {
		return nil, err
	}
	cfg := ctw.Config{A: A, D: D, Lambda: lambda, Alpha: 0.5}
	r := &CTWReport{A: A, D: D, Lambda: lambda, Symbols: n, Reps: reps}
	var ferr error
	r.Counts = best(reps, func() {
		if _, err := ctw.CountSequence(cfg, x); err != nil {
			ferr = err
		}
	})
	r.LogML = best(reps, func() {
		v, err := ctw.LogMarginalLikelihood(cfg, x)
		if err != nil {
			ferr = err
		}
		r.LogMLValue = v
	})
	if ferr != nil {
		return nil, ferr
	}
	pr, err := ctw.New(cfg)
	if err != nil {
		return nil, err
	}
	seq := func(pr *ctw.Predictor, x []byte) func() {
		return func() {
			st := pr.NewCTWState()
			p := make([]float64, A)
			for _, a := range x {
				st.Predict(p)
				st.Observe(a)
			}
		}
	}
	r.Sequential = best(reps, seq(pr, x))
	cfg.Form = ctw.Theorem1
	pt, err := ctw.New(cfg)
	if err != nil {
		return nil, err
	}
	r.Theorem1 = best(reps, seq(pt, x))
	return r, nil
}

// Write prints the report as a table: time, throughput and the ratio of
// each computation's time to the counts-only pass.
func (r *CTWReport) Write(w io.Writer) {
	fmt.Fprintf(w, "CTW, A=%d, D=%d, λ=%g, α=0.5, %d symbols from a tree of the prior; best of %d, one core\n",
		r.A, r.D, r.Lambda, r.Symbols, r.Reps)
	fmt.Fprintf(w, "%-44s %12s %16s %14s\n", "computation", "time", "symbols/s", "× counts pass")
	row := func(name string, d time.Duration) {
		fmt.Fprintf(w, "%-44s %12s %16.4g %14.2f\n", name, d.Round(time.Microsecond), r.Rate(d), d.Seconds()/r.Counts.Seconds())
	}
	row("counts-only pass (floor)", r.Counts)
	row("log marginal likelihood ln p^w_()", r.LogML)
	row("full predictive distributions (blend)", r.Sequential)
	row("full predictive distributions (Theorem 2)", r.Theorem1)
	fmt.Fprintf(w, "ln P(x) = %.6f nats (%.6f bits/symbol)\n", r.LogMLValue, -r.LogMLValue/float64(r.Symbols)/0.6931471805599453)
}
