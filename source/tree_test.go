package source

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// fig1 is the context tree of the paper's Fig. 1 with a, b, c written 0, 1,
// 2: suffix set {(b), (c), (a,a), (b,a), (c,a)}.
func fig1(t testing.TB) *Tree {
	t.Helper()
	tr, err := FromLeaves(3, 2, []Leaf{
		{Suffix: []byte{1}, P: []float64{0.2, 0.3, 0.5}},
		{Suffix: []byte{2}, P: []float64{0.1, 0.1, 0.8}},
		{Suffix: []byte{0, 0}, P: []float64{0.6, 0.2, 0.2}},
		{Suffix: []byte{1, 0}, P: []float64{0.3, 0.3, 0.4}},
		{Suffix: []byte{2, 0}, P: []float64{0.5, 0.25, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestFig1(t *testing.T) {
	tr := fig1(t)
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	if tr.NumLeaves() != 5 || tr.Depth() != 2 || tr.NumLeavesAtDepth() != 3 {
		t.Errorf("leaves %d depth %d at-D %d", tr.NumLeaves(), tr.Depth(), tr.NumLeavesAtDepth())
	}
	// Root child q = most recent symbol; its child q' = the symbol before.
	if got := tr.Root.Children[0].Children[2].P; !slices.Equal(got, []float64{0.5, 0.25, 0.25}) {
		t.Errorf("node (2,0) has %v", got)
	}
	for _, c := range []struct {
		hist []byte
		want float64 // P[0] of the expected leaf
	}{
		{[]byte{2, 0}, 0.5},       // (…, c, a) → p_{c,a}
		{[]byte{1, 1, 0, 0}, 0.6}, // ends in (a,a)
		{[]byte{0, 1}, 0.2},       // ends in (b)
		{[]byte{2}, 0.1},          // (c) needs one symbol
		{[]byte{0, 0, 2}, 0.1},
	} {
		n, err := tr.LeafFor(c.hist)
		if err != nil {
			t.Fatalf("LeafFor(%v): %v", c.hist, err)
		}
		if n.P[0] != c.want {
			t.Errorf("LeafFor(%v) = %v", c.hist, n.P)
		}
	}
	if _, err := tr.LeafFor([]byte{0}); err == nil || !strings.Contains(err.Error(), "too short") || !strings.Contains(err.Error(), "(0)") {
		t.Errorf("short history: %v", err)
	}
	if _, err := tr.LeafFor(nil); err == nil {
		t.Error("empty history accepted")
	}
	if _, err := tr.LeafFor([]byte{0, 3}); err == nil || !strings.Contains(err.Error(), "outside the alphabet") {
		t.Errorf("bad symbol: %v", err)
	}
	leaves := tr.Leaves()
	var got []string
	for _, l := range leaves {
		got = append(got, FormatSuffix(l.Suffix, 3))
	}
	if want := []string{"(0,0)", "(1,0)", "(2,0)", "(1)", "(2)"}; !slices.Equal(got, want) {
		t.Errorf("Leaves() suffixes %v, want %v", got, want)
	}
	// Leaves are copies.
	leaves[0].P[0] = 9
	if tr.Root.Children[0].Children[0].P[0] != 0.6 {
		t.Error("Leaves() aliases the tree")
	}
	// FromLeaves(Leaves()) rebuilds the same tree, in any order.
	slices.Reverse(leaves)
	leaves[len(leaves)-1].P[0] = 0.6
	u, err := FromLeaves(3, 2, leaves)
	if err != nil {
		t.Fatal(err)
	}
	if shapeKey(u) != shapeKey(tr) || u.Root.Children[0].Children[0].P[0] != 0.6 {
		t.Error("FromLeaves(Leaves()) differs")
	}
	if (&Tree{}).NumLeaves() != 0 || (*Tree)(nil).Depth() != 0 {
		t.Error("nil trees")
	}
}

func TestFromLeavesErrors(t *testing.T) {
	u := []float64{0.5, 0.5}
	u3 := []float64{0.2, 0.3, 0.5}
	cases := []struct {
		name   string
		A, D   int
		leaves []Leaf
		want   []string
	}{
		{"alphabet", 1, 2, []Leaf{{nil, []float64{1}}}, []string{"alphabet size 1"}},
		{"depth", 2, 65, []Leaf{{nil, u}}, []string{"maximum depth 65"}},
		{"empty", 2, 2, nil, []string{"missing suffix ()"}},
		{"not proper", 2, 2, []Leaf{{[]byte{0}, u}, {[]byte{1, 0}, u}, {[]byte{1}, u}}, []string{"not proper", "(0) is a suffix of (1,0)"}},
		{"not proper other order", 2, 2, []Leaf{{[]byte{1, 0}, u}, {[]byte{0}, u}, {[]byte{1}, u}}, []string{"not proper", "(0) is a suffix of (1,0)"}},
		{"root and more", 2, 2, []Leaf{{[]byte{}, u}, {[]byte{1}, u}}, []string{"() is a suffix of (1)"}},
		{"duplicate", 2, 2, []Leaf{{[]byte{0}, u}, {[]byte{0}, u}, {[]byte{1}, u}}, []string{"(0) appears twice"}},
		{"incomplete", 3, 2, []Leaf{{[]byte{1}, u3}, {[]byte{2}, u3}, {[]byte{0, 0}, u3}, {[]byte{1, 0}, u3}}, []string{"not complete", "missing suffix (2,0)"}},
		{"incomplete root", 3, 2, []Leaf{{[]byte{1}, u3}, {[]byte{2}, u3}}, []string{"missing suffix (0)"}},
		{"too long", 2, 1, []Leaf{{[]byte{0, 0}, u}}, []string{"(0,0) has length 2 > maximum depth D = 1"}},
		{"symbol", 2, 2, []Leaf{{[]byte{0, 2}, u}}, []string{"symbol 2 at position 1 is outside the alphabet 0..1"}},
		{"sum", 2, 1, []Leaf{{[]byte{0}, []float64{0.5, 0.6}}, {[]byte{1}, u}}, []string{"leaf (0)", "sum to 1.1"}},
		{"negative", 2, 1, []Leaf{{[]byte{0}, u}, {[]byte{1}, []float64{1.5, -0.5}}}, []string{"leaf (1)", "p[1] = -0.5"}},
		{"NaN", 2, 1, []Leaf{{[]byte{0}, []float64{math.NaN(), 1}}, {[]byte{1}, u}}, []string{"p[0] = NaN"}},
		{"length", 2, 1, []Leaf{{[]byte{0}, u3}, {[]byte{1}, u}}, []string{"leaf (0)", "3 entries, want A = 2"}},
	}
	for _, c := range cases {
		_, err := FromLeaves(c.A, c.D, c.leaves)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not contain %q", c.name, err, w)
			}
		}
	}
	// Tolerance 1e-9 on the sum.
	if _, err := FromLeaves(2, 0, []Leaf{{nil, []float64{0.5, 0.5 + 5e-10}}}); err != nil {
		t.Errorf("sum within tolerance rejected: %v", err)
	}
}

func TestValidateErrors(t *testing.T) {
	leaf := func() *Node { return &Node{P: []float64{0.5, 0.5}} }
	shared := leaf()
	cyc := &Node{}
	cyc.Children = []*Node{cyc, leaf()}
	cases := []struct {
		name string
		tr   *Tree
		want string
	}{
		{"nil", nil, "nil tree"},
		{"no root", &Tree{A: 2, D: 1}, "no root"},
		{"alphabet", &Tree{A: 300, D: 1, Root: leaf()}, "alphabet size 300"},
		{"depth", &Tree{A: 2, D: -1, Root: leaf()}, "maximum depth -1"},
		{"children", &Tree{A: 2, D: 1, Root: &Node{Children: []*Node{leaf()}}}, "internal node () has 1 children"},
		{"nil child", &Tree{A: 2, D: 1, Root: &Node{Children: []*Node{leaf(), nil}}}, "node (1) is nil"},
		{"internal with P", &Tree{A: 2, D: 1, Root: &Node{Children: []*Node{leaf(), leaf()}, P: []float64{1, 0}}}, "internal node () has a distribution"},
		{"too deep", &Tree{A: 2, D: 0, Root: &Node{Children: []*Node{leaf(), leaf()}}}, "deeper than the maximum depth D = 0"},
		{"bad leaf", &Tree{A: 2, D: 1, Root: &Node{Children: []*Node{leaf(), {P: []float64{1, 1}}}}}, "leaf (1): probabilities sum to 2"},
		{"shared", &Tree{A: 2, D: 1, Root: &Node{Children: []*Node{shared, shared}}}, "reachable twice"},
		{"cycle", &Tree{A: 2, D: 5, Root: cyc}, "reachable twice"},
	}
	for _, c := range cases {
		err := c.tr.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want %q", c.name, err, c.want)
		}
		if c.tr != nil && c.tr.Leaves() != nil {
			t.Errorf("%s: Leaves() of an invalid tree", c.name)
		}
	}
}

func TestFormatSuffix(t *testing.T) {
	if s := FormatSuffix([]byte{2, 0}, 3); s != "(2,0)" {
		t.Error(s)
	}
	if s := FormatSuffix(nil, 3); s != "()" {
		t.Error(s)
	}
	if s := FormatSuffix([]byte{255, 10}, 256); s != "(255,10)" {
		t.Error(s)
	}
	if SymbolName(7, 10) != "7" {
		t.Error(SymbolName(7, 10))
	}
}

func TestClone(t *testing.T) {
	tr := fig1(t)
	c := tr.Clone()
	c.Root.Children[1].P[0] = 0.9
	if tr.Root.Children[1].P[0] != 0.2 {
		t.Error("Clone shares distributions")
	}
	if (*Tree)(nil).Clone() != nil {
		t.Error("nil clone")
	}
}

func mustSample(t testing.TB, p Prior, stream uint64) *Tree {
	t.Helper()
	tr, err := p.Sample(RNG(2024, stream))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestMemoryEstimate(t *testing.T) {
	// 5 leaves and 2 internal nodes of 96 + 8·3 bytes
	if m := fig1(t).MemoryEstimate(); m != 7*120 {
		t.Errorf("Fig. 1 tree: %d bytes, want %d", m, 7*120)
	}
}
