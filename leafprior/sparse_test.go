package leafprior

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/vomc/vomc/source"
)

func mustSparse(t testing.TB, A int, z float64) *Sparse {
	t.Helper()
	s, err := NewSparse(A, z)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func logM(t testing.TB, l Leaf, n ...int32) float64 {
	t.Helper()
	v, err := l.LogMarginal(n)
	if err != nil {
		t.Fatalf("LogMarginal%v: %v", n, err)
	}
	return v
}

// TestSparseTwoSymbols checks M for A = 2 against its exact expansion over
// the supports: M(a, b) = (1−z)²·I(a, b) for a, b > 0 and
// M(a, 0) = (1−z)z + z²/2 + (1−z)²·I(a, 0), with I from the 256-bit
// reference.
func TestSparseTwoSymbols(t *testing.T) {
	for _, z := range []float64{0, 0.3, 0.5, 0.97, 1} {
		s := mustSparse(t, 2, z)
		for _, ab := range [][2]int{{1, 0}, {0, 1}, {5, 0}, {1, 1}, {7, 3}, {40, 60}, {1000, 0}, {2000, 1500}} {
			a, b := ab[0], ab[1]
			want := new(big.Float).SetPrec(refPrec).Mul(bigI2(a, b), big.NewFloat((1-z)*(1-z)))
			if a == 0 || b == 0 {
				want.Add(want, big.NewFloat((1-z)*z+z*z/2))
			}
			got := logM(t, s, int32(a), int32(b))
			if want.Sign() == 0 {
				if !math.IsInf(got, -1) {
					t.Errorf("z=%v: ln M(%d,%d) = %v, want −Inf", z, a, b, got)
				}
				continue
			}
			w := bigLog(want)
			if d := math.Abs(got - w); d > 2e-14+1e-15*math.Abs(w) {
				t.Errorf("z=%v: ln M(%d,%d) = %.17g, want %.17g (diff %.2g)", z, a, b, got, w, d)
			}
		}
	}
}

// TestSparseMonteCarloSource compares M(n) with the average of ∏ p_a^{n_a}
// over leaves drawn by source's own generator (one-leaf trees of
// source.Prior with depth 0), within 5 standard errors (fixed seeds; the
// standard errors are at most 2% of the values).
func TestSparseMonteCarloSource(t *testing.T) {
	for _, tc := range []struct {
		A    int
		zero float64 // Prior.SparseZero; 0 means 0.5
		ns   [][]int32
	}{
		{3, 0, [][]int32{{1, 0, 0}, {2, 0, 0}, {1, 1, 0}, {3, 0, 0}, {2, 1, 0}, {1, 1, 1}, {4, 1, 0}, {2, 2, 1}, {3, 3, 0}, {6, 0, 0}, {3, 2, 1}}},
		{4, 0.3, [][]int32{{1, 0, 0, 0}, {1, 1, 0, 0}, {2, 1, 1, 0}, {1, 1, 1, 1}, {5, 0, 0, 0}, {3, 1, 0, 0}}},
	} {
		prior := source.Prior{A: tc.A, Depths: []int{0}, Lambda: 0.5, Leaves: source.Sparse, SparseZero: tc.zero}
		l, err := FromPrior(prior, source.Sparse)
		if err != nil {
			t.Fatal(err)
		}
		const draws = 300000
		rng := source.RNG(uint64(tc.A), 17)
		sum := make([]float64, len(tc.ns))
		sum2 := make([]float64, len(tc.ns))
		for range draws {
			tree, err := prior.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			p := tree.Root.P
			for k, n := range tc.ns {
				x := 1.0
				for a, v := range n {
					x *= math.Pow(p[a], float64(v))
				}
				sum[k] += x
				sum2[k] += x * x
			}
		}
		for k, n := range tc.ns {
			mean := sum[k] / draws
			se := math.Sqrt((sum2[k]/draws - mean*mean) / draws)
			got := math.Exp(logM(t, l, n...))
			if math.Abs(got-mean) > 5*se {
				t.Errorf("A=%d zero=%v: M%v = %.6g, Monte Carlo %.6g ± %.2g", tc.A, tc.zero, n, got, mean, se)
			}
			if se > 0.02*mean {
				t.Errorf("A=%d zero=%v: M%v: standard error %.2g too large for the test to have power", tc.A, tc.zero, n, se)
			}
		}
	}
}

// countVectors returns count vectors for the consistency tests: counts of
// sequences drawn from sparse leaves, uniform random counts, and corner
// cases, with totals from 0 to maxTot.
func countVectors(rng *rand.Rand, A, many, maxTot int) [][]int32 {
	var out [][]int32
	out = append(out, make([]int32, A))
	one := make([]int32, A)
	one[A-1] = int32(maxTot)
	out = append(out, one)
	p := make([]float64, A)
	for i := range many {
		n := make([]int32, A)
		tot := rng.IntN(maxTot + 1)
		if i%4 == 0 {
			tot = rng.IntN(min(maxTot, 30) + 1)
		}
		if i%2 == 0 { // from a sparse leaf
			s := 0.0
			for a := range p {
				p[a] = 0
				if rng.IntN(2) == 0 {
					p[a] = rng.Float64()
					s += p[a]
				}
			}
			if s == 0 {
				p[rng.IntN(A)], s = 1, 1
			}
			for range tot {
				u := rng.Float64() * s
				a := 0
				for a < A-1 && u >= p[a] {
					u -= p[a]
					a++
				}
				if p[a] == 0 { // rounding at the end
					for p[a] == 0 {
						a--
					}
				}
				n[a]++
			}
		} else {
			for range tot {
				n[rng.IntN(A)]++
			}
		}
		out = append(out, n)
	}
	return out
}

// TestSparseConsistency checks Σ_a M(n+e_a) = M(n), which holds exactly,
// at many count vectors: through K, Σ_a (n_a+1)/N · K(n+e_a)/K(n) = 1 within
// 1e−13 (this tests the quadrature on its own, at every total); through
// LogMarginal within 1e−13 + 2e−15·|ln M| (the rounding of two values of
// ln M); and that Predictive equals the ratios M(n+e_a)/M(n) to the same
// tolerance and sums to 1 within 1e−14.
func TestSparseConsistency(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	worstK, worstM := 0.0, 0.0
	for _, A := range []int{2, 3, 5, 16} {
		for _, z := range []float64{0, 0.2, 0.5, 0.9, 1} {
			s := mustSparse(t, A, z)
			many, maxTot := 40, 5000
			if A == 16 {
				many, maxTot = 8, 300
			}
			if testing.Short() {
				many /= 4
			}
			for _, n := range countVectors(rng, A, many, maxTot) {
				lm := logM(t, s, n...)
				out := make([]float64, A)
				perr := s.Predictive(n, out)
				if math.IsInf(lm, -1) {
					if !errors.Is(perr, ErrZeroMarginal) {
						t.Errorf("A=%d z=%v n=%v: M = 0 but Predictive gives %v", A, z, n, perr)
					}
					continue
				}
				if perr != nil {
					t.Fatalf("A=%d z=%v n=%v: %v", A, z, n, perr)
				}
				var tot int64
				for _, v := range n {
					tot += int64(v)
				}
				var sumK, sumM, sumP float64
				nn := append([]int32(nil), n...)
				var buf [MaxSparseAlphabet]int32
				var lk float64
				if tot > 0 {
					lk, _ = s.logK(sortedSupport(buf[:0], n))
				}
				for a := range A {
					nn[a]++
					lm1 := logM(t, s, nn...)
					r := math.Exp(lm1 - lm)
					sumM += r
					sumP += out[a]
					if tot > 0 {
						lk1, err := s.logK(sortedSupport(buf[:0], nn))
						if err != nil {
							t.Fatal(err)
						}
						sumK += float64(n[a]+1) / float64(tot) * math.Exp(lk1-lk)
					}
					if d := math.Abs(out[a] - r); d > (1e-13+2e-15*math.Abs(lm))*r {
						t.Errorf("A=%d z=%v n=%v: predictive[%d] = %.17g, marginal ratio %.17g", A, z, n, a, out[a], r)
					}
					nn[a]--
				}
				if d := math.Abs(sumP - 1); d > 1e-14 {
					t.Errorf("A=%d z=%v n=%v: predictive sums to 1%+.2g", A, z, n, sumP-1)
				}
				if tot > 0 {
					worstK = max(worstK, math.Abs(sumK-1))
					if d := math.Abs(sumK - 1); d > 1e-13 {
						t.Errorf("A=%d z=%v n=%v: Σ(n_a+1)K(n+e_a)/(N·K(n)) = 1%+.2g", A, z, n, sumK-1)
					}
				}
				worstM = max(worstM, math.Abs(sumM-1))
				if d := math.Abs(sumM - 1); d > 1e-13+2e-15*math.Abs(lm) {
					t.Errorf("A=%d z=%v n=%v: Σ_a M(n+e_a)/M(n) = 1%+.2g (ln M = %.6g)", A, z, n, sumM-1, lm)
				}
			}
		}
	}
	t.Logf("worst |Σ−1|: through K %.2g, through LogMarginal %.2g", worstK, worstM)
}

// TestSparseConsistencyLarge is TestSparseConsistency's K check at totals
// up to MaxTotal − 1.
func TestSparseConsistencyLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	s := mustSparse(t, 3, 0.5)
	for _, n := range [][]int32{
		{600000, 300000, 148575}, {1048575, 0, 0}, {524288, 524287, 0}, {1048000, 575, 0}, {349525, 349525, 349525}, {100000, 20000, 3},
	} {
		var tot int64
		for _, v := range n {
			tot += int64(v)
		}
		var buf [MaxSparseAlphabet]int32
		lk, err := s.logK(sortedSupport(buf[:0], n))
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		nn := append([]int32(nil), n...)
		for a := range n {
			nn[a]++
			lk1, err := s.logK(sortedSupport(buf[:0], nn))
			if err != nil {
				t.Fatal(err)
			}
			sum += float64(n[a]+1) / float64(tot) * math.Exp(lk1-lk)
			nn[a]--
		}
		if d := math.Abs(sum - 1); d > 1e-13 {
			t.Errorf("n=%v: Σ(n_a+1)K(n+e_a)/(N·K(n)) = 1%+.2g", n, sum-1)
		}
		out := make([]float64, 3)
		if err := s.Predictive(n, out); err != nil {
			t.Fatal(err)
		}
		if _, err := s.LogMarginal(n); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSparseExtremes checks zero = 1 (every leaf one symbol, uniform) and
// zero = 0 (A normalised uniforms), and M(e_a) = 1/A for every zero.
func TestSparseExtremes(t *testing.T) {
	third := -math.Log(3)
	for _, tc := range []struct {
		A    int
		zero float64
		n    []int32
		want float64   // ln M
		pred []float64 // nil: ErrZeroMarginal
	}{
		{3, 1, []int32{0, 0, 0}, 0, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		{3, 1, []int32{0, 5, 0}, third, []float64{0, 1, 0}},
		{3, 1, []int32{1, 1, 0}, math.Inf(-1), nil},
		{3, 1, []int32{7, 0, 9}, math.Inf(-1), nil},
		{2, 0, []int32{1, 1}, math.Log(math.Ln2 - 0.5), nil},
		{2, 0, []int32{0, 1}, math.Log(0.5), nil},
		{3, 0, []int32{1, 0, 0}, third, nil},
		{16, 0, []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, -math.Log(16), nil},
		{5, 0.5, []int32{0, 0, 0, 1, 0}, -math.Log(5), nil},
		{16, 0.999, []int32{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, -math.Log(16), nil},
		{4, 1e-300, []int32{0, 0, 1, 0}, -math.Log(4), nil},
	} {
		s := mustSparse(t, tc.A, tc.zero)
		got := logM(t, s, tc.n...)
		if got != tc.want && math.Abs(got-tc.want) > 1e-14 {
			t.Errorf("A=%d zero=%v: ln M%v = %.17g, want %.17g", tc.A, tc.zero, tc.n, got, tc.want)
		}
		out := make([]float64, tc.A)
		err := s.Predictive(tc.n, out)
		switch {
		case math.IsInf(tc.want, -1):
			if !errors.Is(err, ErrZeroMarginal) {
				t.Errorf("A=%d zero=%v n=%v: Predictive error %v, want ErrZeroMarginal", tc.A, tc.zero, tc.n, err)
			}
		case err != nil:
			t.Errorf("A=%d zero=%v n=%v: %v", tc.A, tc.zero, tc.n, err)
		case tc.pred != nil:
			for a := range out {
				if math.Abs(out[a]-tc.pred[a]) > 1e-15 {
					t.Errorf("A=%d zero=%v n=%v: predictive %v, want %v", tc.A, tc.zero, tc.n, out, tc.pred)
					break
				}
			}
		}
	}
}

func TestSparseErrors(t *testing.T) {
	for _, tc := range []struct {
		A    int
		zero float64
		msg  string
	}{
		{1, 0.5, "at least 2"},
		{0, 0.5, "at least 2"},
		{MaxSparseAlphabet + 1, 0.5, "exceeds 16"},
		{3, 1.5, "outside [0,1]"},
		{3, -0.1, "outside [0,1]"},
		{3, math.NaN(), "outside [0,1]"},
		{3, math.Inf(1), "outside [0,1]"},
	} {
		if _, err := NewSparse(tc.A, tc.zero); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("NewSparse(%d, %v) = %v, want an error containing %q", tc.A, tc.zero, err, tc.msg)
		}
	}
	s := mustSparse(t, 3, 0.5)
	out := make([]float64, 3)
	for _, tc := range []struct {
		n        []int32
		out      []float64
		marginal string // "" means LogMarginal succeeds
		pred     string
	}{
		{[]int32{1, 2}, out, "2 counts", "2 counts"},
		{[]int32{1, 2, 3, 4}, out, "4 counts", "4 counts"},
		{[]int32{1, -2, 3}, out, "n[1] = -2 is negative", "n[1] = -2 is negative"},
		{[]int32{1, 2, 3}, out[:2], "", "length 2"},
		{[]int32{MaxTotal, 0, 0}, out, "", "not below MaxTotal"},
		{[]int32{MaxTotal - 1, 1, 1}, out, "exceeds MaxTotal", "not below MaxTotal"},
		{[]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32}, out, "exceeds MaxTotal", "not below MaxTotal"},
	} {
		_, err := s.LogMarginal(tc.n)
		if tc.marginal == "" && err != nil || tc.marginal != "" && (err == nil || !strings.Contains(err.Error(), tc.marginal)) {
			t.Errorf("LogMarginal(%v) error %v, want %q", tc.n, err, tc.marginal)
		}
		err = s.Predictive(tc.n, tc.out)
		if err == nil || !strings.Contains(err.Error(), tc.pred) {
			t.Errorf("Predictive(%v, len %d) error %v, want %q", tc.n, len(tc.out), err, tc.pred)
		}
	}
}

// TestSparseMemo checks that the memo is keyed by the count multiset, gives
// the same values as a fresh computation, and is safe under concurrent use.
func TestSparseMemo(t *testing.T) {
	s := mustSparse(t, 3, 0.5)
	a := logM(t, s, 5, 2, 0)
	l := s.MemoLen()
	if l != 1 {
		t.Errorf("memo has %d entries after one marginal, want 1", l)
	}
	for _, n := range [][]int32{{5, 2, 0}, {2, 0, 5}, {0, 5, 2}} {
		if b := logM(t, s, n...); b != a {
			t.Errorf("ln M%v = %v, ln M[5 2 0] = %v", n, b, a)
		}
	}
	if s.MemoLen() != l {
		t.Errorf("permuted counts added memo entries")
	}
	s.ResetMemo()
	if s.MemoLen() != 0 {
		t.Errorf("ResetMemo left %d entries", s.MemoLen())
	}

	// Concurrent Predictive calls agree with a serial run on a fresh Sparse.
	rng := rand.New(rand.NewPCG(1, 1))
	ns := countVectors(rng, 3, 200, 60)
	want := make([][]float64, len(ns))
	ref := mustSparse(t, 3, 0.5)
	for i, n := range ns {
		want[i] = make([]float64, 3)
		if err := ref.Predictive(n, want[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			out := make([]float64, 3)
			for r := range len(ns) {
				i := (r*7 + g*13) % len(ns)
				if err := s.Predictive(ns[i], out); err != nil {
					errs <- err
					return
				}
				for a := range out {
					if out[a] != want[i][a] {
						errs <- fmt.Errorf("n=%v: concurrent %v, serial %v", ns[i], out, want[i])
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMemoBound fills a memo with a small per-shard limit to twice its
// capacity and checks that no shard grew past the limit.
func TestMemoBound(t *testing.T) {
	const per = 8
	m := memo{limit: per}
	key := []byte{0, 0, 0, 0}
	for i := 0; i < 2*per*memoShards; i++ {
		key[0], key[1], key[2] = byte(i), byte(i>>8), byte(i>>16)
		m.put(key, float64(i))
	}
	total := 0
	for i := range m.shards {
		l := len(m.shards[i].m)
		if l > per {
			t.Errorf("shard %d holds %d entries, more than %d", i, l, per)
		}
		total += l
	}
	if total > per*memoShards || total < per {
		t.Errorf("memo holds %d entries, want between %d and %d", total, per, per*memoShards)
	}
}

func BenchmarkSparsePredictive(b *testing.B) {
	n := []int32{100, 50, 20}
	out := make([]float64, 3)
	b.Run("cold", func(b *testing.B) {
		s := mustSparse(b, 3, 0.5)
		for b.Loop() {
			s.ResetMemo()
			if err := s.Predictive(n, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		s := mustSparse(b, 3, 0.5)
		for b.Loop() {
			if err := s.Predictive(n, out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold-A16", func(b *testing.B) {
		s := mustSparse(b, 16, 0.5)
		n := []int32{100, 50, 20, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
		out := make([]float64, 16)
		for b.Loop() {
			s.ResetMemo()
			if err := s.Predictive(n, out); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSparseLogMarginal(b *testing.B) {
	for _, n := range [][]int32{{100, 50, 20}, {600000, 300000, 148575}} {
		b.Run(fmt.Sprint("cold-", n), func(b *testing.B) {
			s := mustSparse(b, 3, 0.5)
			for b.Loop() {
				s.ResetMemo()
				if _, err := s.LogMarginal(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("warm", func(b *testing.B) {
		s := mustSparse(b, 3, 0.5)
		n := []int32{100, 50, 20}
		for b.Loop() {
			if _, err := s.LogMarginal(n); err != nil {
				b.Fatal(err)
			}
		}
	})
}
