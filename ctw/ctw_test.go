package ctw

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// randomSeq draws n symbols from a fixed random order-2 chain so that CTW
// has structure to find (i.i.d. uniform data would leave ω near its prior).
func randomSeq(rng *rand.Rand, A, n int) []byte {
	trans := make([][]float64, A*A)
	for i := range trans {
		p := make([]float64, A)
		s := 0.0
		for a := range p {
			p[a] = rng.Float64() * rng.Float64()
			s += p[a]
		}
		for a := range p {
			p[a] /= s
		}
		trans[i] = p
	}
	x := make([]byte, n)
	for i := range x {
		ctx := 0
		if i >= 2 {
			ctx = int(x[i-1])*A + int(x[i-2])
		}
		u := rng.Float64()
		a := 0
		for ; a < A-1; a++ {
			u -= trans[ctx][a]
			if u < 0 {
				break
			}
		}
		x[i] = byte(a)
	}
	return x
}

func relDiff(a, b float64) float64 {
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

func mustNew(t testing.TB, c Config) *Predictor {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFormsAgree checks that the fast ω-blending form, the literal Theorem 2
// and the ratio of marginal likelihoods give the same distribution (≤1e-12
// relative) at every position, under every initial-context convention.
func TestFormsAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		A, D  int
		lam   float64
		alpha float64
	}{
		{2, 0, 0.5, 0.5}, {2, 3, 0.5, 0.5}, {3, 5, 0.15, 0.5}, {4, 4, 0.3, 1},
		{3, 1, 0.9, 0.1}, {5, 3, 0.15, 2}, {20, 2, 0.2, 0.5}, {3, 12, 0.15, 0.5},
		{40, 6, 0.3, 0.5}, // a hash-map trie (A > smallA, b·D > 30)
	} {
		for _, init := range []Init{Pad, Condition, Shorter} {
			t.Run(fmt.Sprintf("A%d_D%d_%v", tc.A, tc.D, init), func(t *testing.T) {
				x := randomSeq(rng, tc.A, 1500)
				cfg := Config{A: tc.A, D: tc.D, Lambda: tc.lam, Alpha: tc.alpha, Init: init}
				states := make([]State, 3)
				for f := Blend; f <= Ratio; f++ {
					c := cfg
					c.Form = f
					states[f] = mustNew(t, c).NewCTWState()
				}
				dist := make([][]float64, 3)
				om := make([][]float64, 3)
				for f := range dist {
					dist[f] = make([]float64, tc.A)
					om[f] = make([]float64, tc.D+1)
				}
				worst := 0.0
				for i, a := range x {
					for f, st := range states {
						st.Predict(dist[f])
						st.Weights(om[f])
					}
					sum := 0.0
					for s := 0; s < tc.A; s++ {
						sum += dist[0][s]
						for f := 1; f < 3; f++ {
							worst = math.Max(worst, relDiff(dist[0][s], dist[f][s]))
						}
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("position %d: distribution sums to %v", i, sum)
					}
					for l := range om[0] {
						if math.Abs(om[0][l]-om[1][l]) > 1e-12 {
							t.Fatalf("position %d: ω_%d blend %v vs theorem1 %v", i, l, om[0][l], om[1][l])
						}
					}
					for _, st := range states {
						st.Observe(a)
					}
				}
				if worst > 1e-12 {
					t.Errorf("max relative difference between forms %.3g > 1e-12", worst)
				}
				for f := 1; f < 3; f++ {
					if d := relDiff(states[0].LogML(), states[f].LogML()); d > 1e-12 {
						t.Errorf("LogML blend %v vs %v %v", states[0].LogML(), Form(f), states[f].LogML())
					}
				}
				if init != Shorter {
					batch, err := LogMarginalLikelihood(cfg, x)
					if err != nil {
						t.Fatal(err)
					}
					if d := relDiff(batch, states[0].LogML()); d > 1e-12 {
						t.Errorf("batch log ML %v vs sequential %v", batch, states[0].LogML())
					}
					if d := relDiff(batch, RootLogPW(states[1])); d > 1e-12 {
						t.Errorf("batch log ML %v vs root ℓ^w %v", batch, RootLogPW(states[1]))
					}
				}
			})
		}
	}
}

// bfTree is a context tree enumerated by brute force: kids == nil for a leaf.
type bfTree struct{ kids []*bfTree }

// allTrees enumerates every tree of depth ≤ D−l rooted at depth l, with its
// log prior ln π_D (the bounded branching process of Section 4.2).
func allTrees(A, D, l int, lam float64) ([]*bfTree, []float64) {
	if l == D {
		return []*bfTree{{}}, []float64{0}
	}
	trees := []*bfTree{{}}
	pri := []float64{math.Log(lam)}
	sub, subP := allTrees(A, D, l+1, lam)
	idx := make([]int, A)
	for {
		k := &bfTree{kids: make([]*bfTree, A)}
		lp := math.Log(1 - lam)
		for q := 0; q < A; q++ {
			k.kids[q] = sub[idx[q]]
			lp += subP[idx[q]]
		}
		trees = append(trees, k)
		pri = append(pri, lp)
		q := 0
		for q < A {
			idx[q]++
			if idx[q] < len(sub) {
				break
			}
			idx[q] = 0
			q++
		}
		if q == A {
			break
		}
	}
	return trees, pri
}

// bfLogML is ln Σ_T π(T) Π_{s∈L(T)} p^e_s for the sequence x with the zero
// padding context, computed by enumerating all trees.
func bfLogML(trees []*bfTree, pri []float64, A, D int, alpha float64, x []byte) float64 {
	full := append(make([]byte, D), x...)
	terms := make([]float64, len(trees))
	for ti, T := range trees {
		// Leaves are shared between subtrees, so count by suffix, not node.
		counts := map[string][]int{}
		for i := D; i < len(full); i++ {
			node := T
			j := 1
			for ; node.kids != nil; j++ {
				node = node.kids[full[i-j]]
			}
			key := string(full[i-j+1 : i])
			if counts[key] == nil {
				counts[key] = make([]int, A)
			}
			counts[key][full[i]]++
		}
		v := pri[ti]
		for _, c := range counts {
			tot := 0
			for _, n := range c {
				v += lgamma(float64(n)+alpha) - lgamma(alpha)
				tot += n
			}
			v += lgamma(float64(A)*alpha) - lgamma(float64(tot)+float64(A)*alpha)
		}
		terms[ti] = v
	}
	mx := math.Inf(-1)
	for _, v := range terms {
		mx = math.Max(mx, v)
	}
	s := 0.0
	for _, v := range terms {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

// TestBruteForceBayes checks CTW's predictive probabilities against the
// Bayes mixture over every tree of the prior, with the Dirichlet leaves
// integrated in closed form.
func TestBruteForceBayes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		A, D  int
		lam   float64
		alpha float64
	}{{2, 1, 0.3, 0.5}, {2, 2, 0.15, 0.5}, {3, 1, 0.15, 0.5}, {3, 2, 0.15, 0.5}, {3, 2, 0.6, 1.5}} {
		trees, pri := allTrees(tc.A, tc.D, 0, tc.lam)
		total := 0.0
		for _, v := range pri {
			total += math.Exp(v)
		}
		if math.Abs(total-1) > 1e-12 {
			t.Fatalf("prior over %d trees sums to %v", len(trees), total)
		}
		x := randomSeq(rng, tc.A, 40)
		st := mustNew(t, Config{A: tc.A, D: tc.D, Lambda: tc.lam, Alpha: tc.alpha}).NewCTWState()
		dist := make([]float64, tc.A)
		worst := 0.0
		for i := 0; i <= len(x); i++ {
			st.Predict(dist)
			base := bfLogML(trees, pri, tc.A, tc.D, tc.alpha, x[:i])
			ext := append(append([]byte(nil), x[:i]...), 0)
			for a := 0; a < tc.A; a++ {
				ext[i] = byte(a)
				want := math.Exp(bfLogML(trees, pri, tc.A, tc.D, tc.alpha, ext) - base)
				worst = math.Max(worst, relDiff(want, dist[a]))
			}
			if i < len(x) {
				st.Observe(x[i])
			}
		}
		if worst > 1e-12 {
			t.Errorf("A=%d D=%d: CTW differs from the brute-force Bayes predictive by %.3g (relative)", tc.A, tc.D, worst)
		}
	}
}

// TestWillemsVector is the example of Willems, Shtarkov and Tjalkens (1995):
// x_1^7 = 0110100 with past x_{-2}^0 = 010, D = 3, KT estimator, λ = 1/2, gives
// P_w = 95/32768 at the root.
func TestWillemsVector(t *testing.T) {
	x := []byte{0, 1, 0, 0, 1, 1, 0, 1, 0, 0}
	cfg := Config{A: 2, D: 3, Lambda: 0.5, Alpha: 0.5, Init: Condition}
	want := math.Log(95.0 / 32768.0)
	got, err := LogMarginalLikelihood(cfg, x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("batch: ln P_w = %v, want ln(95/32768) = %v", got, want)
	}
	for f := Blend; f <= Ratio; f++ {
		c := cfg
		c.Form = f
		st := mustNew(t, c).NewCTWState()
		for _, a := range x {
			st.Observe(a)
		}
		if math.Abs(st.LogML()-want) > 1e-12 {
			t.Errorf("%v: ln P_w = %v, want %v", f, st.LogML(), want)
		}
	}
}

// TestMAPBruteForce compares MAPTree with the argmax over all trees.
func TestMAPBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		A, D int
		lam  float64
		n    int
	}{{2, 2, 0.15, 200}, {3, 2, 0.15, 300}, {3, 2, 0.5, 50}, {3, 1, 0.15, 5}, {3, 2, 0.15, 0}} {
		trees, pri := allTrees(tc.A, tc.D, 0, tc.lam)
		x := randomSeq(rng, tc.A, tc.n)
		best, bestV := -1, math.Inf(-1)
		for i := range trees {
			v := pri[i] + bfLogML([]*bfTree{trees[i]}, []float64{0}, tc.A, tc.D, 0.5, x)
			if v > bestV {
				best, bestV = i, v
			}
		}
		c, err := CountSequence(Config{A: tc.A, D: tc.D, Lambda: tc.lam, Alpha: 0.5}, x)
		if err != nil {
			t.Fatal(err)
		}
		m := c.MAPTree()
		if !sameShape(trees[best], m.Tree.Root) {
			t.Errorf("A=%d D=%d n=%d: MAP tree differs from brute-force argmax", tc.A, tc.D, tc.n)
		}
		wantPost := bfLogML(trees[best:best+1], pri[best:best+1], tc.A, tc.D, 0.5, x) - bfLogML(trees, pri, tc.A, tc.D, 0.5, x)
		if math.Abs(m.LogPosterior-wantPost) > 1e-10 {
			t.Errorf("log posterior %v, want %v", m.LogPosterior, wantPost)
		}
	}
}

func sameShape(b *bfTree, n *source.Node) bool {
	if (b.kids == nil) != (n.Children == nil) {
		return false
	}
	for q := range b.kids {
		if !sameShape(b.kids[q], n.Children[q]) {
			return false
		}
	}
	return true
}

// TestLongSequenceNoUnderflow runs 2e6 symbols: LogML stays finite and equal
// to the batch value, and ω stays a distribution.
func TestLongSequenceNoUnderflow(t *testing.T) {
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	x := randomSeq(rand.New(rand.NewPCG(9, 9)), 3, n)
	cfg := Config{A: 3, D: 5, Lambda: 0.15, Alpha: 0.5}
	st := mustNew(t, cfg).NewCTWState()
	for _, a := range x {
		st.Observe(a)
	}
	batch, err := LogMarginalLikelihood(cfg, x)
	if err != nil {
		t.Fatal(err)
	}
	if math.IsInf(st.LogML(), 0) || math.IsNaN(st.LogML()) || relDiff(batch, st.LogML()) > 1e-10 {
		t.Errorf("sequential %v vs batch %v", st.LogML(), batch)
	}
	om := make([]float64, 6)
	st.Weights(om)
	s := 0.0
	for _, w := range om {
		s += w
	}
	if math.Abs(s-1) > 1e-12 {
		t.Errorf("ω sums to %v", s)
	}
}

// TestBigAlphabetTrie exercises the hash-map trie (A > 16) and the inline
// trie (dense too large) against the literal Theorem 2.
func TestBigAlphabetTrie(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct{ A, D int }{{256, 3}, {40, 3}, {4, 16}} {
		x := make([]byte, 3000)
		for i := range x {
			if i > 0 && rng.IntN(3) > 0 {
				x[i] = byte((int(x[i-1]) + 1 + rng.IntN(2)) % tc.A)
			} else {
				x[i] = byte(rng.IntN(tc.A))
			}
		}
		cfg := Config{A: tc.A, D: tc.D, Lambda: 0.15, Alpha: 0.5}
		fast := mustNew(t, cfg).NewCTWState()
		if fast.(*blendState).s.dense {
			t.Fatalf("A=%d D=%d: expected the trie layout", tc.A, tc.D)
		}
		cfg.Form = Theorem1
		ref := mustNew(t, cfg).NewCTWState()
		p1, p2 := make([]float64, tc.A), make([]float64, tc.A)
		for i, a := range x {
			fast.Predict(p1)
			ref.Predict(p2)
			for s := range p1 {
				if relDiff(p1[s], p2[s]) > 1e-12 {
					t.Fatalf("A=%d position %d symbol %d: %v vs %v", tc.A, i, s, p1[s], p2[s])
				}
			}
			fast.Observe(a)
			ref.Observe(a)
		}
	}
}

// TestSaturation: a tiny memory budget truncates paths but predictions stay
// normalised and Saturated reports it.
func TestSaturation(t *testing.T) {
	cfg := Config{A: 40, D: 6, Lambda: 0.15, Alpha: 0.5, MaxMemory: 200 * nodeBytes(40, Blend)}
	st := mustNew(t, cfg).NewCTWState()
	rng := rand.New(rand.NewPCG(1, 1))
	p := make([]float64, 40)
	for i := 0; i < 2000; i++ {
		st.Predict(p)
		s := 0.0
		for _, v := range p {
			s += v
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("sum %v", s)
		}
		st.Observe(byte(rng.IntN(40)))
	}
	if st.Saturated() == 0 {
		t.Error("expected saturated positions")
	}
	if err := CheckMemory(Config{A: 256, D: 12, Lambda: 0.5, Alpha: 0.5}, 1e9); err == nil {
		t.Error("CheckMemory accepted 1e9 bytes at D=12")
	}
	if err := CheckMemory(Config{A: 3, D: 5, Lambda: 0.5, Alpha: 0.5}, 1e9); err != nil {
		t.Errorf("CheckMemory refused a 364-node tree: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{A: 1, D: 2, Lambda: 0.5, Alpha: 0.5},
		{A: 3, D: -1, Lambda: 0.5, Alpha: 0.5},
		{A: 3, D: 2, Lambda: 0, Alpha: 0.5},
		{A: 3, D: 2, Lambda: 1, Alpha: 0.5},
		{A: 3, D: 2, Lambda: math.NaN(), Alpha: 0.5},
		{A: 3, D: 2, Lambda: 0.5, Alpha: 0},
		{A: 3, D: 2, Lambda: 0.5, AlphaVec: []float64{1, 1}},
		{A: 3, D: 2, Lambda: 0.5, Alpha: 0.5, Init: 7},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted an invalid configuration", c)
		}
	}
	if _, err := LogMarginalLikelihood(Config{A: 3, D: 2, Lambda: 0.5, Alpha: 0.5}, []byte{0, 1, 3}); err == nil {
		t.Error("symbol 3 accepted for A=3")
	}
}

// TestPredictorInterface runs CTW through predict.LogLoss: the sum of
// per-position losses is −LogML.
func TestPredictorInterface(t *testing.T) {
	x := randomSeq(rand.New(rand.NewPCG(2, 2)), 3, 500)
	cfg := Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5}
	p := mustNew(t, cfg)
	loss := make([]float64, len(x))
	total, err := predict.LogLoss(p, x, loss)
	if err != nil {
		t.Fatal(err)
	}
	ml, _ := LogMarginalLikelihood(cfg, x)
	if relDiff(total, -ml) > 1e-12 {
		t.Errorf("Σ loss %v vs −ln P %v", total, -ml)
	}
	if p.Name() != "CTW(D=3,λ=0.15,α=0.5)" {
		t.Errorf("name %q", p.Name())
	}
}

// TestFreeze: after Freeze no count changes, the prediction depends only on
// the current context (equal contexts at different later times give equal
// distributions), and LogML adds the frozen model's log probabilities.
func TestFreeze(t *testing.T) {
	x := randomSeq(rand.New(rand.NewPCG(8, 8)), 3, 3000)
	for f := Blend; f <= Ratio; f++ {
		cfg := Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5, Form: f}
		st := mustNew(t, cfg).NewCTWState()
		for _, a := range x[:2000] {
			st.Observe(a)
		}
		st.(predict.Freezer).Freeze()
		var root func() uint32
		switch s := st.(type) {
		case *blendState:
			root = func() uint32 { return s.s.tot[0] }
		case *logState:
			root = func() uint32 { return s.s.tot[0] }
		}
		seen := map[string][]float64{}
		ml := st.LogML()
		for i := 2000; i < len(x); i++ {
			p := make([]float64, 3)
			st.Predict(p)
			ctx := string(x[i-3 : i])
			if prev, ok := seen[ctx]; ok {
				for s := range p {
					if p[s] != prev[s] {
						t.Fatalf("%v position %d: same context, prediction changed: %v vs %v", f, i, p, prev)
					}
				}
			}
			seen[ctx] = p
			ml += math.Log(p[x[i]])
			st.Observe(x[i])
		}
		if root() != 2000 {
			t.Errorf("%v: root count %d after freezing at 2000", f, root())
		}
		if math.Abs(st.LogML()-ml) > 1e-9*math.Abs(ml) {
			t.Errorf("%v: LogML %v, want %v", f, st.LogML(), ml)
		}
	}
}
