package eval

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
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

// studentTQuantile returns t with P(T ≤ t) = p for Student's t with df
// degrees of freedom (gonum's distuv.StudentsT, standard location and
// scale).
func studentTQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
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

// MeanInterval is the mean of xs with its two-sided confidence interval
// at level conf (mean ± CriticalValue(n, conf)·sd/√n, sd with divisor
// n − 1). With no values every field is NaN; with one, or with conf
// outside (0, 1), the mean is kept and SD, Lo and Hi are NaN.
func MeanInterval(xs []float64, conf float64) Interval {
	n := len(xs)
	if n == 0 {
		return Interval{Mean: math.NaN(), SD: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	m2 := 0.0
	for _, x := range xs {
		m2 += (x - mean) * (x - mean)
	}
	crit, _, err := CriticalValue(n, conf)
	if err != nil {
		crit = math.NaN()
	}
	return interval(mean, m2, n, crit)
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

// Holm returns the Holm step-down adjusted p-values of ps, in ps's order:
// with p_(1) ≤ … ≤ p_(m) sorted, p̃_(k) = max_{j ≤ k} min(1, (m−j+1)·p_(j)),
// so that rejecting every p̃ < α controls the family-wise error rate at α
// (Holm 1979). Ties keep their input order; nil gives an empty slice.
func Holm(ps []float64) []float64 {
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	adj := make([]float64, len(ps))
	run := 0.0
	for k, i := range idx {
		run = max(run, min(1, float64(len(ps)-k)*ps[i]))
		adj[i] = run
	}
	return adj
}
