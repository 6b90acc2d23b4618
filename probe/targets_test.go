package probe

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vomc/vomc/bayes"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/source"
)

// window draws n symbols from one tree of prior p.
func window(t *testing.T, p source.Prior, n int, seed uint64) []byte {
	t.Helper()
	rng := source.RNG(seed, 0)
	tr, err := p.Sample(rng)
	if err != nil {
		t.Fatal(err)
	}
	s, err := source.NewSampler(tr)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.Generate(rng, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// bruteCounts is n_{s_k}(a) after x[0..t]: how many j ≤ t had, as the k
// symbols before x_j (the history padded with D zeros), the last k
// symbols of the padded x[0..t], and x_j = a.
func bruteCounts(x []byte, t, k, D, A int) []float64 {
	padded := append(make([]byte, D), x[:t+1]...)
	end := len(padded)
	out := make([]float64, A)
	for j := D; j < end; j++ {
		if slices.Equal(padded[j-k:j], padded[end-k:end]) {
			out[padded[j]]++
		}
	}
	return out
}

// TestFillTargets checks every target fill writes at known positions
// against vomc's predictors stepped here independently: row t holds, after
// observing x[0..t] (the model's row t, which predicts x[t+1]), the Bayes
// leaf posterior (bayes.State.LeafPosterior) and its arg-max, CTW(D)'s ω
// (ctw.State.Weights) and its arg-max, bayes.State.Posterior summed by
// depth, and the counts of each context length counted by brute force.
// Reading any of them one symbol early (a lag) fails: the test requires
// the values before x[t] to differ at some probed position.
func TestFillTargets(t *testing.T) {
	mixed := source.Prior{A: 3, Depths: []int{1, 2, 3}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: source.Dirichlet}
	for _, p := range []source.Prior{mixed, source.PaperPrior(2)} {
		ts, err := newTargetSet(p)
		if err != nil {
			t.Fatal(err)
		}
		multi := len(p.Depths) > 1
		if _, ok := ts.target(CTWOmegaTarget); ok != multi {
			t.Errorf("depths %v: %s present %v, want %v", p.Depths, CTWOmegaTarget, ok, multi)
		}
		T := 96
		x := window(t, p, T, 3)
		pos := []int{0, 1, 2, 7, 30, 64, T - 1}
		ex, err := ts.extractor(T)
		if err != nil {
			t.Fatal(err)
		}
		y := newMatrix(len(pos)+1, ts.cols)
		if err := ts.fill(ex, x, pos, y, 1); err != nil {
			t.Fatal(err)
		}
		D := ts.D
		cp, _ := ctw.New(ctw.Config{A: 3, D: D, Lambda: 0.15, Alpha: 0.5})
		bp, _ := bayes.New(p)
		cst, bst := cp.NewCTWState(), bp.NewBayesState()
		want := map[string][]float64{}
		post := make([]float64, bp.Components())
		lagged := map[string]bool{}
		next := 0
		for i := 0; next < len(pos); i++ {
			before := map[string][]float64{OmegaTarget: make([]float64, D+1), CTWOmegaTarget: make([]float64, D+1)}
			bst.LeafPosterior(before[OmegaTarget])
			cst.Weights(before[CTWOmegaTarget])
			cst.Observe(x[i])
			bst.Observe(x[i])
			if i != pos[next] {
				continue
			}
			row := y.row(1 + next)
			next++
			want[OmegaTarget] = make([]float64, D+1)
			bst.LeafPosterior(want[OmegaTarget])
			want[CTWOmegaTarget] = make([]float64, D+1)
			cst.Weights(want[CTWOmegaTarget])
			want[MAPTarget] = oneHot(D+1, argmax(want[OmegaTarget]))
			want[CTWMAPTarget] = oneHot(D+1, argmax(want[CTWOmegaTarget]))
			bst.Posterior(post)
			want[PosteriorTarget] = make([]float64, len(p.Depths))
			for c, w := range post {
				d, _ := bp.Component(c)
				want[PosteriorTarget][slices.Index(p.Depths, d)] += w
			}
			for k := 0; k <= D; k++ {
				want[CountsTarget(k)] = bruteCounts(x, i, k, D, 3)
			}
			if !multi && !near(want[OmegaTarget], want[CTWOmegaTarget], 1e-12) {
				t.Errorf("one depth, position %d: the leaf posterior %v is not CTW's ω %v", i, want[OmegaTarget], want[CTWOmegaTarget])
			}
			for _, tg := range ts.targets {
				if got := row[tg.lo:tg.hi]; !near(got, want[tg.Name], 1e-12) {
					t.Errorf("depths %v, position %d, %s: fill wrote %v, want %v", p.Depths, i, tg.Name, got, want[tg.Name])
				}
				if b, ok := before[tg.Name]; ok && !near(b, want[tg.Name], 1e-3) {
					lagged[tg.Name] = true
				}
			}
		}
		for _, name := range []string{OmegaTarget, CTWOmegaTarget} {
			if _, ok := ts.target(name); ok && !lagged[name] {
				t.Errorf("depths %v: %s never changed by the symbol at a probed position: the test cannot see a lag", p.Depths, name)
			}
		}
	}
}

func oneHot(n, i int) []float64 {
	v := make([]float64, n)
	v[i] = 1
	return v
}

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !(math.Abs(a[i]-b[i]) <= tol) {
			return false
		}
	}
	return true
}

// TestMixtureOmegaDiffers checks, on windows of a prior of depths 1..5 (the
// ladder's), that the leaf posterior (omega) is not CTW(5)'s ω
// (omega_ctw): their mean total-variation distance over the positions is
// well above 0, so the two targets are different questions.
func TestMixtureOmegaDiffers(t *testing.T) {
	p := source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: source.Dirichlet}
	ts, err := newTargetSet(p)
	if err != nil {
		t.Fatal(err)
	}
	om, _ := ts.target(OmegaTarget)
	oc, _ := ts.target(CTWOmegaTarget)
	T := 128
	ex, _ := ts.extractor(T)
	pos := []int{3, 15, 40, 90, 127}
	tv, n := 0.0, 0
	for w := range 10 {
		y := newMatrix(len(pos), ts.cols)
		if err := ts.fill(ex, window(t, p, T, uint64(w)), pos, y, 0); err != nil {
			t.Fatal(err)
		}
		for r := range y.n {
			row, d := y.row(r), 0.0
			for l := range om.hi - om.lo {
				d += math.Abs(row[om.lo+l] - row[oc.lo+l])
			}
			tv += d / 2
			n++
		}
	}
	if tv /= float64(n); !(tv > 0.05) {
		t.Errorf("mean TV distance between %s and %s: %.4f, want > 0.05", OmegaTarget, CTWOmegaTarget, tv)
	}
}

// TestShuffledWithinBand checks the shuffled control on a planted target
// whose mean differs strongly between the bands (100 before position 16,
// 0 after) and which the stream reads exactly within each band (y = base
// + 2·f₁ + noise): trained R² is high in every band, and the shuffled
// control, whose targets are permuted among the band's own rows, is ≈ 0 in
// every band (|R²| ≤ 0.05). Targets shuffled across all positions put the
// other bands' mean into the band's training targets and give R² far
// below 0 in the early band.
func TestShuffledWithinBand(t *testing.T) {
	ts, err := newTargetSet(source.PaperPrior(1))
	if err != nil {
		t.Fatal(err)
	}
	const T, W = 64, 6
	rng := rand.New(rand.NewPCG(4, 2))
	mk := func(name string, windows int) (*split, fmatrix) {
		s := &split{name: name}
		var f []float32
		for w := range windows {
			s.windows = append(s.windows, make([]byte, T))
			var pos []int
			for p := 0; p < T; p += 2 {
				pos = append(pos, p)
				s.win, s.at = append(s.win, w), append(s.at, p)
			}
			s.pos = append(s.pos, pos)
		}
		s.y = newMatrix(s.rows(), ts.cols)
		for r := range s.rows() {
			feat := make([]float32, W)
			for j := range feat {
				feat[j] = float32(rng.NormFloat64())
			}
			base := 0.0
			if s.at[r] < 16 {
				base = 100
			}
			feat[0] = float32(base/100 + 0.01*rng.NormFloat64())
			f = append(f, feat...)
			for _, tg := range ts.targets {
				out := s.y.row(r)[tg.lo:tg.hi]
				if tg.Class {
					out[rng.IntN(len(out))] = 1
					continue
				}
				for j := range out {
					out[j] = base + 2*float64(feat[1]) + 0.3*rng.NormFloat64()
				}
			}
		}
		return s, fmatrix{s.rows(), W, f}
	}
	tr, ftr := mk("train", 120)
	va, fva := mk("val", 40)
	te, fte := mk("test", 40)
	feats := [][]fmatrix{{ftr}, {fva}, {fte}}
	res := &Result{Streams: []string{"s"}, Bands: bands([]int{16}, T)}
	o := Options{Seed: 1, Bootstrap: 20, Events: events.Discard}
	o.defaults()
	probes, err := fitAll(context.Background(), ts, []*split{tr, va, te}, map[string][][]fmatrix{Trained: feats, Shuffled: feats, Init: feats}, res, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range probes {
		if p.Metric != "r2" || p.Condition == Init {
			continue
		}
		for b, sc := range p.Scores {
			v := float64(sc.Value)
			switch {
			case p.Condition == Trained && !(v > 0.9):
				t.Errorf("trained, %s, band %s: R² = %.3f, want > 0.9", p.Target, res.Bands[b], v)
			case p.Condition == Shuffled && !(math.Abs(v) <= 0.05):
				t.Errorf("shuffled, %s, band %s: R² = %.3f, want ≈ 0 (|R²| ≤ 0.05)", p.Target, res.Bands[b], v)
			}
		}
	}
}
