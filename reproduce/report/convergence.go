package report

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer"
	"gonum.org/v1/gonum/stat/distuv"
)

// ConvergenceTolerance is the largest drop of the training loss per
// further quarter of the run (nats per symbol) at which a model counts as
// converged (Convergence).
const ConvergenceTolerance = 0.005

// Convergence says whether a training run had stopped improving: an
// ordinary least-squares line through the logged training losses of the
// last quarter of its steps (each the mean over one log interval),
// extrapolated over another quarter of the run.
//
// The learning-rate schedule decays towards its minimum at the end, which
// flattens the curve by itself: "converged" means converged under this
// schedule and budget; a run with more steps (a model spec's -xK suffix)
// tells whether the budget limits the loss.
type Convergence struct {
	FromStep, ToStep int // the steps fitted
	Points           int // the log entries fitted
	// Drop is the fitted decrease of the training loss over another
	// quarter of the run (nats per symbol; positive: still improving) and
	// DropCI the half-width of its 95% interval (Student-t, Points−2 df).
	Drop, DropCI float64
}

// Verdict is holds ("settled") when the whole interval of Drop lies within
// ±ConvergenceTolerance, fails when it lies beyond (still falling, or
// rising: diverging or overfitting), and undecided otherwise (or with
// fewer than 4 points).
func (c Convergence) Verdict() verdict {
	switch {
	case c.Points < 4 || math.IsNaN(c.DropCI):
		return undecided
	case math.Abs(c.Drop)+c.DropCI < ConvergenceTolerance:
		return holds
	case math.Abs(c.Drop)-c.DropCI > ConvergenceTolerance:
		return fails
	}
	return undecided
}

// String states the fit and its verdict in words.
func (c Convergence) String() string {
	w := map[verdict]string{holds: "settled", fails: "still falling", undecided: "not clearly settled"}[c.Verdict()]
	if c.Verdict() == fails && c.Drop < 0 {
		w = "rising (diverging or overfitting)"
	}
	if c.Points < 4 {
		noun := "losses"
		if c.Points == 1 {
			noun = "loss"
		}
		return fmt.Sprintf("%s (only %d logged %s in the last quarter)", w, c.Points, noun)
	}
	return fmt.Sprintf("%s: the training loss of steps %d–%d, extrapolated, drops %.4f ± %.4f nats over another quarter of the run (tolerance %g)",
		w, c.FromStep, c.ToStep, c.Drop, c.DropCI, ConvergenceTolerance)
}

// convergenceOf fits the last quarter of a training log (see Convergence).
func convergenceOf(hist []transformer.LogEntry) Convergence {
	var c Convergence
	last := 0
	for _, e := range hist {
		last = max(last, e.Step)
	}
	if last == 0 {
		return c
	}
	var xs, ys []float64
	for _, e := range hist {
		if 4*e.Step >= 3*last && !math.IsNaN(e.TrainLoss) && e.Step > 0 {
			xs, ys = append(xs, float64(e.Step)), append(ys, e.TrainLoss)
		}
	}
	c.Points = len(xs)
	if len(xs) == 0 {
		return c
	}
	c.FromStep, c.ToStep = int(xs[0]), int(xs[len(xs)-1])
	if len(xs) < 4 {
		c.DropCI = math.NaN()
		return c
	}
	n := float64(len(xs))
	var mx, my float64
	for i := range xs {
		mx += xs[i] / n
		my += ys[i] / n
	}
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	slope := sxy / sxx
	var rss float64
	for i := range xs {
		r := ys[i] - my - slope*(xs[i]-mx)
		rss += r * r
	}
	se := math.Sqrt(rss / (n - 2) / sxx)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 2}.Quantile(0.975)
	q := float64(last) / 4
	c.Drop, c.DropCI = -slope*q, t*se*q
	return c
}
