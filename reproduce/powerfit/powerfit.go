// Package powerfit fits the power laws with which the budget ladder
// extrapolates a model's excess loss (nats/symbol) against its training
// budget T (tokens): excess(T) = a·T^(−b), by least squares in log–log
// (Law), and excess(T) = c + a·T^(−b) with a floor c ≥ 0 (Floor).
package powerfit

import "math"

// Law is excess(T) = C + A·T^(−B); C is 0 for a floorless law.
type Law struct {
	A, B, C float64
	// SSE is the squared error of the fit in log space: Σ (ln(excess_i −
	// C) − ln(A·T_i^(−B)))².
	SSE float64
}

// At is the law's excess at budget t.
func (l Law) At(t float64) float64 { return l.C + l.A*math.Pow(t, -l.B) }

// Reaches is the budget at which the law's excess equals target, and
// whether it ever does (target above the floor, B > 0).
func (l Law) Reaches(target float64) (float64, bool) {
	if !(target > l.C) || !(l.B > 0) {
		return 0, false
	}
	return math.Pow(l.A/(target-l.C), 1/l.B), true
}

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
// points or an excess not above 0. B may come out ≤ 0 (no fall).
func Power(ts, es []float64) (Law, bool) {
	return fitAbove(ts, es, 0, 2)
}

// fitAbove fits a·T^(−b) to es − c in log–log.
func fitAbove(ts, es []float64, c float64, minPoints int) (Law, bool) {
	if len(ts) < minPoints || len(ts) != len(es) {
		return Law{}, false
	}
	xs, ys := make([]float64, len(ts)), make([]float64, len(es))
	for i := range ts {
		if !(es[i]-c > 0) || !(ts[i] > 0) {
			return Law{}, false
		}
		xs[i], ys[i] = math.Log(ts[i]), math.Log(es[i]-c)
	}
	slope, icept := Line(xs, ys)
	l := Law{A: math.Exp(icept), B: -slope, C: c}
	for i := range xs {
		r := ys[i] - (icept + slope*xs[i])
		l.SSE += r * r
	}
	return l, true
}

// Floor fits excess(T) = c + a·T^(−b) (c ≥ 0, b > 0): for each floor c in
// [0, min es) the law a·T^(−b) is fitted to es − c as Power does, and c is
// the floor whose fit has the least squared error in log space (a grid,
// then golden-section search in the best grid cell's neighbourhood: the
// error need not be unimodal in c). With three budgets the three
// parameters go through the points exactly (SSE 0) when the falls between
// consecutive budgets shrink fast enough; a best floor of 0 is the
// floorless law. ok is false with fewer than three points, an excess not
// above 0, or no floor giving b > 0.
func Floor(ts, es []float64) (Law, bool) {
	if len(ts) < 3 || len(ts) != len(es) {
		return Law{}, false
	}
	lo := math.Inf(1)
	for _, e := range es {
		if !(e > 0) {
			return Law{}, false
		}
		lo = min(lo, e)
	}
	sse := func(c float64) float64 {
		if l, ok := fitAbove(ts, es, c, 3); ok && l.B > 0 {
			return l.SSE
		}
		return math.Inf(1)
	}
	const grid = 2000
	best, bestSSE := -1.0, math.Inf(1)
	for k := 0; k < grid; k++ {
		c := lo * float64(k) / grid
		if s := sse(c); s < bestSSE {
			best, bestSSE = c, s
		}
	}
	if best < 0 {
		return Law{}, false
	}
	l, r := max(0, best-lo/grid), min(lo*(1-1e-12), best+lo/grid)
	g := (math.Sqrt(5) - 1) / 2
	for range 100 {
		m1, m2 := r-g*(r-l), l+g*(r-l)
		if sse(m1) <= sse(m2) {
			r = m2
		} else {
			l = m1
		}
	}
	c := (l + r) / 2
	if sse(c) > bestSSE {
		c = best
	}
	return fitAbove(ts, es, c, 3)
}
