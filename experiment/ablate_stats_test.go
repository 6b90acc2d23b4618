package experiment

import (
	"math"
	"slices"
	"testing"

	"github.com/vomc/vomc/eval"
)

// TestOneSidedP: the one-sided paired t-test's p-value P(T ≥ t), T
// Student's t with n − 1 degrees of freedom, t = mean/(SD/√n): at known
// quantiles of the t distribution it gives their tail probabilities; far
// in the tail it is positive and equal to the integral of the density
// (computed here by quadrature in log space), not rounded to 0.
func TestOneSidedP(t *testing.T) {
	// iv has t statistic tt over n windows (SD 1).
	iv := func(tt float64, n int) eval.Interval {
		return eval.Interval{Mean: tt / math.Sqrt(float64(n)), SD: 1}
	}
	for _, tc := range []struct {
		tt   float64
		n    int
		want float64
	}{
		// Quantiles t_{1−p, ν} of Student's t (standard tables, 10 digits).
		{2.2621571628, 10, 0.025},  // ν = 9
		{1.7291328115, 20, 0.05},   // ν = 19
		{2.4620213601, 30, 0.01},   // ν = 29
		{3.7074280213, 7, 0.005},   // ν = 6
		{1.9719565442, 200, 0.025}, // ν = 199
		{-1.7291328115, 20, 0.95},  // a negative mean: the other tail
		{0, 12, 0.5},
	} {
		if got := oneSidedP(iv(tc.tt, tc.n), tc.n); math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("t = %v, n = %d: p = %.10g, want %v", tc.tt, tc.n, got, tc.want)
		}
	}
	for _, tc := range []struct {
		tt float64
		n  int
	}{{12, 200}, {40, 200}, {25, 48}, {9, 10}} {
		got, want := oneSidedP(iv(tc.tt, tc.n), tc.n), tTail(tc.tt, float64(tc.n-1))
		if !(got > 0) || math.Abs(got-want) > 1e-6*want {
			t.Errorf("t = %v, n = %d: p = %g, want %g (the tail's integral)", tc.tt, tc.n, got, want)
		}
	}
	// No spread: certain.
	if p := oneSidedP(eval.Interval{Mean: 0.1}, 5); p != 0 {
		t.Errorf("a constant positive cost: p = %v, want 0", p)
	}
	if p := oneSidedP(eval.Interval{}, 5); p != 1 {
		t.Errorf("a constant zero cost: p = %v, want 1", p)
	}
}

// tTail is P(T ≥ t) for Student's t with ν degrees of freedom, t > 0, by
// Simpson's rule on the density relative to its value at t, so that a
// tail far below float64's ε is computed without underflow.
func tTail(t, nu float64) float64 {
	lg1, _ := math.Lgamma((nu + 1) / 2)
	lg2, _ := math.Lgamma(nu / 2)
	logf := func(x float64) float64 {
		return lg1 - lg2 - 0.5*math.Log(nu*math.Pi) - (nu+1)/2*math.Log1p(x*x/nu)
	}
	// The density falls like x^−(ν+1): integrate far enough that the rest
	// is below 1e-9 of the whole, on a grid fine near t.
	const steps = 200000
	hi := t * math.Pow(1e9, 1/nu) * 4
	h := (hi - t) / steps
	s := 0.0
	for i := 0; i <= steps; i++ {
		w := 2.0
		switch {
		case i == 0 || i == steps:
			w = 1
		case i%2 == 1:
			w = 4
		}
		s += w * math.Exp(logf(t+float64(i)*h)-logf(t))
	}
	return math.Exp(logf(t)) * s * h / 3
}

// TestPermutationP: (1 + #{random ≥ the group's cost}) / (1 + #random),
// ties counted as at least as large.
func TestPermutationP(t *testing.T) {
	for _, tc := range []struct {
		cost   float64
		random []float64
		want   float64
	}{
		{0.5, []float64{0.1, 0.6, 0.5, 0.2}, 3.0 / 5}, // 0.6 and the tie 0.5
		{0.7, []float64{0.1, 0.6, 0.5, 0.2}, 1.0 / 5}, // none: the smallest, 1/(1+n)
		{0.0, []float64{0.1, 0.6, 0.5, 0.2}, 1},       // all
		{0.3, nil, 1},
		{0.3, slices.Repeat([]float64{0.1}, 39), 1.0 / 40},
	} {
		if got := permutationP(tc.cost, tc.random); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("permutationP(%v, %v) = %v, want %v", tc.cost, tc.random, got, tc.want)
		}
	}
}
