package bayes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/internal/logexp"
	"github.com/vomc/vomc/leafprior"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// enumTree is one context tree of the prior: its leaves (context suffixes,
// most recent symbol first) and ln π_D(T).
type enumTree struct {
	leaves  [][]byte
	lnPrior float64
}

// enumerate lists every context tree of maximum depth D over A symbols with
// its prior probability under π_CTW(D, λ): a node at depth d < D is a leaf
// with probability λ, otherwise it has A children; nodes at depth D are
// leaves. It is the brute-force definition the recursions are checked
// against.
func enumerate(A, D int, lambda float64) []enumTree {
	var grow func(ctx []byte) []enumTree
	grow = func(ctx []byte) []enumTree {
		if len(ctx) == D {
			return []enumTree{{leaves: [][]byte{append([]byte(nil), ctx...)}}}
		}
		out := []enumTree{{leaves: [][]byte{append([]byte(nil), ctx...)}, lnPrior: math.Log(lambda)}}
		// every combination of the children's subtrees
		combos := []enumTree{{lnPrior: math.Log1p(-lambda)}}
		for q := range A {
			sub := grow(append(append([]byte(nil), ctx...), byte(q)))
			var next []enumTree
			for _, c := range combos {
				for _, s := range sub {
					leaves := append(append([][]byte(nil), c.leaves...), s.leaves...)
					next = append(next, enumTree{leaves: leaves, lnPrior: c.lnPrior + s.lnPrior})
				}
			}
			combos = next
		}
		return append(out, combos...)
	}
	return grow(nil)
}

// bruteLogML is ln Σ_T π(T) Π_{s∈L(T)} M(n_s(x)) for one depth, with the
// initial context 0^D: the counts of each leaf are found by matching every
// symbol's context (most recent first) against the leaves.
func bruteLogML(A, D int, lambda float64, lnM func(n []int32) float64, x []byte) float64 {
	padded := append(make([]byte, D), x...)
	total := math.Inf(-1)
	for _, T := range enumerate(A, D, lambda) {
		counts := make([][]int32, len(T.leaves))
		for i := range counts {
			counts[i] = make([]int32, A)
		}
		for t := D; t < len(padded); t++ {
			found := false
			for i, s := range T.leaves {
				match := true
				for l, q := range s {
					if padded[t-1-l] != q {
						match = false
						break
					}
				}
				if match {
					counts[i][padded[t]]++
					found = true
					break
				}
			}
			if !found {
				panic("no leaf for a context")
			}
		}
		lp := T.lnPrior
		for _, n := range counts {
			lp += lnM(n)
		}
		total = logexp.Add(total, lp)
	}
	return total
}

// lnDirichlet is the Dirichlet(α) marginal ln Γ(Aα)−ln Γ(Aα+n)+Σ ln Γ(α+n_a)−ln Γ(α).
func lnDirichlet(alpha float64) func(n []int32) float64 {
	return func(n []int32) float64 {
		s, tot := 0.0, 0.0
		for _, c := range n {
			a, _ := math.Lgamma(alpha + float64(c))
			b, _ := math.Lgamma(alpha)
			s += a - b
			tot += float64(c)
		}
		A := float64(len(n))
		a, _ := math.Lgamma(A * alpha)
		b, _ := math.Lgamma(A*alpha + tot)
		return s + a - b
	}
}

// bruteMixture is ln P(x) under a prior with the given components.
type bruteComp struct {
	D       int
	lnPrior float64
	lnM     func(n []int32) float64
}

func bruteMixLogML(A int, lambda float64, comps []bruteComp, x []byte) float64 {
	total := math.Inf(-1)
	for _, c := range comps {
		total = logexp.Add(total, c.lnPrior+bruteLogML(A, c.D, lambda, c.lnM, x))
	}
	return total
}

// checkAgainstBrute compares the predictor's predictive distribution at
// every position of x with P(x_1^t a)/P(x_1^t) from the enumeration.
func checkAgainstBrute(t *testing.T, pr *Predictor, comps []bruteComp, x []byte, tol float64) {
	t.Helper()
	A := pr.AlphabetSize()
	st := pr.NewBayesState()
	p := make([]float64, A)
	lambda := pr.Prior().Lambda
	for i := 0; i <= len(x); i++ {
		st.Predict(p)
		base := bruteMixLogML(A, lambda, comps, x[:i])
		if got := st.LogML(); !(math.Abs(got-base) <= tol*(1+math.Abs(base))) && !(math.IsInf(got, -1) && math.IsInf(base, -1)) {
			t.Fatalf("%s: position %d: LogML %.15g, brute force %.15g", pr.Name(), i, got, base)
		}
		for a := range A {
			want := math.Exp(bruteMixLogML(A, lambda, comps, append(append([]byte(nil), x[:i]...), byte(a))) - base)
			if !(math.Abs(p[a]-want) <= tol) { // NaN fails
				t.Fatalf("%s: position %d symbol %d: P = %.15g, brute force %.15g", pr.Name(), i, a, p[a], want)
			}
		}
		if i < len(x) {
			st.Observe(x[i])
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
}

func randomSeq(rng *rand.Rand, A, n int, skew bool) []byte {
	x := make([]byte, n)
	for i := range x {
		if skew && i > 0 && rng.Float64() < 0.6 {
			x[i] = x[i-1] // repetitive sequences reach deeper contexts
		} else {
			x[i] = byte(rng.IntN(A))
		}
	}
	return x
}

// TestDirichletAgainstEnumeration checks the mixture over depths with
// Dirichlet leaves against the brute-force sum over every tree of the
// prior, including repeated depths (which weight a depth).
func TestDirichletAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		A      int
		depths []int
		alpha  float64
	}{
		{2, []int{1, 2, 3}, 0.5},
		{2, []int{0, 2, 2}, 0.7},
		{3, []int{1, 2}, 0.5},
		{3, []int{2}, 1.5},
	} {
		p := source.Prior{A: c.A, Depths: c.depths, Lambda: 0.3, Alpha: []float64{c.alpha}, Leaves: source.Dirichlet}
		pr, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		var comps []bruteComp
		for _, D := range c.depths {
			comps = append(comps, bruteComp{D: D, lnPrior: -math.Log(float64(len(c.depths))), lnM: lnDirichlet(c.alpha)})
		}
		for k := range 3 {
			checkAgainstBrute(t, pr, comps, randomSeq(rng, c.A, 9, k > 0), 1e-12)
		}
	}
}

// TestSparseAgainstEnumeration checks sparse and mixed leaves the same way,
// with leafprior's marginal as M.
func TestSparseAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		A      int
		depths []int
		leaves source.LeafKind
		frac   float64
		zero   float64
	}{
		{2, []int{1, 2}, source.Sparse, 0, 0.4},
		{3, []int{0, 1, 2}, source.Mixed, 0.3, 0.4},
		{3, []int{2}, source.Sparse, 0, 0.4},
		// z = 1: every sparse leaf is one symbol, so most sequences are
		// impossible under the sparse components (P_w = 0 at nodes)
		{3, []int{1, 2, 3}, source.Mixed, 0.5, 1},
		{2, []int{1, 2}, source.Mixed, 0.5, 1},
	} {
		p := source.Prior{A: c.A, Depths: c.depths, Lambda: 0.25, Alpha: []float64{0.5}, Leaves: c.leaves, SparseZero: c.zero, SparseFrac: c.frac}
		pr, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := leafprior.NewSparse(c.A, c.zero)
		if err != nil {
			t.Fatal(err)
		}
		lnSparse := func(n []int32) float64 {
			v, err := sp.LogMarginal(n)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		var comps []bruteComp
		for _, D := range c.depths {
			w := -math.Log(float64(len(c.depths)))
			switch c.leaves {
			case source.Sparse:
				comps = append(comps, bruteComp{D, w, lnSparse})
			case source.Mixed:
				comps = append(comps, bruteComp{D, w + math.Log(c.frac), lnSparse}, bruteComp{D, w + math.Log1p(-c.frac), lnDirichlet(0.5)})
			}
		}
		for k := range 3 {
			checkAgainstBrute(t, pr, comps, randomSeq(rng, c.A, 8+4*int(c.zero), k > 0), 1e-11)
		}
	}
}

// TestTreeMatchesCTW checks the generic recursion (tree.go) with Dirichlet
// leaves against package ctw, the independent implementation, over long
// sequences: log marginal likelihood and every predictive to 1e-12.
func TestTreeMatchesCTW(t *testing.T) {
	for _, c := range []struct{ A, D int }{{2, 0}, {2, 4}, {3, 5}, {5, 2}} {
		alpha := 0.5
		tr := &tree{A: c.A, D: c.D, lnLam: math.Log(0.15), ln1Lam: math.Log1p(-0.15), leaf: mustDirichlet(t, c.A, alpha)}
		cp, err := ctw.New(ctw.Config{A: c.A, D: c.D, Lambda: 0.15, Alpha: alpha})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(c.A), uint64(c.D)))
		x := randomSeq(rng, c.A, 2000, true)
		a, b := tr.newState(), cp.NewCTWState()
		p, q := make([]float64, c.A), make([]float64, c.A)
		for i, s := range x {
			a.predict(p)
			b.Predict(q)
			for k := range p {
				if math.Abs(p[k]-q[k]) > 1e-12 {
					t.Fatalf("A=%d D=%d position %d: tree %v, ctw %v", c.A, c.D, i, p, q)
				}
			}
			a.observe(s)
			b.Observe(s)
		}
		if d := math.Abs(a.logML() - b.LogML()); d > 1e-12*math.Abs(b.LogML()) {
			t.Errorf("A=%d D=%d: log ML %.15g vs ctw %.15g", c.A, c.D, a.logML(), b.LogML())
		}
	}
}

func mustDirichlet(t testing.TB, A int, alpha float64) Leaf {
	al := make([]float64, A)
	for i := range al {
		al[i] = alpha
	}
	d, err := leafprior.NewDirichlet(al)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOneDepthIsCTW checks that a single depth with Dirichlet leaves gives
// CTW's numbers (the paper's case where CTW is Bayes-optimal).
func TestOneDepthIsCTW(t *testing.T) {
	p := source.PaperPrior(3)
	pr, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := ctw.New(ctw.Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5})
	x := randomSeq(rand.New(rand.NewPCG(5, 6)), 3, 3000, true)
	if d := maxDiff(pr, cp, x); d > 1e-12 {
		t.Errorf("single depth: max |Bayes − CTW| = %g", d)
	}
}

func maxDiff(a, b predict.Predictor, x []byte) float64 {
	A := a.AlphabetSize()
	sa, sb := a.NewState(), b.NewState()
	p, q := make([]float64, A), make([]float64, A)
	worst := 0.0
	for _, s := range x {
		sa.Predict(p)
		sb.Predict(q)
		for k := range p {
			worst = max(worst, math.Abs(p[k]-q[k]))
		}
		sa.Observe(s)
		sb.Observe(s)
	}
	return worst
}

// meanLoss is the mean log loss in nats/symbol of pr over the windows.
func meanLoss(pr predict.Predictor, windows [][]byte) float64 {
	A := pr.AlphabetSize()
	p := make([]float64, A)
	sum, n := 0.0, 0
	for _, x := range windows {
		st := pr.NewState()
		for _, s := range x {
			st.Predict(p)
			sum -= math.Log(p[s])
			n++
			st.Observe(s)
		}
	}
	return sum / float64(n)
}

// generate draws one fresh window per tree of the prior (initial context
// 0^D, as vomc's data sets).
func generate(t testing.TB, p source.Prior, trees, n int, seed uint64) [][]byte {
	var out [][]byte
	for i := range trees {
		rng := source.RNG(seed, uint64(i))
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
		out = append(out, x)
	}
	return out
}

// TestBeatsEveryCTW checks, on data generated from mixed-depth priors, that
// the Bayes predictor's mean loss is below that of CTW at every depth of
// the prior (Bayes is optimal in expectation; the margin at these sizes is
// many standard errors).
func TestBeatsEveryCTW(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and evaluates 600 windows")
	}
	for _, leaves := range []source.LeafKind{source.Dirichlet, source.Mixed} {
		p := source.Prior{A: 3, Depths: []int{1, 2, 3}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: leaves}
		pr, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		w := generate(t, p, 300, 128, 11)
		lb := meanLoss(pr, w)
		for _, D := range p.Depths {
			cp, _ := ctw.New(ctw.Config{A: 3, D: D, Lambda: 0.15, Alpha: 0.5})
			if lc := meanLoss(cp, w); !(lb < lc) {
				t.Errorf("%v leaves: Bayes %.5f nats/symbol, CTW(D=%d) %.5f: Bayes should be lower", leaves, lb, D, lc)
			}
		}
	}
}

// TestPosterior checks that the posterior over depths concentrates on the
// generating depth and sums to 1.
func TestPosterior(t *testing.T) {
	p := source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}}
	pr, _ := New(p)
	gen := source.PaperPrior(1)
	gen.Lambda = 0.01 // a full depth-1 tree
	x := generate(t, gen, 1, 4000, 7)[0]
	st := pr.NewBayesState()
	for _, s := range x {
		st.Observe(s)
	}
	w := make([]float64, pr.Components())
	st.Posterior(w)
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("posterior sums to %v", sum)
	}
	// All depths can represent a depth-1 source, but the Occam factor of
	// the deeper trees' prior favours D = 1.
	if D, _ := pr.Component(0); D != 1 || w[0] < 0.5 {
		t.Errorf("posterior %v: want most of the mass on D=1", w)
	}
}

func TestName(t *testing.T) {
	for _, c := range []struct {
		p    source.Prior
		want string
	}{
		{source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}}, "Bayes(D=1..5,λ=0.15,α=0.5)"},
		{source.Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}}, "Bayes(D=3,λ=0.15,α=0.5)"},
		{source.Prior{A: 3, Depths: []int{1, 3}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: source.Mixed}, "Bayes(D=1,3,λ=0.15,α=0.5,mixed 0.5 sparse z=0.5)"},
		{source.Prior{A: 2, Depths: []int{2}, Lambda: 0.2, Leaves: source.Sparse, SparseZero: 0.3}, "Bayes(D=2,λ=0.2,sparse z=0.3)"},
	} {
		pr, err := New(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Name() != c.want {
			t.Errorf("name %q, want %q", pr.Name(), c.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, p := range []source.Prior{
		{A: 3, Depths: []int{2}, Lambda: 1.5, Alpha: []float64{0.5}},
		{A: 1, Depths: []int{2}, Lambda: 0.5, Alpha: []float64{0.5}},
		{A: 200, Depths: []int{1}, Lambda: 0.5, Leaves: source.Sparse},
	} {
		if _, err := New(p); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

func ExampleNew() {
	pr, err := New(source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}})
	if err != nil {
		panic(err)
	}
	st := pr.NewState()
	for _, s := range []byte{0, 1, 2, 0, 1, 2, 0, 1} {
		st.Observe(s)
	}
	p := make([]float64, 3)
	st.Predict(p)
	fmt.Printf("%s: P(next = 2 | 01201201) = %.4f\n", pr.Name(), p[2])
	// Output: Bayes(D=1..5,λ=0.15,α=0.5): P(next = 2 | 01201201) = 0.6824
}

// bruteLeafPosterior is the posterior probability, given x, that the
// context suffix of length l (after x, padded with 0^D) is a leaf of the
// source tree, l = 0..maxD, from the sum over every (component, tree):
// each tree's posterior mass goes to the length of its one leaf that is a
// suffix of the current context.
func bruteLeafPosterior(A int, lambda float64, comps []bruteComp, x []byte, maxD int) []float64 {
	out := make([]float64, maxD+1)
	total := bruteMixLogML(A, lambda, comps, x)
	for _, c := range comps {
		padded := append(make([]byte, c.D), x...)
		for _, T := range enumerate(A, c.D, lambda) {
			lp := c.lnPrior + T.lnPrior
			counts := make([][]int32, len(T.leaves))
			for i := range counts {
				counts[i] = make([]int32, A)
			}
			leafOf := func(t int) int { // the leaf whose suffix ends before padded[t]
				for i, s := range T.leaves {
					match := true
					for l, q := range s {
						if padded[t-1-l] != q {
							match = false
							break
						}
					}
					if match {
						return i
					}
				}
				panic("no leaf for a context")
			}
			for t := c.D; t < len(padded); t++ {
				counts[leafOf(t)][padded[t]]++
			}
			for _, n := range counts {
				lp += c.lnM(n)
			}
			out[len(T.leaves[leafOf(len(padded))])] += math.Exp(lp - total)
		}
	}
	return out
}

// TestLeafPosteriorAgainstEnumeration checks LeafPosterior at every
// position against the brute-force posterior over every tree of the
// prior's components (mixed depths, Dirichlet and sparse leaves), and
// that under one depth with Dirichlet leaves it is CTW's ω (Theorem 2).
func TestLeafPosteriorAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sp, err := leafprior.NewSparse(2, 0.4)
	if err != nil {
		t.Fatal(err)
	}
	lnSparse := func(n []int32) float64 {
		v, err := sp.LogMarginal(n)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	third := -math.Log(3)
	for _, c := range []struct {
		p     source.Prior
		comps []bruteComp
	}{
		{source.Prior{A: 2, Depths: []int{1, 2, 3}, Lambda: 0.3, Alpha: []float64{0.5}, Leaves: source.Dirichlet},
			[]bruteComp{{1, third, lnDirichlet(0.5)}, {2, third, lnDirichlet(0.5)}, {3, third, lnDirichlet(0.5)}}},
		{source.Prior{A: 2, Depths: []int{0, 2}, Lambda: 0.25, Alpha: []float64{0.5}, Leaves: source.Mixed, SparseFrac: 0.3, SparseZero: 0.4},
			[]bruteComp{{0, math.Log(0.5 * 0.3), lnSparse}, {0, math.Log(0.5 * 0.7), lnDirichlet(0.5)}, {2, math.Log(0.5 * 0.3), lnSparse}, {2, math.Log(0.5 * 0.7), lnDirichlet(0.5)}}},
	} {
		pr, err := New(c.p)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			x := randomSeq(rng, 2, 9, k > 0)
			st := pr.NewBayesState()
			got := make([]float64, pr.MaxDepth()+1)
			for i := 0; i <= len(x); i++ {
				st.LeafPosterior(got)
				want := bruteLeafPosterior(2, c.p.Lambda, c.comps, x[:i], pr.MaxDepth())
				for l := range got {
					if !(math.Abs(got[l]-want[l]) <= 1e-11) {
						t.Fatalf("%s, x = %v, after %d symbols: ω = %v, brute force %v", pr.Name(), x, i, got, want)
					}
				}
				if i < len(x) {
					st.Observe(x[i])
				}
			}
		}
	}
	// One depth, Dirichlet leaves: CTW(D)'s ω.
	pr, _ := New(source.PaperPrior(3))
	cp, _ := ctw.New(ctw.Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5})
	a, b := pr.NewBayesState(), cp.NewCTWState()
	w, v := make([]float64, 4), make([]float64, 4)
	for i, s := range randomSeq(rand.New(rand.NewPCG(9, 9)), 3, 500, true) {
		a.LeafPosterior(w)
		b.Weights(v)
		for l := range w {
			if math.Abs(w[l]-v[l]) > 1e-12 {
				t.Fatalf("one depth, position %d: LeafPosterior %v, CTW's ω %v", i, w, v)
			}
		}
		a.Observe(s)
		b.Observe(s)
	}
}
