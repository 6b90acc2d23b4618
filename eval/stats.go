package eval

import (
	"fmt"
	"math"
)

// NormalApproxDF is the number of degrees of freedom (windows − 1) from
// which confidence intervals use the normal quantile z instead of the
// Student-t quantile. Below it the exact t quantile with df = n − 1 is used.
// At df = 1000 the two differ by about 0.1% of the interval's half-width.
const NormalApproxDF = 1000

// CriticalValue returns the two-sided critical value used for a confidence
// interval at level conf (e.g. 0.95) from n samples, and the name of the
// distribution it came from ("student-t" or "normal"):
//
//   - n − 1 < NormalApproxDF: the Student-t quantile t_{(1+conf)/2, n−1};
//   - otherwise the standard normal quantile z_{(1+conf)/2}.
//
// A confidence interval is then mean ± CriticalValue·sd/√n, with sd the
// sample standard deviation (divisor n − 1). For n < 2 the critical value is
// NaN (no interval can be formed). conf must lie in (0, 1).
func CriticalValue(n int, conf float64) (float64, string, error) {
	if !(conf > 0 && conf < 1) {
		return 0, "", fmt.Errorf("eval: confidence level %v outside (0, 1)", conf)
	}
	p := (1 + conf) / 2
	df := n - 1
	switch {
	case df < 1:
		return math.NaN(), "student-t", nil
	case df < NormalApproxDF:
		return studentTQuantile(p, float64(df)), "student-t", nil
	default:
		return normalQuantile(p), "normal", nil
	}
}

// normalQuantile is the inverse of the standard normal CDF.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// studentTCDF is P(T ≤ t) for Student's t with df degrees of freedom,
// via the regularised incomplete beta function:
// P(T > t) = ½·I_{df/(df+t²)}(df/2, ½) for t ≥ 0.
func studentTCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * regIncBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// studentTQuantile returns t with P(T ≤ t) = p for p in (½, 1), found by
// bisection on the CDF (monotone, so this is robust and deterministic).
func studentTQuantile(p, df float64) float64 {
	lo, hi := 0.0, 1.0
	for studentTCDF(hi, df) < p {
		lo = hi
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := 0.5 * (lo + hi)
		if mid == lo || mid == hi {
			break
		}
		if studentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return 0.5 * (lo + hi)
}

// regIncBeta is the regularised incomplete beta function I_x(a, b),
// evaluated with its continued fraction (using the symmetry
// I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges faster).
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaContFrac(a, b, x) / a
	}
	return 1 - front*betaContFrac(b, a, 1-x)/b
}

// betaContFrac evaluates the continued fraction of the incomplete beta
// function, 1/(1+ d₁/(1+ d₂/(1+ …))), with the modified Lentz method.
func betaContFrac(a, b, x float64) float64 {
	const tiny = 1e-300
	fix := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	c := 1.0
	d := 1 / fix(1-(a+b)*x/(a+1))
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		// Even step: d_{2m} = m(b−m)x / ((a+2m−1)(a+2m)).
		num := fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
		d = 1 / fix(1+num*d)
		c = fix(1 + num/c)
		h *= d * c
		// Odd step: d_{2m+1} = −(a+m)(a+b+m)x / ((a+2m)(a+2m+1)).
		num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
		d = 1 / fix(1+num*d)
		c = fix(1 + num/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return h
}

// welford accumulates, for K parallel series sharing one sample count, the
// running mean and the sum of squared deviations M2 (Welford's update);
// partial accumulators are combined with Chan et al.'s pairwise formula.
// Both operations are deterministic for a fixed order of updates/merges.
type welford struct {
	n    int
	mean []float64
	m2   []float64
}

func newWelford(k int) *welford {
	return &welford{mean: make([]float64, k), m2: make([]float64, k)}
}

func (w *welford) reset() {
	w.n = 0
	clear(w.mean)
	clear(w.m2)
}

// add folds one sample vector x (length K) into the accumulator.
func (w *welford) add(x []float64) {
	w.n++
	inv := 1 / float64(w.n)
	mean := w.mean
	m2 := w.m2[:len(mean)]
	x = x[:len(mean)]
	for k, v := range x {
		d := v - mean[k]
		mean[k] += d * inv
		m2[k] += d * (v - mean[k])
	}
}

// merge folds the accumulator o into w (w ← w ∪ o).
func (w *welford) merge(o *welford) {
	switch {
	case o.n == 0:
		return
	case w.n == 0:
		w.n = o.n
		copy(w.mean, o.mean)
		copy(w.m2, o.m2)
		return
	}
	na, nb := float64(w.n), float64(o.n)
	n := na + nb
	fb := nb / n
	fab := na * nb / n
	mean := w.mean
	m2 := w.m2[:len(mean)]
	om, om2 := o.mean[:len(mean)], o.m2[:len(mean)]
	for k := range mean {
		d := om[k] - mean[k]
		mean[k] += d * fb
		m2[k] += om2[k] + d*d*fab
	}
	w.n += o.n
}

// interval turns a mean and M2 over n samples into an Interval with the
// critical value crit (see CriticalValue).
func interval(mean, m2 float64, n int, crit float64) Interval {
	if n < 2 {
		return Interval{Mean: mean, SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	sd := math.Sqrt(m2 / float64(n-1))
	half := crit * sd / math.Sqrt(float64(n))
	return Interval{Mean: mean, SD: sd, Lo: mean - half, Hi: mean + half}
}
