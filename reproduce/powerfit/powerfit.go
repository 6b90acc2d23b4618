// Package powerfit fits the power laws with which the budget ladder
// extrapolates a model's excess loss (nats/symbol) against its training
// budget T (tokens): excess(T) = a·T^(−b), by least squares in log–log
// (Power), and excess(T) = c + a·T^(−b) with a floor c ≥ 0, by least
// squares in the excess (Floor).
package powerfit

import (
	"math"
	"slices"
)

// Law is excess(T) = C + A·(T/T0)^(−B) (T0 = 1 when zero); C is 0 for a
// floorless law.
type Law struct {
	A, B, C, T0 float64
	// SSE is the fit's squared error: Power's in log space, Σ (ln
	// excess_i − ln(A·T_i^(−B)))²; Floor's in the excess itself (nats²),
	// Σ (excess_i − law(T_i))².
	SSE float64
}

// scale is T0, 1 when unset.
func (l Law) scale() float64 {
	if l.T0 > 0 {
		return l.T0
	}
	return 1
}

// At is the law's excess at budget t.
func (l Law) At(t float64) float64 { return l.C + l.A*math.Pow(t/l.scale(), -l.B) }

// Reaches is the budget at which the law's excess equals target, and
// whether it ever does (target above the floor, B > 0, a finite budget).
func (l Law) Reaches(target float64) (float64, bool) {
	if !(target > l.C) || !(l.B > minB) {
		return 0, false
	}
	t := l.scale() * math.Pow(l.A/(target-l.C), 1/l.B)
	return t, t > 0 && !math.IsInf(t, 0) && !math.IsNaN(t)
}

// minB is the least exponent that counts as a fall: a flat series fits
// b = 0 up to rounding (≈ 1e-30), which must not read as a fall.
const minB = 1e-9

// Line is the least-squares line y = icept + slope·x.
func Line(xs, ys []float64) (slope, icept float64) {
	mx, my := mean(xs), mean(ys)
	sxy, sxx := 0.0, 0.0
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	slope = sxy / sxx
	return slope, my - slope*mx
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Power fits the floorless law excess(T) = a·T^(−b) to the points (ts[i],
// es[i]) by least squares in log–log; ok is false with fewer than two
// points, an excess not above 0, a value not finite, or all budgets equal.
// B may come out ≤ 0 (no fall).
func Power(ts, es []float64) (Law, bool) {
	if !usable(ts, es, 2) {
		return Law{}, false
	}
	xs, ys := make([]float64, len(ts)), make([]float64, len(es))
	for i := range ts {
		xs[i], ys[i] = math.Log(ts[i]), math.Log(es[i])
	}
	slope, icept := Line(xs, ys)
	l := Law{A: math.Exp(icept), B: -slope}
	for i := range xs {
		r := ys[i] - (icept + slope*xs[i])
		l.SSE += r * r
	}
	return l, true
}

// LastSlope is the power law through the last two points (ts ascending):
// the last local log–log slope continued, excess(T) = e_n·(T/T_n)^(−b)
// with b = −ln(e_n/e_{n−1}) / ln(T_n/T_{n−1}). ok is false with fewer than
// two points, lengths that differ, a value of the two not above 0 or not
// finite, or the two budgets equal. B may be ≤ 0 (no fall).
func LastSlope(ts, es []float64) (Law, bool) {
	n := len(ts) - 1
	if n < 1 || len(es) != len(ts) || !usable(ts[n-1:], es[n-1:], 2) {
		return Law{}, false
	}
	return Law{A: es[n], B: -math.Log(es[n]/es[n-1]) / math.Log(ts[n]/ts[n-1]), T0: ts[n]}, true
}

// usable reports whether the points can be fitted: at least minPoints of
// them, budgets and excesses above 0 and finite, not all budgets equal.
func usable(ts, es []float64, minPoints int) bool {
	if len(ts) < minPoints || len(ts) != len(es) {
		return false
	}
	for i := range ts {
		if !(es[i] > 0) || !(ts[i] > 0) || math.IsInf(es[i], 0) || math.IsInf(ts[i], 0) {
			return false
		}
	}
	return slices.Min(ts) != slices.Max(ts)
}

// Floor fits excess(T) = c + a·(T/T0)^(−b) (c ≥ 0, a > 0, b > 0; T0 the
// smallest budget) by least squares in the excess itself: for each b the
// best c ≥ 0 and a are a linear least-squares fit of es on (T/T0)^(−b),
// and b is found by a scan of log b over [1e-3, 30] and a golden-section
// search between the best point's neighbours. (Searching over c instead,
// with the log–log fit of Power at each c, misses floors close to the
// smallest excess: there the error's well in c is narrower than any
// practical grid.) With three budgets the law goes through the points
// (SSE ≈ 0) whenever a floor ≥ 0 does; a best floor of 0 is a floorless
// law fitted in the excess, not in log–log. ok is false with fewer than
// three points, an excess not above 0 or not finite, all budgets equal, or
// no fall (a ≤ 0 for every b: a flat or rising series).
func Floor(ts, es []float64) (Law, bool) {
	if !usable(ts, es, 3) {
		return Law{}, false
	}
	t0 := slices.Min(ts)
	xs := make([]float64, len(ts))
	fit := func(b float64) Law {
		for i, t := range ts {
			xs[i] = math.Pow(t/t0, -b)
		}
		a, c := Line(xs, es)
		if !(c >= 0) { // a floor below 0 (or no spread in xs): c = 0, a through the origin
			c = 0
			sx2, sxy := 0.0, 0.0
			for i := range xs {
				sx2 += xs[i] * xs[i]
				sxy += xs[i] * es[i]
			}
			a = sxy / sx2
		}
		l := Law{A: a, B: b, C: c, T0: t0, SSE: math.Inf(1)}
		if !(a > 1e-12*slices.Max(es)) { // no fall (up to rounding)
			return l
		}
		l.SSE = 0
		for i := range xs {
			r := es[i] - c - a*xs[i]
			l.SSE += r * r
		}
		return l
	}
	const lo, hi, steps = -3.0, 1.4771212547196624, 4000 // log10 b from 1e-3 to 30
	lb := func(k int) float64 { return lo + (hi-lo)*float64(k)/steps }
	best, bestSSE := -1, math.Inf(1)
	for k := 0; k <= steps; k++ {
		if s := fit(math.Pow(10, lb(k))).SSE; s < bestSSE {
			best, bestSSE = k, s
		}
	}
	if best < 0 {
		return Law{}, false
	}
	l, r := lb(max(0, best-1)), lb(min(steps, best+1))
	g := (math.Sqrt(5) - 1) / 2
	for range 200 {
		m1, m2 := r-g*(r-l), l+g*(r-l)
		if fit(math.Pow(10, m1)).SSE <= fit(math.Pow(10, m2)).SSE {
			r = m2
		} else {
			l = m1
		}
	}
	law := fit(math.Pow(10, (l+r)/2))
	if law.SSE > bestSSE {
		law = fit(math.Pow(10, lb(best)))
	}
	return law, law.B > minB && !math.IsInf(law.SSE, 0)
}
