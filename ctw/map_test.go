package ctw

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/source"
)

// oldMapNode is the previous MAP construction, kept as the reference: it
// builds every node's A children (recursing into all of them) before
// deciding whether the node is a leaf.
func (c *Counts) oldMapNode(id int32, l int, seen bool, em []float64) (float64, *source.Node) {
	le := 0.0
	if seen {
		le = c.logPe(id)
	}
	if l == c.p.D {
		return le, c.leafOf(id, seen)
	}
	if !seen && c.p.lnLam >= c.p.ln1mLam+float64(c.p.A)*em[c.p.D-l-1] {
		return c.p.lnLam, c.leafOf(id, false)
	}
	kids := make([]*source.Node, c.p.A)
	sm := 0.0
	for q := 0; q < c.p.A; q++ {
		ch, ok := int32(0), false
		if seen {
			ch, ok = c.s.childOf(id, l, q)
		}
		m, n := c.oldMapNode(ch, l+1, ok, em)
		sm += m
		kids[q] = n
	}
	if c.p.lnLam+le >= c.p.ln1mLam+sm {
		return c.p.lnLam + le, c.leafOf(id, seen)
	}
	return c.p.ln1mLam + sm, &source.Node{Children: kids}
}

func sameTree(a, b *source.Node) bool {
	if (a.Children == nil) != (b.Children == nil) || len(a.Children) != len(b.Children) || len(a.P) != len(b.P) {
		return false
	}
	for i := range a.P {
		if a.P[i] != b.P[i] {
			return false
		}
	}
	for q := range a.Children {
		if !sameTree(a.Children[q], b.Children[q]) {
			return false
		}
	}
	return true
}

func countNodes(n *source.Node) int64 {
	k := int64(1)
	for _, c := range n.Children {
		k += countNodes(c)
	}
	return k
}

// TestMAPOldVsNew compares the MAP tree built along the decisions (work
// proportional to the contexts seen) with the old construction that
// materialised every child, at A = 256 (hash-map trie) and at small
// alphabets (dense and inline tables), including priors under which empty
// subtrees split.
func TestMAPOldVsNew(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	text := []byte("the cat sat on the mat; the cat ate the rat. ")
	for _, tc := range []struct {
		A, D int
		lam  float64
		x    []byte
	}{
		{256, 3, 0.5, text},
		{256, 4, 0.5, append(append([]byte{}, text...), 0, 255, 0, 255, 1)},
		{256, 2, 0.9, text[:10]},
		{20, 3, 0.3, randomSeq(rng, 20, 300)},
		{2, 4, 0.15, randomSeq(rng, 2, 200)},
		{3, 3, 0.15, randomSeq(rng, 3, 100)},
		{3, 3, 0.15, nil},
	} {
		for _, init := range []Init{Pad, Condition} {
			c, err := CountSequence(Config{A: tc.A, D: tc.D, Lambda: tc.lam, Alpha: 0.5, Init: init}, tc.x)
			if err != nil {
				t.Fatal(err)
			}
			em := c.emptyMax()
			lmOld, rootOld := c.oldMapNode(0, 0, true, em)
			postOld := lmOld - c.LogML()
			m := c.MAPTree()
			if !sameTree(rootOld, m.Tree.Root) {
				t.Errorf("A=%d D=%d λ=%v %v: MAP trees differ", tc.A, tc.D, tc.lam, init)
			}
			if d := math.Abs(m.LogPosterior - postOld); d > 1e-12*math.Max(1, math.Abs(postOld)) {
				t.Errorf("A=%d D=%d λ=%v %v: log posterior %v, old %v", tc.A, tc.D, tc.lam, init, m.LogPosterior, postOld)
			}
			if got, want := c.MAPNodes(), countNodes(m.Tree.Root); got != want {
				t.Errorf("A=%d D=%d: MAPNodes %d, tree has %d", tc.A, tc.D, got, want)
			}
			if err := m.Tree.Validate(); err != nil {
				t.Errorf("A=%d D=%d: %v", tc.A, tc.D, err)
			}
		}
	}
}

// BenchmarkMAPTreeA256 is the MAP tree of 12 kB of text as bytes at D = 40
// (was quadratic in A: every seen node built 256 children).
func BenchmarkMAPTreeA256(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"the ", "cat ", "sat ", "on ", "mat ", "and ", "a ", "dog ", "ran ", "far.\n"}
	var x []byte
	for len(x) < 12000 {
		x = append(x, words[rng.IntN(len(words))]...)
	}
	for b.Loop() {
		c, err := CountSequence(Config{A: 256, D: 40, Lambda: 0.5, Alpha: 0.5, Init: Condition}, x)
		if err != nil {
			b.Fatal(err)
		}
		c.MAPTree()
	}
}
