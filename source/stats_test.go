package source

import (
	"math"
	"sort"
	"testing"
)

// regGammaQ returns the regularized upper incomplete gamma function
// Q(s, x) = Γ(s, x)/Γ(s), by the power series of P for x < s+1 and a
// Lentz continued fraction for Q otherwise.
func regGammaQ(s, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(s)
	logPre := s*math.Log(x) - x - lg
	if x < s+1 {
		sum, term := 1/s, 1/s
		for n := 1; n < 10000; n++ {
			term *= x / (s + float64(n))
			sum += term
			if term < sum*1e-16 {
				break
			}
		}
		return 1 - math.Exp(logPre)*sum
	}
	const tiny = 1e-300
	b := x + 1 - s
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - s)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-16 {
			break
		}
	}
	return math.Exp(logPre) * h
}

// chiSquarePValue returns P(χ²_df ≥ x).
func chiSquarePValue(x float64, df int) float64 {
	return regGammaQ(float64(df)/2, x/2)
}

func TestChiSquarePValue(t *testing.T) {
	// Reference values: P(χ²_1 ≥ 3.841459) = 0.05, P(χ²_10 ≥ 18.307038) = 0.05,
	// P(χ²_4 ≥ 4) = 3·e^{−2} = 0.40600585, P(χ²_100 ≥ 149.449) ≈ 0.001.
	cases := []struct {
		x    float64
		df   int
		want float64
		tol  float64
	}{
		{3.841459, 1, 0.05, 1e-6},
		{18.307038, 10, 0.05, 1e-6},
		{4, 4, 3 * math.Exp(-2), 1e-12},
		{149.449, 100, 0.001, 2e-5},
		{0.5, 30, 1, 1e-12},
	}
	for _, c := range cases {
		if got := chiSquarePValue(c.x, c.df); math.Abs(got-c.want) > c.tol {
			t.Errorf("chiSquarePValue(%v, %d) = %v, want %v", c.x, c.df, got, c.want)
		}
	}
}

// chiSquareTest compares observed counts (keyed by category) with exact
// probabilities. Categories with expected count < 5 are pooled (in order
// of increasing probability) into one bin. It returns the statistic, the
// degrees of freedom and the p-value; an observation in a category of
// probability 0 gives p = 0.
func chiSquareTest[K comparable](observed map[K]int, probs map[K]float64, n int) (stat float64, df int, p float64) {
	for k, c := range observed {
		if c > 0 && probs[k] == 0 {
			return math.Inf(1), 0, 0
		}
	}
	type cat struct {
		e float64
		o int
	}
	var cats []cat
	for k, pr := range probs {
		if pr > 0 {
			cats = append(cats, cat{e: pr * float64(n), o: observed[k]})
		}
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i].e < cats[j].e })
	var bins []cat
	pool := cat{}
	for _, c := range cats {
		if pool.e < 5 {
			pool.e += c.e
			pool.o += c.o
			continue
		}
		bins = append(bins, c)
	}
	if pool.e > 0 {
		bins = append(bins, pool)
	}
	for _, b := range bins {
		d := float64(b.o) - b.e
		stat += d * d / b.e
	}
	df = len(bins) - 1
	if df < 1 {
		return stat, df, 1
	}
	return stat, df, chiSquarePValue(stat, df)
}

// meanVar returns the sample mean, variance and the standard errors of both
// (the variance's from the sample fourth central moment).
func meanVar(x []float64) (mean, variance, seMean, seVar float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var m2, m4 float64
	for _, v := range x {
		d := (v - mean) * (v - mean)
		m2 += d
		m4 += d * d
	}
	m2 /= n
	m4 /= n
	variance = m2 * n / (n - 1)
	return mean, variance, math.Sqrt(variance / n), math.Sqrt(math.Max(m4-m2*m2, 0) / n)
}
