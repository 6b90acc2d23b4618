package leafprior

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// lnI returns ln I(c) = L(c) + ln J(c) for counts c in any order.
func lnI(t testing.TB, c ...int32) float64 {
	t.Helper()
	var buf [MaxSparseAlphabet]int32
	s := sortedSupport(buf[:0], c)
	lj, err := logJ(s, len(c)-len(s))
	if err != nil {
		t.Fatalf("logJ%v: %v", c, err)
	}
	return logMultinomial(c) + lj
}

func TestStirlerr(t *testing.T) {
	for k := 1; k < 40; k++ {
		fk := float64(k)
		lg, _ := math.Lgamma(fk + 1)
		want := lg - (fk+0.5)*math.Log(fk) + fk - halfLog2Pi
		if d := math.Abs(stirlerr(fk) - want); d > 1e-13 {
			t.Errorf("stirlerr(%d) = %.17g, ln k! gives %.17g", k, stirlerr(fk), want)
		}
	}
}

// TestLogPoisson checks ln Pois(k; t) against exact rationals where t is an
// integer (then Pois(k; t)·e^t = t^k/k!).
func TestLogPoisson(t *testing.T) {
	for _, tc := range []struct{ k, t int }{
		{0, 1}, {1, 1}, {5, 3}, {30, 30}, {31, 30}, {100, 120}, {1000, 1000}, {1000, 999}, {5000, 4000}, {1 << 20, 1 << 20}, {1<<20 - 3, 1 << 20},
	} {
		x := bigPow(tc.t, tc.k)
		want := bigLogShift(x.Quo(x, bigFact(tc.k)), float64(tc.t))
		tt := float64(tc.t)
		got := logPoisson(tc.k, tt, math.Log(tt))
		if d := math.Abs(got - want); d > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("logPoisson(%d; %d) = %.17g, want %.17g (diff %.2g)", tc.k, tc.t, got, want, d)
		}
	}
}

func TestLogMultinomial(t *testing.T) {
	for _, c := range [][]int32{
		{1}, {7}, {1, 1}, {3, 0, 2}, {300, 200}, {4999, 1}, {1 << 19, 1 << 19}, {10, 20, 30, 40, 0, 50},
	} {
		n := 0
		x := new(big.Float).SetPrec(refPrec).SetInt64(1)
		for _, v := range c {
			n += int(v)
			x.Mul(x, bigFact(int(v)))
		}
		// L = ln(∏ c_i! / (N−1)!)
		want := bigLog(x.Quo(x, bigFact(n-1)))
		got := logMultinomial(c)
		if d := math.Abs(got - want); d > 1e-14+4e-16*math.Abs(want) {
			t.Errorf("logMultinomial(%v) = %.17g, want %.17g (diff %.2g)", c, got, want, d)
		}
	}
}

// TestOneSymbol: for m = 1 the integral must give I(c) = 1 (J(c) = 1/c).
func TestOneSymbol(t *testing.T) {
	for _, c := range []int32{1, 2, 3, 10, 100, 12345, MaxTotal} {
		if got := lnI(t, c); math.Abs(got) > 1e-14 {
			t.Errorf("ln I(%d) = %.3g, want 0", c, got)
		}
	}
}

// TestTwoSymbolsClosedForm compares I(a, b) with exact values: a, b ≥ 2 by
// polynomial integration in rationals, and ln 2 − ½ for (1,1) and ½ for
// (1,0).
func TestTwoSymbolsClosedForm(t *testing.T) {
	type tc struct {
		a, b int32
		want float64 // ln I
	}
	cases := []tc{
		{1, 1, math.Log(math.Ln2 - 0.5)},
		{1, 0, math.Log(0.5)},
		{0, 1, math.Log(0.5)},
	}
	for _, ab := range [][2]int32{{2, 2}, {2, 3}, {3, 2}, {5, 9}, {10, 2}, {17, 17}, {40, 3}, {300, 200}, {200, 300}} {
		cases = append(cases, tc{ab[0], ab[1], ratLog(ratI2(int(ab[0]), int(ab[1])))})
	}
	for _, c := range cases {
		got := lnI(t, c.a, c.b)
		if d := math.Abs(got - c.want); d > 1e-13 {
			t.Errorf("ln I(%d,%d) = %.17g, want %.17g (diff %.2g)", c.a, c.b, got, c.want, d)
		}
	}
	// The series reference agrees with the rational one.
	for _, ab := range [][2]int{{2, 2}, {7, 3}, {300, 200}} {
		r, s := ratLog(ratI2(ab[0], ab[1])), bigLog(bigI2(ab[0], ab[1]))
		if math.Abs(r-s) > 1e-14*math.Abs(r) {
			t.Errorf("references disagree at %v: %.17g vs %.17g", ab, r, s)
		}
	}
}

// TestTwoSymbolsLarge compares ln J(a, b) with the 256-bit series reference
// from small counts to totals near MaxTotal: within 2e−14; and ln I = L + ln J
// within 2e−14 + 1e−15·|ln I| (|ln I| reaches 7·10⁵ here, where its float64
// spacing alone is 1.2e−10).
func TestTwoSymbolsLarge(t *testing.T) {
	cases := [][2]int{
		{1, 0}, {1, 1}, {2, 0}, {3, 1}, {1, 30}, {0, 100}, {50, 1}, {300, 200}, {1000, 10}, {2500, 2500}, {3000, 2000}, {9000, 1000},
		{60000, 40000}, {300000, 299999}, {1 << 19, 1<<19 - 1},
	}
	if testing.Short() {
		cases = cases[:12]
	}
	for _, ab := range cases {
		a, b := ab[0], ab[1]
		t.Run(fmt.Sprint(a, ",", b), func(t *testing.T) {
			c := []int32{int32(max(a, b)), int32(min(a, b))}
			zeros := 0
			if c[1] == 0 {
				c, zeros = c[:1], 1
			} else {
				c[0], c[1] = c[1], c[0]
			}
			lj, err := logJ(c, zeros)
			if err != nil {
				t.Fatal(err)
			}
			want := bigLog(bigJ2(a, b))
			if d := math.Abs(lj - want); d > 2e-14 {
				t.Errorf("ln J(%d,%d) = %.17g, want %.17g (diff %.2g)", a, b, lj, want, d)
			}
			li := lnI(t, int32(a), int32(b))
			wantI := bigLog(bigI2(a, b))
			if d := math.Abs(li - wantI); d > 2e-14+1e-15*math.Abs(wantI) {
				t.Errorf("ln I(%d,%d) = %.17g, want %.17g (diff %.2g)", a, b, li, wantI, d)
			}
		})
	}
}

// mcMoments estimates E[∏ p_i^{c_i}] for each count vector in cs (all of
// length m) from draws of m normalised Uniform(0,1] variables, with
// standard errors.
func mcMoments(rng *rand.Rand, m, draws int, cs [][]int32) (mean, se []float64) {
	sum := make([]float64, len(cs))
	sum2 := make([]float64, len(cs))
	p := make([]float64, m)
	for range draws {
		s := 0.0
		for i := range p {
			p[i] = 1 - rng.Float64()
			s += p[i]
		}
		for i := range p {
			p[i] /= s
		}
		for k, c := range cs {
			x := 1.0
			for i, v := range c {
				x *= math.Pow(p[i], float64(v))
			}
			sum[k] += x
			sum2[k] += x * x
		}
	}
	mean = make([]float64, len(cs))
	se = make([]float64, len(cs))
	for k := range cs {
		mu := sum[k] / float64(draws)
		mean[k] = mu
		se[k] = math.Sqrt((sum2[k]/float64(draws) - mu*mu) / float64(draws))
	}
	return mean, se
}

// TestMomentsMonteCarlo compares I(c) for m = 3 and 4 with the sample
// mean of ∏ p_i^{c_i} over 400 000 draws of normalised uniforms (fixed
// seed), within 5 standard errors. The standard errors are 0.1–1% of the
// values, so an error of a few percent in I would fail.
func TestMomentsMonteCarlo(t *testing.T) {
	for _, tc := range []struct {
		m  int
		cs [][]int32
	}{
		{3, [][]int32{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}, {2, 1, 0}, {3, 2, 1}, {4, 0, 0}, {2, 2, 2}, {6, 1, 0}}},
		{4, [][]int32{{1, 0, 0, 0}, {1, 1, 1, 1}, {2, 1, 1, 0}, {3, 1, 0, 0}, {2, 2, 1, 1}, {5, 0, 0, 0}}},
	} {
		rng := rand.New(rand.NewPCG(uint64(tc.m), 2024))
		mean, se := mcMoments(rng, tc.m, 400000, tc.cs)
		for k, c := range tc.cs {
			got := math.Exp(lnI(t, c...))
			if math.Abs(got-mean[k]) > 5*se[k] {
				t.Errorf("I%v = %.6g, Monte Carlo %.6g ± %.2g", c, got, mean[k], se[k])
			}
			if se[k] > 0.01*mean[k] {
				t.Errorf("I%v: standard error %.2g too large for the test to have power", c, se[k])
			}
		}
	}
	// Exact by symmetry: E[p_1] = 1/m.
	for m := 2; m <= MaxSparseAlphabet; m++ {
		if got := math.Exp(lnI(t, 1)) - 1; math.Abs(got) > 1e-14 {
			t.Errorf("m=1: %g", got)
		}
		lj, err := logJ([]int32{1}, m-1)
		if err != nil {
			t.Fatal(err)
		}
		c := make([]int32, m)
		c[0] = 1
		if got := logMultinomial(c) + lj; math.Abs(got+math.Log(float64(m))) > 1e-14 {
			t.Errorf("ln E[p_1] for m = %d: %.17g, want %.17g", m, got, -math.Log(float64(m)))
		}
	}
}

// TestQuadratureTolerance compares ln J at the default acceptance tolerance
// with ln J accepted only when two successive grids agree to 1e−15 after at
// least five grids, for random counts with m = 1..16 and totals up to 1.6e6:
// they must agree to rounding, 4e−15 + 1e−15·|ln J| (|ln J| reaches 200).
func TestQuadratureTolerance(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	worst := 0.0
	for i := range 300 {
		m := 1 + rng.IntN(MaxSparseAlphabet)
		c := make([]int32, 0, m)
		scale := []int{2, 10, 100, 3000, 100000}[i%5]
		for range m {
			c = append(c, int32(rng.IntN(scale)))
		}
		var buf [MaxSparseAlphabet]int32
		s := sortedSupport(buf[:0], c)
		if len(s) == 0 {
			continue
		}
		zeros := m - len(s)
		a, err := logJ(s, zeros)
		if err != nil {
			t.Fatal(err)
		}
		b, err := logJTol(s, zeros, 1e-15, 5)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, math.Abs(a-b)/max(1, math.Abs(b)))
		if math.Abs(a-b) > 4e-15+1e-15*math.Abs(b) {
			t.Errorf("ln J(%v, %d zeros) = %.17g at the default tolerance, %.17g at 1e−15", s, zeros, a, b)
		}
	}
	t.Logf("worst difference %.2g·max(1, |ln J|)", worst)
}
