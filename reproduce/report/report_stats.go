package report

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/eval"
	"gonum.org/v1/gonum/stat/distuv"
)

// Margin is the tolerance of every comparison (nats per symbol): a smaller
// difference is not one a reader could see in a figure, and with 1000 test
// windows a far smaller one is statistically clear.
const Margin = 0.005

// Alpha is the one-sided level of every test, Holm-adjusted across a
// figure's checks: 0.025, the tail of a 95% two-sided interval.
const Alpha = 0.025

// half selects which half of the window a comparison is over.
type half int

const (
	secondHalf half = iota
	firstHalf
)

func (h half) String() string {
	if h == firstHalf {
		return "first half"
	}
	return "second half"
}

// term is one method's per-window losses with a coefficient.
type term struct {
	c float64
	m *eval.MethodResult
}

// contrast is Σ c_i L_i(w) over the test windows w, where L_i(w) is method
// i's mean loss over half h of window w: its mean, standard error and
// degrees of freedom. It is paired (the per-window values of every term,
// evaluated on the same windows) when all terms have them; otherwise, for
// the second half only, it is built from each method's own interval as if
// the methods were independent (a wider, conservative error); ok is false
// when neither is possible.
func contrast(h half, ts ...term) (mean, se float64, df int, paired, ok bool) {
	get := func(m *eval.MethodResult) []float64 {
		if h == firstHalf {
			return m.FirstHalfWindows
		}
		return m.SecondHalfWindows
	}
	n := len(get(ts[0].m))
	paired = n >= 2
	for _, t := range ts {
		if len(get(t.m)) != n {
			paired = false
		}
	}
	if paired {
		d := make([]float64, n)
		for _, t := range ts {
			for j, v := range get(t.m) {
				d[j] += t.c * v
			}
		}
		s, s2 := 0.0, 0.0
		for _, v := range d {
			s += v
		}
		mean = s / float64(n)
		for _, v := range d {
			s2 += (v - mean) * (v - mean)
		}
		return mean, math.Sqrt(s2 / float64(n-1) / float64(n)), n - 1, true, true
	}
	if h == firstHalf {
		return 0, 0, 0, false, false
	}
	// Without per-window values: each method's second-half excess
	// interval (paired with the reference, so the reference's share
	// cancels in a contrast whose coefficients sum to 0), treated as
	// independent estimates with standard errors half-width/1.96.
	// A zero-width interval is the reference's own (excess 0); at least
	// one term must have a width.
	v, wide := 0.0, false
	for _, t := range ts {
		iv := t.m.ExcessSecondHalf
		hw := iv.HalfWidth()
		if math.IsNaN(iv.Mean) || math.IsNaN(hw) {
			return 0, 0, 0, false, false
		}
		wide = wide || hw > 0
		mean += t.c * iv.Mean
		v += t.c * t.c * (hw / 1.96) * (hw / 1.96)
	}
	if !wide {
		return 0, 0, 0, false, false
	}
	return mean, math.Sqrt(v), math.MaxInt32, false, true
}

// tcdf is the Student-t CDF with df degrees of freedom (normal for large
// df).
func tcdf(t float64, df int) float64 {
	if df > 1e6 {
		return distuv.UnitNormal.CDF(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.CDF(t)
}

// test is a decided-by-p-values comparison (see the rules above).
type test struct {
	PHold, PFail float64
	OK           bool // false: the numbers cannot decide it (inconclusive)
	Text         string
}

// verdict is the test's verdict on its own (without multiplicity
// adjustment), at Alpha.
func (t test) verdict() verdict {
	switch {
	case !t.OK:
		return undecided
	case t.PHold < Alpha:
		return holds
	case t.PFail < Alpha:
		return fails
	}
	return undecided
}

// above tests "the contrast exceeds bound": pHold = P(T ≥ t), pFail =
// P(T ≤ t), t = (mean − bound)/se.
func above(mean, se float64, df int, bound float64) (pHold, pFail float64) {
	if se == 0 {
		switch {
		case mean > bound:
			return 0, 1
		case mean < bound:
			return 1, 0
		}
		return 1, 1
	}
	x := tcdf((mean-bound)/se, df)
	return 1 - x, x
}

// describe states a contrast with its 95% interval.
func describe(label string, mean, se float64, df int, paired bool, h half) string {
	c := 1.96
	if df < 1e6 {
		c = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
	}
	kind := "paired"
	if !paired {
		kind = "unpaired"
	}
	return fmt.Sprintf("%s %+.4f ± %.4f (%s, %s, 95%%)", label, mean, c*se, h, kind)
}

// worse tests "a's loss over half h is higher than b's by more than
// Margin".
func worse(a, b *eval.MethodResult) test { return worseOver(secondHalf, a, b) }

func worseOver(h half, a, b *eval.MethodResult) test {
	mean, se, df, paired, ok := contrast(h, term{1, a}, term{-1, b})
	t := test{OK: ok, Text: fmt.Sprintf("%s %s vs %s %s", a.Name, excessSH(a), b.Name, excessSH(b))}
	if h == firstHalf {
		t.Text = fmt.Sprintf("%s vs %s over the first half", a.Name, b.Name)
	}
	if !ok {
		t.Text += fmt.Sprintf("; no per-window %s losses to compare", h)
		return t
	}
	t.PHold, t.PFail = above(mean, se, df, Margin)
	t.Text += "; " + describe("difference", mean, se, df, paired, h) + fmt.Sprintf("; margin %g nats", Margin)
	return t
}

// notWorse tests "a's loss over half h is not higher than b's by more
// than Margin": worse with the roles of its p-values exchanged.
func notWorse(a, b *eval.MethodResult) test {
	t := worseOver(secondHalf, a, b)
	t.PHold, t.PFail = t.PFail, t.PHold
	return t
}

// equivalent tests "|a − b| ≤ tol" over the second half: pHold is the
// larger of the two one-sided p-values of "a − b ≤ −tol" and "a − b ≥
// tol" (two one-sided tests); pFail that of the difference lying beyond
// the bound on the side of its mean (doubled: either side may be chosen).
func equivalent(a, b *eval.MethodResult, tol float64) test {
	mean, se, df, paired, ok := contrast(secondHalf, term{1, a}, term{-1, b})
	t := test{OK: ok, Text: fmt.Sprintf("%s %s vs %s %s", a.Name, excessSH(a), b.Name, excessSH(b))}
	if !ok {
		return t
	}
	lowHold, lowFail := above(mean, se, df, -tol) // "above −tol"
	highFail, highHold := above(mean, se, df, tol)
	t.PHold = max(lowHold, highHold)
	t.PFail = min(1, 2*min(lowFail, highFail))
	t.Text += "; " + describe("difference", mean, se, df, paired, secondHalf) + fmt.Sprintf("; tolerance ±%g nats", tol)
	return t
}
