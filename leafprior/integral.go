package leafprior

import (
	"errors"
	"math"
)

// This file computes the moments of a normalised vector of i.i.d. uniforms,
//
//	I(c_1, …, c_m) = E[∏_i p_i^{c_i}],  p_i = U_i / Σ_j U_j,  U_i ~ Uniform(0,1],
//
// for non-negative integer counts c_i with total N = Σ c_i ≥ 1. From
// 1/s^N = (1/Γ(N)) ∫_0^∞ t^{N−1} e^{−ts} dt and the independence of the U_i,
//
//	I = (1/Γ(N)) ∫_0^∞ t^{N−1} ∏_i g_{c_i}(t) dt,  g_c(t) = ∫_0^1 u^c e^{−tu} du = c!·P(c+1, t)/t^{c+1},
//
// where P(a, t) = γ(a, t)/Γ(a) is the regularised lower incomplete gamma
// function (the CDF at t of a Gamma(a, 1) variable). The powers of t and
// the factorials separate exactly:
//
//	I = exp(L(c)) · J(c),
//	L(c) = Σ_i ln c_i! − ln Γ(N),
//	J(c) = ∫_{−∞}^{∞} e^{−m x} ∏_i P(c_i+1, e^x) dx   (x = ln t).
//
// L carries all of the large magnitude (|L| grows like N·ln m) and is
// evaluated in closed form through Stirling's series (logMultinomial); J is
// of moderate size (ln J = O(m ln N)), so the quadrature works on numbers
// near 1 whatever N is. Equivalently J = E[T^{−m}]/m with T the maximum of
// independent Gamma(c_i+1) variables, so the integrand is concentrated
// where t is near max c_i.
//
// The log-integrand h(x) = −m x + Σ_i ln P(c_i+1, e^x) is concave in x
// (ln P(a, e^x) is the log-CDF of the log of a Gamma variable, whose density
// e^{a x − e^x}/Γ(a) is log-concave) and smooth; it rises like N·x as
// x → −∞ and falls like −m·x as x → +∞. The trapezoidal rule on a uniform
// grid therefore converges exponentially in 1/step. Beyond the point x_R
// where Σ_i ln P(c_i+1, e^x) > −1e−17 the integrand equals e^{−m x} to
// within a relative 1e−17, and the grid's infinite right tail is summed as
// a geometric series, so the rule is the trapezoidal rule on the whole real
// line (no endpoint error); on the left the grid stops where h is 60 below
// its maximum (a relative e^{−60} ≈ 1e−26).

// halfLog2Pi is ½ ln(2π).
const halfLog2Pi = 0.91893853320467274178032973640561764

// stirlerrTable holds δ(k) = ln k! − [(k+½) ln k − k + ½ ln(2π)] for
// k = 1..15 (index 0 is unused), to 20 significant digits.
var stirlerrTable = [16]float64{
	0,
	0.08106146679532725822,
	0.041340695955409294094,
	0.027677925684998339149,
	0.020790672103765093112,
	0.016644691189821192163,
	0.013876128823070747999,
	0.011896709945891770095,
	0.010411265261972096497,
	0.0092554621827127329177,
	0.0083305634333628712565,
	0.007573675487951840795,
	0.0069428401072095298657,
	0.0064089941880042070684,
	0.0059513701127588477356,
	0.005554733551962801371,
}

// stirlerr returns δ(x) = ln Γ(x) − [(x−½) ln x − x + ½ ln(2π)], the error
// of Stirling's formula, for x > 0; for an integer k ≥ 1 this is also
// ln k! − [(k+½) ln k − k + ½ ln(2π)]. For x ≥ 16 it sums the asymptotic
// series 1/(12x) − 1/(360x³) + 1/(1260x⁵) − 1/(1680x⁷) + 1/(1188x⁹), whose
// first omitted term, 691/(360360 x¹¹), is below 1.2e−16 there; integers
// below 16 come from a table, and other x < 16 from math.Lgamma (error
// about 1e−14).
func stirlerr(x float64) float64 {
	if x < 16 {
		if k := int(x); float64(k) == x && k >= 1 {
			return stirlerrTable[k]
		}
		lg, _ := math.Lgamma(x)
		return lg - (x-0.5)*math.Log(x) + x - halfLog2Pi
	}
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	x2 := 1 / (x * x)
	return (s0 - (s1-(s2-(s3-s4*x2)*x2)*x2)*x2) / x
}

// bd0 returns the deviance term k·ln(k/t) + t − k ≥ 0 for k ≥ 1 and t > 0,
// given t and x = ln t. Near k = t, where the three terms cancel, it sums
// (k−t)·v + 2k·Σ_{j≥1} v^{2j+1}/(2j+1) with v = (k−t)/(k+t) (|v| < 0.1, so a
// few terms reach full precision); elsewhere k·log1p((k−t)/t) + t − k, whose
// error is a few ulps of the result.
func bd0(k, t, x float64) float64 {
	d := k - t
	if math.Abs(d) < 0.1*(k+t) {
		v := d / (k + t)
		s := d * v
		ej := 2 * k * v
		v2 := v * v
		for j := 3.0; ; j += 2 {
			ej *= v2
			s1 := s + ej/j
			if s1 == s {
				return s
			}
			s = s1
		}
	}
	if t == 0 { // t = e^x underflowed
		return k*(math.Log(k)-x) - k
	}
	return k*math.Log1p(d/t) + t - k
}

// logPoisson returns ln(e^{−t} t^k / k!), the log-probability that a
// Poisson(t) variable equals k ≥ 0, given t > 0 and x = ln t, in the form
// −δ(k) − ½ ln(2πk) − bd0(k, t) (Loader 2000), which keeps full relative
// precision when k and t are large and close.
func logPoisson(k int, t, x float64) float64 {
	if k == 0 {
		return -t
	}
	fk := float64(k)
	return -stirlerr(fk) - halfLog2Pi - 0.5*math.Log(fk) - bd0(fk, t, x)
}

// seriesEps ends the positive series in logGammaP once a term falls below
// seriesEps times the partial sum.
const seriesEps = 1e-17

// logGammaP returns ln P(a, t), the log of the regularised lower incomplete
// gamma function for an integer a ≥ 1, and its derivative d ln P/d ln t,
// given t > 0 and x = ln t (t may underflow to 0; x is then used).
//
// For t < a it uses P(a, t) = Pois(a; t) · Σ_{j≥0} t^j / ∏_{i=1}^{j}(a+i), a
// series of positive terms with ratios t/(a+j) < 1; the derivative is a/S
// for the sum S. For t ≥ a it uses P = 1 − Q with the Poisson lower tail
// Q = Σ_{j<a} Pois(j; t) = Pois(a−1; t) · Σ_{k=0}^{a−1} ∏_{i=1}^{k}(a−i)/t,
// positive terms again, and Q < 0.6 there, so ln P = log1p(−Q) loses
// nothing; the derivative is t·Pois(a−1; t)/P.
func logGammaP(a int, t, x float64) (lp, dlp float64) {
	if a == 1 { // P(1, t) = 1 − e^{−t}.
		if t < 1e-8 {
			return x - t/2, 1 - t/2
		}
		return math.Log(-math.Expm1(-t)), t / math.Expm1(t)
	}
	fa := float64(a)
	if t < fa {
		s, term := 1.0, 1.0
		for j := fa + 1; ; j++ {
			term *= t / j
			s += term
			if term <= seriesEps*s {
				break
			}
		}
		return logPoisson(a, t, x) + math.Log(s), fa / s
	}
	r, term := 1.0, 1.0
	for k := fa - 1; k >= 1; k-- {
		term *= k / t
		r += term
		if term <= seriesEps*r {
			break
		}
	}
	lpm := logPoisson(a-1, t, x) // ln Pois(a−1; t)
	q := math.Exp(lpm) * r
	p := 1 - q
	return math.Log1p(-q), t * math.Exp(lpm) / p
}

// logMultinomial returns L(c) = Σ_i ln c_i! − ln Γ(N) for counts c_i ≥ 0
// with total N ≥ 1, written as
//
//	Σ_{c_i>0} [c_i ln(c_i/N) + ½ ln c_i + δ(c_i)] + (k−1)·½ln(2π) + ½ ln N − δ(N)
//
// (k the number of non-zero counts, δ the Stirling error of stirlerr), whose
// leading sum has terms of one sign. Its error is a few ulps of |L| plus
// about 1e−15.
func logMultinomial(c []int32) float64 {
	var n int64
	for _, v := range c {
		n += int64(v)
	}
	fn := float64(n)
	s := 0.0
	k := 0
	for _, v := range c {
		if v == 0 {
			continue
		}
		k++
		fv := float64(v)
		var l float64
		if 2*int64(v) > n {
			l = math.Log1p(-float64(n-int64(v)) / fn)
		} else {
			l = math.Log(fv / fn)
		}
		s += fv*l + 0.5*math.Log(fv) + stirlerr(fv)
	}
	return s + float64(k-1)*halfLog2Pi + 0.5*math.Log(fn) - stirlerr(fn)
}

// Quadrature constants.
const (
	// leftDrop is how far (in nats) below its maximum the log-integrand is
	// where the grid starts.
	leftDrop = 60
	// tailTol is the bound on −Σ ln P(c_i+1, e^x) beyond which the
	// integrand is summed as the exponential e^{−m x}.
	tailTol = 1e-17
	// quadTol is the relative change between successive halvings of the
	// step at which the trapezoidal sum is accepted. The error of the rule
	// is squared by each halving once it converges, so the accepted sum
	// (the finer one) is good to rounding.
	quadTol = 1e-8
	// minLevels is the least number of grids (the first and its halvings)
	// evaluated.
	minLevels = 3
	// maxGridPoints bounds the finest grid; the tests never need more than
	// about 600 points.
	maxGridPoints = 1 << 16
)

var errQuadrature = errors.New("leafprior: quadrature did not converge")

// integrand is h(x) = −m x + Σ_i mult_i · ln P(a_i, e^x) for the distinct
// values a_i = c_i + 1 with multiplicities mult_i.
type integrand struct {
	a    [MaxSparseAlphabet]int
	mult [MaxSparseAlphabet]float64
	n    int     // number of distinct values
	m    float64 // Σ mult_i
	amax int     // max a_i
}

// newIntegrand groups the counts c (sorted ascending, each ≥ 1) and zeros
// extra zero counts; len(c) + zeros ≤ MaxSparseAlphabet.
func newIntegrand(c []int32, zeros int) *integrand {
	g := new(integrand)
	if zeros > 0 {
		g.a[0], g.mult[0], g.n = 1, float64(zeros), 1
	}
	for i, v := range c {
		if i > 0 && v == c[i-1] {
			g.mult[g.n-1]++
			continue
		}
		g.a[g.n], g.mult[g.n] = int(v)+1, 1
		g.n++
	}
	g.m = float64(len(c) + zeros)
	g.amax = 1
	if len(c) > 0 {
		g.amax = int(c[len(c)-1]) + 1
	}
	return g
}

// eval returns h(x), s(x) = Σ_i mult_i ln P(a_i, e^x) and h′(x).
func (g *integrand) eval(x float64) (h, s, dh float64) {
	t := math.Exp(x)
	dh = -g.m
	for i := 0; i < g.n; i++ {
		lp, d := logGammaP(g.a[i], t, x)
		s += g.mult[i] * lp
		dh += g.mult[i] * d
	}
	return s - g.m*x, s, dh
}

// logJ returns ln J(c) for the counts c (sorted ascending, each ≥ 1) with
// zeros additional zero counts, m = len(c) + zeros ≥ 1, by the trapezoidal
// rule described at the top of this file.
func logJ(c []int32, zeros int) (float64, error) {
	return logJTol(c, zeros, quadTol, minLevels)
}

// logJTol is logJ with the given acceptance tolerance and least number of
// grids: it finds the peak of h, the span of x that the grid covers, and
// sums the trapezoidal rule on ever finer grids until it converges.
func logJTol(c []int32, zeros int, tol float64, levels int) (float64, error) {
	g := newIntegrand(c, zeros)
	// The peak's width in x is about 1/√(max c + 1).
	scale := 1 / math.Sqrt(float64(g.amax))
	xp, err := g.peak(scale)
	if err != nil {
		return 0, err
	}
	hmax, _, _ := g.eval(xp)
	sp, err := g.span(xp, hmax, scale)
	if err != nil {
		return 0, err
	}
	return g.trapezoid(sp, hmax, tol, levels)
}

// peak returns the x at which h is largest, the root of h′, to within
// 1e−2·scale (scale being the peak's width). h′ falls from N at −∞ to −m
// at +∞; the root is bracketed from ln(max c + 1) outwards and then
// bisected.
func (g *integrand) peak(scale float64) (float64, error) {
	lo, hi, err := g.bracketPeak(math.Log(float64(g.amax)))
	if err != nil {
		return 0, err
	}
	for hi-lo > 1e-2*scale {
		mid := 0.5 * (lo + hi)
		if _, _, d := g.eval(mid); d > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi), nil
}

// bracketPeak returns lo < hi with h′(lo) > 0 ≥ h′(hi), stepping from x0
// in the direction in which h rises by steps of ½, 1, 2, … (errQuadrature
// past 10⁴).
func (g *integrand) bracketPeak(x0 float64) (lo, hi float64, err error) {
	lo, hi = x0, x0
	if _, _, d := g.eval(x0); d > 0 {
		for step := 0.5; ; step *= 2 {
			hi = x0 + step
			if _, _, d := g.eval(hi); d <= 0 {
				return lo, hi, nil
			}
			lo = hi
			if step > 1e4 {
				return 0, 0, errQuadrature
			}
		}
	}
	for step := 0.5; ; step *= 2 {
		lo = x0 - step
		if _, _, d := g.eval(lo); d > 0 {
			return lo, hi, nil
		}
		hi = lo
		if step > 1e4 {
			return 0, 0, errQuadrature
		}
	}
}

// gridSpan is the part of the x axis that the trapezoidal grid covers.
type gridSpan struct {
	xl, xr float64 // the grid's first point and the end of its finite part
	width  float64 // the peak's width: the lesser distance from the peak to h = hmax − 1
	tail   bool    // beyond xr the integrand is e^{−m x}, summed as a geometric series
	fr     float64 // e^{h(xr) − hmax}
}

// span returns the grid's span around the peak xp (where h = hmax): from
// where h has dropped leftDrop nats on the left to, on the right, where it
// has dropped as much or where −Σ ln P(c_i+1, e^x) ≤ tailTol (the tail),
// and the peak's width, each distance found by reach.
func (g *integrand) span(xp, hmax, scale float64) (gridSpan, error) {
	drop := func(nats float64) func(h, s float64) bool {
		return func(h, _ float64) bool { return h <= hmax-nats }
	}
	w1, err := g.reach(xp, scale, -1, drop(1))
	if err != nil {
		return gridSpan{}, err
	}
	w2, err := g.reach(xp, scale, 1, drop(1))
	if err != nil {
		return gridSpan{}, err
	}
	dl, err := g.reach(xp, scale, -1, drop(leftDrop))
	if err != nil {
		return gridSpan{}, err
	}
	dr, err := g.reach(xp, scale, 1, func(h, s float64) bool { return h <= hmax-leftDrop || s >= -tailTol })
	if err != nil {
		return gridSpan{}, err
	}
	xl, xr := xp-dl, xp+dr
	hr, sr, _ := g.eval(xr)
	return gridSpan{xl: xl, xr: xr, width: min(w1, w2), tail: sr >= -tailTol, fr: math.Exp(hr - hmax)}, nil
}

// reach returns a distance d with stop(h, s) true at xp + dir·d, stop being
// monotone in d by concavity: it doubles d from scale until stop holds,
// then bisects the last doubling four times, so d exceeds the least such
// distance by at most 1/16 of it (or of scale).
func (g *integrand) reach(xp, scale, dir float64, stop func(h, s float64) bool) (float64, error) {
	a, b := 0.0, scale
	for {
		h, s, _ := g.eval(xp + dir*b)
		if stop(h, s) {
			break
		}
		a, b = b, 2*b
		if b > 1e4 {
			return 0, errQuadrature
		}
	}
	for range 4 {
		mid := 0.5 * (a + b)
		if h, s, _ := g.eval(xp + dir*mid); stop(h, s) {
			b = mid
		} else {
			a = mid
		}
	}
	return b, nil
}

// trapezoid returns ln J = hmax + ln(step · Σ_i e^{h(x_i) − hmax}) by the
// trapezoidal rule on sp: the first grid has a step of about the peak's
// width, and each level halves it (adding the midpoints) until, from the
// levels-th grid on, the sum changes by at most tol relative to the last.
// The sum's right end is e^{h(xr) − hmax}, or with the tail the geometric
// series Σ_{j≥0} e^{h(xr) − hmax − m j·step}.
func (g *integrand) trapezoid(sp gridSpan, hmax, tol float64, levels int) (float64, error) {
	k := max(8, int(math.Ceil((sp.xr-sp.xl)/sp.width)))
	step := (sp.xr - sp.xl) / float64(k)
	sum := 0.0 // Σ exp(h(x_i) − hmax) over the grid points x_i < xr
	for i := range k {
		h, _, _ := g.eval(sp.xl + float64(i)*step)
		sum += math.Exp(h - hmax)
	}
	end := func(step float64) float64 {
		if sp.tail { // Σ_{j≥0} e^{h(xr) − m j·step}
			return sp.fr / -math.Expm1(-g.m*step)
		}
		return sp.fr
	}
	prev := step * (sum + end(step))
	for level := 2; ; level++ {
		if 2*k > maxGridPoints {
			return 0, errQuadrature
		}
		half := step / 2
		odd := 0.0
		for i := range k {
			h, _, _ := g.eval(sp.xl + half + float64(i)*step)
			odd += math.Exp(h - hmax)
		}
		sum += odd
		k, step = 2*k, half
		cur := step * (sum + end(step))
		if level >= levels && math.Abs(cur-prev) <= tol*cur {
			return hmax + math.Log(cur), nil
		}
		prev = cur
	}
}
