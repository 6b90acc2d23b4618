package source

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// shapeKey writes a tree's structure in preorder: 'I' internal, 'L' leaf.
func shapeKey(t *Tree) string {
	var b strings.Builder
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Children == nil {
			b.WriteByte('L')
			return
		}
		b.WriteByte('I')
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(t.Root)
	return b.String()
}

// enumShapes returns every tree structure of T(D) over alphabet size A
// (leaves with uniform distributions), each with its declared D.
func enumShapes(A, D int) []*Tree {
	var shapes func(r int) []*Node
	shapes = func(r int) []*Node {
		out := []*Node{{P: uniform(A)}}
		if r == 0 {
			return out
		}
		sub := shapes(r - 1)
		idx := make([]int, A)
		for {
			n := &Node{Children: make([]*Node, A)}
			for q := range A {
				n.Children[q] = sub[idx[q]].clone()
			}
			out = append(out, n)
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
		return out
	}
	var trees []*Tree
	for _, n := range shapes(D) {
		trees = append(trees, &Tree{A: A, D: D, Root: n})
	}
	return trees
}

func (n *Node) clone() *Node { return (&Tree{Root: n}).Clone().Root }

func uniform(A int) []float64 {
	p := make([]float64, A)
	for i := range p {
		p[i] = 1 / float64(A)
	}
	return p
}

// exactShapeProbs returns π_D(T) of every structure, by the paper's formula.
func exactShapeProbs(t *testing.T, A, D int, lambda float64) map[string]float64 {
	t.Helper()
	probs := map[string]float64{}
	for _, tr := range enumShapes(A, D) {
		lp, err := tr.LogStructurePrior(lambda)
		if err != nil {
			t.Fatal(err)
		}
		probs[shapeKey(tr)] = math.Exp(lp)
	}
	return probs
}

// buggySampler draws tree structures (as shapeKeys) the way plausible buggy
// implementations of π_D would; variant "" is the correct process.
func buggySampler(variant string, A, D int, lambda float64) func(rng *rand.Rand) string {
	return func(rng *rand.Rand) string {
		var b strings.Builder
		var grow func(depth int, forced int) // forced: −1 none, 0 leaf, 1 internal
		grow = func(depth int, forced int) {
			var leaf bool
			switch variant {
			case "lambda-as-branch-probability":
				leaf = depth == D || rng.Float64() >= lambda
			case "depth-D-nodes-may-branch":
				leaf = depth == D+1 || rng.Float64() < lambda
			case "off-by-one-depth":
				leaf = depth >= D-1 || rng.Float64() < lambda
			case "lambda+0.03":
				leaf = depth == D || rng.Float64() < lambda+0.03
			case "siblings-share-one-coin":
				leaf = depth == D || forced == 0
			default:
				leaf = depth == D || rng.Float64() < lambda
			}
			if leaf {
				b.WriteByte('L')
				return
			}
			b.WriteByte('I')
			shared := 1
			if rng.Float64() < lambda {
				shared = 0
			}
			for range A {
				grow(depth+1, shared)
			}
		}
		first := 1
		if rng.Float64() < lambda {
			first = 0
		}
		grow(0, first)
		return b.String()
	}
}

const chiSquareAlpha = 1e-4 // reject at p < 1e-4

// TestSampleShapeChiSquare checks Prior.Sample's tree structures against the
// exact π_D(T) with a χ² goodness-of-fit test over 20000 trees, and shows the
// test's power: the same test rejects deliberately wrong samplers.
func TestSampleShapeChiSquare(t *testing.T) {
	const n = 20000
	configs := []struct {
		A, D   int
		lambda float64
	}{
		{2, 3, 0.3},  // 26 structures
		{3, 2, 0.15}, // 9 structures, the paper's A and λ
	}
	for ci, c := range configs {
		probs := exactShapeProbs(t, c.A, c.D, c.lambda)
		prior := Prior{A: c.A, Depths: []int{c.D}, Lambda: c.lambda, Alpha: []float64{0.5}}
		rng := RNG(42, uint64(ci))
		obs := map[string]int{}
		for range n {
			tr, err := prior.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			obs[shapeKey(tr)]++
		}
		stat, df, p := chiSquareTest(obs, probs, n)
		t.Logf("A=%d D=%d λ=%v: Sample: χ²=%.1f df=%d p=%.3g", c.A, c.D, c.lambda, stat, df, p)
		if p < chiSquareAlpha {
			t.Errorf("A=%d D=%d λ=%v: Sample's structures do not follow π_D: χ²=%.1f, df=%d, p=%.3g", c.A, c.D, c.lambda, stat, df, p)
		}
		for _, v := range []string{"", "lambda-as-branch-probability", "depth-D-nodes-may-branch", "off-by-one-depth", "lambda+0.03", "siblings-share-one-coin"} {
			sample := buggySampler(v, c.A, c.D, c.lambda)
			rng := RNG(43, uint64(ci))
			obs := map[string]int{}
			for range n {
				obs[sample(rng)]++
			}
			stat, df, p := chiSquareTest(obs, probs, n)
			t.Logf("  variant %-30q χ²=%10.1f df=%d p=%.3g", v, stat, df, p)
			if v == "" && p < chiSquareAlpha {
				t.Errorf("reference sampler rejected: p=%.3g", p)
			}
			if v != "" && p >= chiSquareAlpha {
				t.Errorf("A=%d D=%d: the χ² test has no power against the %q bug (p=%.3g)", c.A, c.D, v, p)
			}
		}
	}
}

// TestSampleLeafCountChiSquare checks the number of leaves of the paper's
// prior (A=3, D=5, λ=0.15) against LeafCountDistribution, and the depth of
// the leaf of the all-zero context against ContextDepthDistribution.
func TestSampleLeafCountChiSquare(t *testing.T) {
	const n = 20000
	for _, c := range []struct {
		A, D   int
		lambda float64
	}{{3, 5, 0.15}, {2, 6, 0.4}} {
		dist, err := LeafCountDistribution(c.A, c.D, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		depthDist, err := ContextDepthDistribution(c.D, c.lambda)
		if err != nil {
			t.Fatal(err)
		}
		probs, depthProbs := map[int]float64{}, map[int]float64{}
		for k, v := range dist {
			probs[k] = v
		}
		for d, v := range depthDist {
			depthProbs[d] = v
		}
		prior := Prior{A: c.A, Depths: []int{c.D}, Lambda: c.lambda, Alpha: []float64{0.5}}
		rng := RNG(7, uint64(c.A))
		obs, depthObs := map[int]int{}, map[int]int{}
		zeros := make([]byte, c.D)
		for range n {
			tr, err := prior.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			obs[tr.NumLeaves()]++
			d := 0
			for nd := tr.Root; nd.Children != nil; nd = nd.Children[0] {
				d++
			}
			depthObs[d]++
			if _, err := tr.LeafFor(zeros); err != nil {
				t.Fatal(err)
			}
		}
		stat, df, p := chiSquareTest(obs, probs, n)
		t.Logf("A=%d D=%d λ=%v leaf count: χ²=%.1f df=%d p=%.3g", c.A, c.D, c.lambda, stat, df, p)
		if p < chiSquareAlpha {
			t.Errorf("leaf counts do not follow LeafCountDistribution: χ²=%.1f df=%d p=%.3g", stat, df, p)
		}
		stat, df, p = chiSquareTest(depthObs, depthProbs, n)
		t.Logf("A=%d D=%d λ=%v context depth: χ²=%.1f df=%d p=%.3g", c.A, c.D, c.lambda, stat, df, p)
		if p < chiSquareAlpha {
			t.Errorf("context depths do not follow ContextDepthDistribution: χ²=%.1f df=%d p=%.3g", stat, df, p)
		}
	}
}

func TestSampleDepthMixture(t *testing.T) {
	prior := Prior{A: 2, Depths: []int{1, 3}, Lambda: 0.3, Alpha: []float64{0.5}}
	// Exact marginal of structures: (π_1(T)[T∈T(1)] + π_3(T))/2.
	probs := map[string]float64{}
	total := 0.0
	for _, tr := range enumShapes(2, 3) {
		lp, err := prior.LogTreeProb(tr)
		if err != nil {
			t.Fatal(err)
		}
		probs[shapeKey(tr)] = math.Exp(lp)
		total += math.Exp(lp)
	}
	if math.Abs(total-1) > 1e-12 {
		t.Fatalf("mixture prior sums to %v over T(3)", total)
	}
	const n = 20000
	rng := RNG(5, 5)
	obs := map[string]int{}
	depthCount := map[int]int{}
	for range n {
		tr, err := prior.Sample(rng)
		if err != nil {
			t.Fatal(err)
		}
		obs[shapeKey(tr)]++
		depthCount[tr.D]++
		if tr.Depth() > tr.D {
			t.Fatalf("tree deeper than its D")
		}
	}
	stat, df, p := chiSquareTest(obs, probs, n)
	if p < chiSquareAlpha {
		t.Errorf("depth mixture: χ²=%.1f df=%d p=%.3g", stat, df, p)
	}
	if len(depthCount) != 2 || math.Abs(float64(depthCount[1])/n-0.5) > 0.02 {
		t.Errorf("declared depths not uniform over {1,3}: %v", depthCount)
	}
}

func TestGammaMoments(t *testing.T) {
	rng := RNG(11, 0)
	const n = 100000
	for _, a := range []float64{0.05, 0.5, 1, 3.7, 30} {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Exp(logGammaVariate(rng, a))
		}
		m, v, sm, sv := meanVar(x)
		if math.Abs(m-a) > 5*sm || math.Abs(v-a) > 5*sv {
			t.Errorf("Gamma(%v): mean %.4f ± %.4f, var %.4f ± %.4f; want %v, %v", a, m, sm, v, sv, a, a)
		}
	}
}

func TestDirichletMoments(t *testing.T) {
	rng := RNG(12, 0)
	const n = 40000
	for _, alpha := range [][]float64{{0.5, 0.5, 0.5}, {0.2, 0.5, 1.5, 4}, {0.01, 0.01}} {
		A := len(alpha)
		a0 := 0.0
		for _, a := range alpha {
			a0 += a
		}
		cols := make([][]float64, A)
		p, scratch := make([]float64, A), make([]float64, A)
		for range n {
			dirichlet(rng, alpha, p, scratch)
			s := 0.0
			for a, v := range p {
				if !(v >= 0) {
					t.Fatalf("Dir(%v) gave %v", alpha, p)
				}
				s += v
				cols[a] = append(cols[a], v)
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("Dir(%v) sample sums to %v", alpha, s)
			}
		}
		for a := range A {
			wantM := alpha[a] / a0
			wantV := alpha[a] * (a0 - alpha[a]) / (a0 * a0 * (a0 + 1))
			m, v, sm, sv := meanVar(cols[a])
			if math.Abs(m-wantM) > 5*sm || math.Abs(v-wantV) > 5*sv {
				t.Errorf("Dir(%v)[%d]: mean %.4f ± %.4f (want %.4f), var %.5f ± %.5f (want %.5f)", alpha, a, m, sm, wantM, v, sv, wantV)
			}
		}
	}
}

// TestSampleDirichletLeaves checks the leaf distributions of sampled trees
// (per-symbol α vector) against the Dirichlet mean and variance.
func TestSampleDirichletLeaves(t *testing.T) {
	alpha := []float64{0.3, 1, 2}
	prior := Prior{A: 3, Depths: []int{2}, Lambda: 0.5, Alpha: alpha}
	rng := RNG(13, 0)
	cols := make([][]float64, 3)
	for len(cols[0]) < 30000 {
		tr, err := prior.Sample(rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range tr.Leaves() {
			for a, v := range l.P {
				cols[a] = append(cols[a], v)
			}
		}
	}
	for a := range 3 {
		wantM := alpha[a] / 3.3
		wantV := alpha[a] * (3.3 - alpha[a]) / (3.3 * 3.3 * 4.3)
		m, v, sm, sv := meanVar(cols[a])
		if math.Abs(m-wantM) > 5*sm || math.Abs(v-wantV) > 5*sv {
			t.Errorf("leaf p[%d]: mean %.4f (want %.4f), var %.5f (want %.5f)", a, m, wantM, v, wantV)
		}
	}
}

func TestSparseLeaves(t *testing.T) {
	for _, c := range []struct {
		A    int
		zero float64
	}{{3, 0}, {5, 0.7}, {2, 1}} {
		prior := Prior{A: c.A, Depths: []int{0}, Lambda: 0.5, Leaves: Sparse, SparseZero: c.zero}
		z := prior.sparseZero()
		rng := RNG(14, uint64(c.A))
		const n = 20000
		keptObs := map[int]int{}
		var firstVals []float64
		for range n {
			tr, err := prior.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			p := tr.Root.P
			kept, s := 0, 0.0
			for _, v := range p {
				if v < 0 || math.IsNaN(v) {
					t.Fatalf("bad sparse leaf %v", p)
				}
				if v > 0 {
					kept++
				}
				s += v
			}
			if math.Abs(s-1) > 1e-12 || kept == 0 {
				t.Fatalf("sparse leaf %v", p)
			}
			keptObs[kept]++
			if kept == 2 {
				for _, v := range p {
					if v > 0 {
						firstVals = append(firstVals, v)
						break
					}
				}
			}
		}
		// P(k kept) = C(A,k)(1−z)^k z^{A−k} for k ≥ 2; k = 1 also gets z^A.
		probs := map[int]float64{}
		for k := 1; k <= c.A; k++ {
			probs[k] = binom(c.A, k) * math.Pow(1-z, float64(k)) * math.Pow(z, float64(c.A-k))
		}
		probs[1] += math.Pow(z, float64(c.A))
		stat, df, p := chiSquareTest(keptObs, probs, n)
		if p < chiSquareAlpha {
			t.Errorf("A=%d z=%v: kept-symbol counts %v: χ²=%.1f df=%d p=%.3g", c.A, z, keptObs, stat, df, p)
		}
		// With two kept symbols the first is R = U1/(U1+U2), U1, U2 i.i.d.
		// uniform, with density 1/(2 max(r,1−r)²): mean 1/2, var 3/4 − ln 2.
		if len(firstVals) > 1000 {
			m, v, sm, sv := meanVar(firstVals)
			if wantV := 0.75 - math.Ln2; math.Abs(m-0.5) > 5*sm || math.Abs(v-wantV) > 5*sv {
				t.Errorf("A=%d: two-kept leaf values mean %.4f var %.4f, want 0.5, %.4f", c.A, m, v, wantV)
			}
		}
	}
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

func TestPriorValidate(t *testing.T) {
	good := PaperPrior(3)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mod  func(p *Prior)
		want string
	}{
		{"A=1", func(p *Prior) { p.A = 1 }, "alphabet size 1"},
		{"A=257", func(p *Prior) { p.A = 257 }, "alphabet size 257"},
		{"no depths", func(p *Prior) { p.Depths = nil }, "no depths"},
		{"negative depth", func(p *Prior) { p.Depths = []int{2, -1} }, "depths[1] = -1"},
		{"deep", func(p *Prior) { p.Depths = []int{MaxDepth + 1} }, "outside 0..64"},
		{"λ=0", func(p *Prior) { p.Lambda = 0 }, "strictly between 0 and 1"},
		{"λ=1", func(p *Prior) { p.Lambda = 1 }, "strictly between 0 and 1"},
		{"λ NaN", func(p *Prior) { p.Lambda = math.NaN() }, "strictly between"},
		{"α=0", func(p *Prior) { p.Alpha = []float64{0} }, "α[0] = 0"},
		{"α inf", func(p *Prior) { p.Alpha = []float64{math.Inf(1)} }, "finite"},
		{"α length", func(p *Prior) { p.Alpha = []float64{1, 1} }, "want 1 (symmetric) or A = 3"},
		{"no α", func(p *Prior) { p.Alpha = nil }, "0 Dirichlet parameters"},
		{"sparse zero", func(p *Prior) { p.Leaves, p.SparseZero = Sparse, 1.5 }, "sparse_zero"},
		{"kind", func(p *Prior) { p.Leaves = 7 }, "unknown leaf kind"},
		{"mixed frac 1", func(p *Prior) { p.Leaves, p.SparseFrac = Mixed, 1 }, "sparse_frac"},
		{"mixed frac NaN", func(p *Prior) { p.Leaves, p.SparseFrac = Mixed, math.NaN() }, "sparse_frac"},
		{"frac without mixed", func(p *Prior) { p.SparseFrac = 0.3 }, "only meaningful for mixed"},
		{"mixed without α", func(p *Prior) { p.Leaves, p.Alpha = Mixed, nil }, "0 Dirichlet parameters"},
		{"mixed sparse zero", func(p *Prior) { p.Leaves, p.SparseZero = Mixed, -0.5 }, "sparse_zero"},
		{"huge", func(p *Prior) { p.A, p.Depths, p.Lambda = 256, []int{8}, 0.01 }, "nodes on average"},
	}
	for _, c := range cases {
		p := PaperPrior(3)
		c.mod(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want error containing %q", c.name, err, c.want)
		}
		if _, err := p.Sample(RNG(1, 1)); err == nil {
			t.Errorf("%s: Sample accepted an invalid prior", c.name)
		}
	}
	if _, err := good.Sample(nil); err == nil {
		t.Error("Sample(nil) should fail")
	}
	sp := Prior{A: 3, Depths: []int{1}, Lambda: 0.5, Leaves: Sparse}
	if err := sp.Validate(); err != nil {
		t.Errorf("sparse prior without α: %v", err)
	}
}

func TestSampleDeterministic(t *testing.T) {
	p := PaperPrior(4)
	a, _ := p.Sample(RNG(99, 3))
	b, _ := p.Sample(RNG(99, 3))
	c, _ := p.Sample(RNG(99, 4))
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	jc, _ := json.Marshal(c)
	if string(ja) != string(jb) {
		t.Error("same seed and stream gave different trees")
	}
	if string(ja) == string(jc) {
		t.Error("different streams gave the same tree")
	}
	if err := a.Validate(); err != nil {
		t.Error(err)
	}
}

func TestPriorJSON(t *testing.T) {
	p := Prior{A: 3, Depths: []int{1, 5}, Lambda: 0.15, Leaves: Sparse, SparseZero: 0.25}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"alphabet":3,"depths":[1,5],"lambda":0.15,"leaves":"sparse","sparse_zero":0.25}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var q Prior
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if q.Leaves != Sparse || q.SparseZero != 0.25 || len(q.Depths) != 2 {
		t.Errorf("round trip gave %+v", q)
	}
	if err := json.Unmarshal([]byte(`{"leaves":"gaussian"}`), &q); err == nil || !strings.Contains(err.Error(), "unknown leaf kind") {
		t.Errorf("bad leaf kind: %v", err)
	}
}

// TestPriorLeavesDefault checks that a missing "leaves", null and "" all
// select the default Dirichlet leaves, and that an unknown kind is an error.
func TestPriorLeavesDefault(t *testing.T) {
	for _, js := range []string{
		`{"alphabet":3,"depths":[2],"lambda":0.15,"alpha":[0.5]}`,
		`{"alphabet":3,"depths":[2],"lambda":0.15,"alpha":[0.5],"leaves":null}`,
		`{"alphabet":3,"depths":[2],"lambda":0.15,"alpha":[0.5],"leaves":""}`,
	} {
		var z Prior
		if err := json.Unmarshal([]byte(js), &z); err != nil || z.Leaves != Dirichlet {
			t.Errorf("%s into a zero prior: leaves %v, %v; want dirichlet", js, z.Leaves, err)
		}
	}
	q := Prior{Leaves: Sparse}
	if err := json.Unmarshal([]byte(`{"leaves":""}`), &q); err != nil || q.Leaves != Dirichlet {
		t.Errorf(`leaves "" over sparse: %v, %v; want dirichlet`, q.Leaves, err)
	}
	if err := json.Unmarshal([]byte(`{"leaves":"Dirichlet"}`), &q); err == nil {
		t.Error("leaves \"Dirichlet\" (capitalised) accepted")
	}
}

// TestMixedLeaves checks that a Mixed prior gives whole trees of one kind,
// Sparse with probability SparseFrac (a binomial test over 2000 trees), and
// that the per-tree choice is drawn from the tree's own stream.
func TestMixedLeaves(t *testing.T) {
	for _, frac := range []float64{0.2, 0.5, 0.8} {
		p := Prior{A: 3, Depths: []int{2}, Lambda: 0.3, Alpha: []float64{0.5}, Leaves: Mixed, SparseFrac: frac, SparseZero: 0.9}
		const n = 2000
		sparse := 0
		for i := range n {
			tr, err := p.Sample(RNG(5, uint64(i)))
			if err != nil {
				t.Fatal(err)
			}
			zeros, all := 0, 0
			for _, l := range tr.Leaves() {
				all++
				for _, q := range l.P {
					if q == 0 {
						zeros++
						break
					}
				}
			}
			// A sparse tree at SparseZero 0.9 has a zero in every leaf
			// (1 − 0.1³ per leaf, so allow one leaf without); a Dirichlet
			// tree has none.
			switch {
			case zeros == 0:
			case zeros >= all-1 && all > 1 || zeros == all:
				sparse++
			default:
				t.Fatalf("frac %v tree %d: %d of %d leaves have zeros: leaves of both kinds in one tree", frac, i, zeros, all)
			}
		}
		got := float64(sparse) / n
		if sd := math.Sqrt(frac * (1 - frac) / n); math.Abs(got-frac) > 4.5*sd {
			t.Errorf("frac %v: %d of %d trees sparse (%.3f), more than 4.5 SD from %v", frac, sparse, n, got, frac)
		}
	}
	// The default fraction is DefaultSparseFrac (= 1/2): trees with a zero
	// among 2000 at SparseZero 0.9 (a sparse tree has one with probability
	// ≥ 0.999, a Dirichlet tree never).
	p := Prior{A: 3, Depths: []int{1, 5}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: Mixed, SparseZero: 0.9}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for i := range 2000 {
		tr, err := p.Sample(RNG(6, uint64(i)))
		if err != nil {
			t.Fatal(err)
		}
	leaves:
		for _, l := range tr.Leaves() {
			for _, q := range l.P {
				if q == 0 {
					zeros++
					break leaves
				}
			}
		}
	}
	if got := float64(zeros) / 2000; DefaultSparseFrac != 0.5 || math.Abs(got-0.5) > 4.5*math.Sqrt(0.25/2000) {
		t.Errorf("default sparse_frac: %.3f of trees sparse, want ≈ %v", got, DefaultSparseFrac)
	}
	b, _ := json.Marshal(Prior{A: 3, Depths: []int{5}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: Mixed, SparseFrac: 0.25})
	if want := `{"alphabet":3,"depths":[5],"lambda":0.15,"alpha":[0.5],"leaves":"mixed","sparse_frac":0.25}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var q Prior
	if err := json.Unmarshal(b, &q); err != nil || q.Leaves != Mixed || q.SparseFrac != 0.25 {
		t.Errorf("round trip: %+v, %v", q, err)
	}
	if k, err := ParseLeafKind("mixed"); err != nil || k != Mixed {
		t.Errorf("ParseLeafKind(mixed) = %v, %v", k, err)
	}
	if _, err := ParseLeafKind("uniform"); err == nil {
		t.Error("ParseLeafKind(uniform) accepted")
	}
}

func TestDepthList(t *testing.T) {
	for _, c := range []struct {
		ds   []int
		want string
	}{{nil, ""}, {[]int{5}, "5"}, {[]int{1, 2, 3}, "1,2,3"}, {[]int{3, 3, 10}, "3,3,10"}} {
		if got := DepthList(c.ds); got != c.want {
			t.Errorf("DepthList(%v) = %q, want %q", c.ds, got, c.want)
		}
	}
}
