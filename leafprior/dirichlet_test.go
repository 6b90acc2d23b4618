package leafprior

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vomc/vomc/source"
)

func TestDirichlet(t *testing.T) {
	for _, tc := range []struct {
		alpha []float64
		n     []int32
		want  float64 // M(n)
	}{
		{[]float64{1, 1}, []int32{0, 0}, 1},
		{[]float64{1, 1}, []int32{1, 0}, 0.5},
		{[]float64{1, 1}, []int32{1, 1}, 1.0 / 6},
		{[]float64{1, 1}, []int32{2, 1}, 1.0 / 12},
		{[]float64{0.5, 0.5}, []int32{1, 1}, 1.0 / 8}, // KT: ½·¼
		{[]float64{0.5, 0.5}, []int32{2, 0}, 3.0 / 8}, // ½·¾
		{[]float64{0.5, 0.5, 0.5}, []int32{1, 0, 0}, 1.0 / 3},
		{[]float64{2, 1, 3}, []int32{1, 0, 1}, 2.0 / 6 * 3.0 / 7},
	} {
		d, err := NewDirichlet(tc.alpha)
		if err != nil {
			t.Fatal(err)
		}
		got := logM(t, d, tc.n...)
		if w := math.Log(tc.want); math.Abs(got-w) > 1e-14 {
			t.Errorf("Dir%v: ln M%v = %.17g, want %.17g", tc.alpha, tc.n, got, w)
		}
	}
}

// TestDirichletConsistency checks Σ_a M(n+e_a) = M(n) and that Predictive
// equals the ratios M(n+e_a)/M(n), within 1e−13 + 2e−15·|ln M| (the
// rounding of two values of ln M), and sums to 1.
func TestDirichletConsistency(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, alpha := range [][]float64{{0.5, 0.5, 0.5}, {0.1, 2, 7, 0.01}, {1, 1}} {
		d, err := NewDirichlet(alpha)
		if err != nil {
			t.Fatal(err)
		}
		A := len(alpha)
		out := make([]float64, A)
		for _, n := range countVectors(rng, A, 30, 2000) {
			lm := logM(t, d, n...)
			if err := d.Predictive(n, out); err != nil {
				t.Fatal(err)
			}
			sum, sumP := 0.0, 0.0
			for a := range A {
				n[a]++
				r := math.Exp(logM(t, d, n...) - lm)
				n[a]--
				if math.Abs(r-out[a]) > (1e-13+2e-15*math.Abs(lm))*r {
					t.Errorf("Dir%v n=%v: predictive[%d] = %v, ratio %v", alpha, n, a, out[a], r)
				}
				sum += r
				sumP += out[a]
			}
			if math.Abs(sum-1) > 1e-13+2e-15*math.Abs(lm) || math.Abs(sumP-1) > 1e-14 {
				t.Errorf("Dir%v n=%v: Σ ratios = 1%+.2g, Σ predictive = 1%+.2g", alpha, n, sum-1, sumP-1)
			}
		}
	}
}

func TestDirichletErrors(t *testing.T) {
	for _, alpha := range [][]float64{nil, {1}, {1, 0}, {1, -1}, {1, math.NaN()}, {math.Inf(1), 1}, make([]float64, 257)} {
		if _, err := NewDirichlet(alpha); err == nil {
			t.Errorf("NewDirichlet(%v) accepted", alpha)
		}
	}
	d, _ := NewDirichlet([]float64{1, 1, 1})
	if _, err := d.LogMarginal([]int32{1, 2}); err == nil {
		t.Error("LogMarginal accepted 2 counts for A = 3")
	}
	if _, err := d.LogMarginal([]int32{1, -2, 0}); err == nil {
		t.Error("LogMarginal accepted a negative count")
	}
	if err := d.Predictive([]int32{1, 2, 0}, make([]float64, 2)); err == nil {
		t.Error("Predictive accepted a short output")
	}
}

func TestFromPrior(t *testing.T) {
	dir := source.PaperPrior(3)
	sp := source.Prior{A: 3, Depths: []int{2}, Lambda: 0.3, Leaves: source.Sparse, SparseZero: 0.25}
	mixed := source.Prior{A: 4, Depths: []int{2}, Lambda: 0.3, Alpha: []float64{2}, Leaves: source.Mixed, SparseFrac: 0.2}
	big := source.Prior{A: 20, Depths: []int{1}, Lambda: 0.3, Leaves: source.Sparse}

	l, err := FromPrior(dir, source.Dirichlet)
	if d, ok := l.(*Dirichlet); err != nil || !ok || d.AlphabetSize() != 3 || d.alpha[2] != 0.5 {
		t.Errorf("FromPrior(paper, Dirichlet) = %#v, %v", l, err)
	}
	l, err = FromPrior(sp, source.Sparse)
	if s, ok := l.(*Sparse); err != nil || !ok || s.Zero() != 0.25 || s.AlphabetSize() != 3 {
		t.Errorf("FromPrior(sparse, Sparse) = %#v, %v", l, err)
	}
	sp.SparseZero = 0
	if l, err = FromPrior(sp, source.Sparse); err != nil || l.(*Sparse).Zero() != source.DefaultSparseZero {
		t.Errorf("FromPrior with SparseZero 0: %v, %v", l, err)
	}
	for _, kind := range []source.LeafKind{source.Dirichlet, source.Sparse} {
		if l, err := FromPrior(mixed, kind); err != nil || l.AlphabetSize() != 4 {
			t.Errorf("FromPrior(mixed, %v) = %v, %v", kind, l, err)
		}
	}
	for _, tc := range []struct {
		p    source.Prior
		kind source.LeafKind
		msg  string
	}{
		{dir, source.Sparse, "Dirichlet leaves"},
		{sp, source.Dirichlet, "sparse leaves"},
		{mixed, source.Mixed, "per tree"},
		{big, source.Sparse, "exceeds 16"},
		{source.Prior{A: 3}, source.Dirichlet, "depths"},
		{dir, source.LeafKind(9), "unknown"},
	} {
		if _, err := FromPrior(tc.p, tc.kind); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("FromPrior(%+v, %v) error %v, want %q", tc.p, tc.kind, err, tc.msg)
		}
	}
	for _, tc := range []struct {
		p    source.Prior
		want float64
	}{{dir, 0}, {sp, 1}, {mixed, 0.2}, {source.Prior{A: 2, Depths: []int{1}, Lambda: 0.5, Alpha: []float64{1}, Leaves: source.Mixed}, source.DefaultSparseFrac}} {
		if w, err := SparseWeight(tc.p); err != nil || w != tc.want {
			t.Errorf("SparseWeight(%+v) = %v, %v, want %v", tc.p, w, err, tc.want)
		}
	}
	if _, err := SparseWeight(source.Prior{}); err == nil {
		t.Error("SparseWeight accepted an invalid prior")
	}
}

func BenchmarkDirichletPredictive(b *testing.B) {
	d, _ := NewDirichlet([]float64{0.5, 0.5, 0.5})
	n := []int32{100, 50, 20}
	out := make([]float64, 3)
	for b.Loop() {
		if err := d.Predictive(n, out); err != nil {
			b.Fatal(err)
		}
	}
}
