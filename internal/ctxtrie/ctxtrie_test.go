package ctxtrie

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// observe counts symbol a after the contexts ctx (ctx[L] is the node of the
// order-L context, ctx[0] the root), creating missing children, the way kn
// and ppm use the trie, and returns the contexts after a, up to order D.
// Every kid's Ext is set to a function of its node id and count so that
// the test can check that Ext moves with the kid.
func observe(t *Trie[uint32], ctx []int32, a byte, D int) []int32 {
	next := []int32{0}
	for L := 1; L <= len(ctx); L++ {
		parent := ctx[L-1]
		i := t.Find(parent, a)
		if i < 0 {
			i = t.Add(parent, a)
		}
		t.Arena[i].Count++
		t.Arena[i].Ext = ext(t.Arena[i].Node, t.Arena[i].Count)
		t.Nodes[parent].Total++
		if L <= D {
			next = append(next, t.Arena[i].Node)
		}
	}
	return next
}

func ext(node int32, count uint32) uint32 { return uint32(node)*1000003 + count }

// cat is s·a (string(a) would encode a ≥ 128 as two bytes of UTF-8).
func cat(s string, a byte) string { return s + string([]byte{a}) }

// build counts the history x into t with maximum order D.
func build(t *Trie[uint32], x []byte, D int) {
	ctx := []int32{0}
	for _, a := range x {
		ctx = observe(t, ctx, a, D)
	}
}

// reference counts, by brute force, c(s, a) for every string s of length
// ≤ D that precedes a somewhere in x, and the position where each string
// s·a first ends (the order in which sparse kid lists are filled).
type reference struct {
	count map[string][]uint32 // s → c(s, ·)
	first map[string]int      // s·a → first position i with x[i−|s|:i+1] = s·a
}

func newReference(x []byte, A, D int) reference {
	r := reference{count: map[string][]uint32{}, first: map[string]int{}}
	for i, a := range x {
		for k := 0; k <= min(D, i); k++ {
			s := string(x[i-k : i])
			if r.count[s] == nil {
				r.count[s] = make([]uint32, A)
			}
			r.count[s][a]++
			if _, ok := r.first[cat(s, a)]; !ok {
				r.first[cat(s, a)] = i
			}
		}
	}
	return r
}

// has reports whether the string s occurs in the history (length ≤ D+1),
// i.e. is a node of the trie.
func (r reference) has(s string) bool {
	if s == "" {
		return true
	}
	_, ok := r.first[s]
	return ok
}

// nodeStrings maps every node of t to its string, walking the kid lists from
// the root; it fails on a node reached twice or not at all.
func nodeStrings(tb testing.TB, t *Trie[uint32]) map[int32]string {
	tb.Helper()
	str := map[int32]string{0: ""}
	var walk func(n int32)
	walk = func(n int32) {
		for _, k := range t.Kids(n) {
			if k.Node == 0 {
				continue
			}
			if _, dup := str[k.Node]; dup {
				tb.Fatalf("node %d reached twice", k.Node)
			}
			str[k.Node] = cat(str[n], k.Sym)
			walk(k.Node)
		}
	}
	walk(0)
	if len(str) != len(t.Nodes) {
		tb.Fatalf("%d of %d nodes reachable from the root", len(str), len(t.Nodes))
	}
	return str
}

// check compares every count, kid list and lookup of t with the reference.
func check(tb testing.TB, t *Trie[uint32], x []byte, A, D int) {
	tb.Helper()
	r := newReference(x, A, D)
	str := nodeStrings(tb, t)
	if want := len(r.first) + 1; len(t.Nodes) != want {
		tb.Errorf("%d nodes, want %d (the root and the %d distinct strings of length 1..%d)", len(t.Nodes), want, want-1, D+1)
	}
	dense := A <= SmallAlphabet
	for n, s := range str {
		nd := t.Nodes[n]
		c := r.count[s] // nil: s is never followed by anything counted
		var total uint32
		var syms []byte
		for a, v := range c {
			total += v
			if v > 0 {
				syms = append(syms, byte(a))
			}
		}
		if nd.Total != total {
			tb.Errorf("c(%q) = %d, want %d", s, nd.Total, total)
		}
		if int(nd.N) != len(syms) {
			tb.Errorf("N(%q) = %d, want %d", s, nd.N, len(syms))
		}
		kids := t.Kids(n)
		var got []byte
		for j, k := range kids {
			if k.Node == 0 {
				if !dense {
					tb.Errorf("%q: unused slot %d in a sparse kid list", s, j)
				}
				if k.Count != 0 {
					tb.Errorf("%q: unused slot %d has count %d", s, j, k.Count)
				}
				continue
			}
			got = append(got, k.Sym)
			if want := c[k.Sym]; k.Count != want {
				tb.Errorf("c(%q, %d) = %d, want %d", s, k.Sym, k.Count, want)
			}
			if k.Ext != ext(k.Node, k.Count) {
				tb.Errorf("%q·%d: Ext %d did not move with its kid", s, k.Sym, k.Ext)
			}
			if int(t.Nodes[k.Node].Pos) != j {
				tb.Errorf("%q·%d: Pos %d, but slot %d", s, k.Sym, t.Nodes[k.Node].Pos, j)
			}
			if dense && int(k.Sym) != j {
				tb.Errorf("%q: kid %d in dense slot %d", s, k.Sym, j)
			}
		}
		if dense {
			if nd.Cap != 0 && int(nd.Cap) != A {
				tb.Errorf("%q: dense list of %d slots, want %d", s, nd.Cap, A)
			}
			if !slices.Equal(got, syms) {
				tb.Errorf("%q: kids %v, want %v", s, got, syms)
			}
		} else {
			// Sparse lists keep the order of first appearance.
			want := slices.Clone(syms)
			slices.SortFunc(want, func(a, b byte) int { return r.first[cat(s, a)] - r.first[cat(s, b)] })
			if !slices.Equal(got, want) {
				tb.Errorf("%q: kids %v, want %v (order of first appearance)", s, got, want)
			}
			if int(nd.Cap) > A || nd.N > nd.Cap {
				tb.Errorf("%q: %d kids in %d slots (A=%d)", s, nd.N, nd.Cap, A)
			}
		}
		// Find agrees with the reference for every symbol.
		for a := range A {
			i := t.Find(n, byte(a))
			want := r.has(cat(s, byte(a)))
			if want != (i >= 0) {
				tb.Fatalf("Find(%q, %d) = %d, want found=%v", s, a, i, want)
			}
			if i >= 0 && (t.Arena[i].Sym != byte(a) || str[t.Arena[i].Node] != cat(s, byte(a))) {
				tb.Fatalf("Find(%q, %d) = kid %+v", s, a, t.Arena[i])
			}
		}
	}
}

func randomSeq(rng *rand.Rand, n, A int) []byte {
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(rng.IntN(A))
	}
	return x
}

// markovSeq draws a sequence whose next symbol often repeats a recent one,
// so that long contexts recur (deep tries with counts above one).
func markovSeq(rng *rand.Rand, n, A int) []byte {
	x := make([]byte, n)
	for i := range x {
		if i >= 3 && rng.IntN(4) != 0 {
			x[i] = x[i-3]
		} else {
			x[i] = byte(rng.IntN(A))
		}
	}
	return x
}

var cases = []struct {
	name string
	A, D int
	x    func(rng *rand.Rand) []byte
}{
	{"empty", 3, 2, func(*rand.Rand) []byte { return nil }},
	{"one symbol", 2, 3, func(*rand.Rand) []byte { return []byte{1} }},
	{"shorter than D", 4, 6, func(*rand.Rand) []byte { return []byte{3, 0, 3} }},
	{"order 0", 5, 0, func(r *rand.Rand) []byte { return randomSeq(r, 200, 5) }},
	{"binary constant", 2, 4, func(*rand.Rand) []byte { return make([]byte, 50) }},
	{"binary", 2, 5, func(r *rand.Rand) []byte { return randomSeq(r, 500, 2) }},
	{"A=3 repetitive", 3, 4, func(r *rand.Rand) []byte { return markovSeq(r, 400, 3) }},
	{"A=16 dense limit", SmallAlphabet, 3, func(r *rand.Rand) []byte { return markovSeq(r, 600, SmallAlphabet) }},
	{"A=17 first sparse", SmallAlphabet + 1, 3, func(r *rand.Rand) []byte { return markovSeq(r, 600, SmallAlphabet+1) }},
	{"A=17 all kids", SmallAlphabet + 1, 1, func(r *rand.Rand) []byte { return randomSeq(r, 2000, SmallAlphabet+1) }},
	{"bytes", 256, 2, func(r *rand.Rand) []byte { return markovSeq(r, 3000, 256) }},
	{"bytes all kids of the root", 256, 1, func(r *rand.Rand) []byte {
		x := make([]byte, 0, 600)
		for range 2 {
			for _, a := range r.Perm(256) {
				x = append(x, byte(a))
			}
		}
		return x
	}},
}

func TestCounts(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := c.x(rand.New(rand.NewPCG(uint64(i), 1)))
			tr := New[uint32](c.A)
			build(&tr, x, c.D)
			check(t, &tr, x, c.A, c.D)
		})
	}
}

// TestReset refills a used trie with another history: the result is the
// same as a fresh trie's, node for node.
func TestReset(t *testing.T) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 2))
			x, y := c.x(rng), c.x(rng)
			tr := New[uint32](c.A)
			build(&tr, x, c.D)
			tr.Reset()
			build(&tr, y, c.D)
			check(t, &tr, y, c.A, c.D)
			fresh := New[uint32](c.A)
			build(&fresh, y, c.D)
			if !slices.Equal(tr.Nodes, fresh.Nodes) || !slices.Equal(tr.Arena, fresh.Arena) {
				t.Error("a reset trie differs from a fresh one")
			}
		})
	}
}

// TestAdvance moves the contexts of a frozen trie along a continuation
// and compares them with the longest suffixes of the whole sequence that
// occur in the history.
func TestAdvance(t *testing.T) {
	for i, c := range cases {
		for _, maxOrder := range []int{c.D, max(0, c.D-1)} {
			t.Run(fmt.Sprintf("%s/maxOrder=%d", c.name, maxOrder), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 3))
				x := c.x(rng)
				tr := New[uint32](c.A)
				ctx := []int32{0}
				for _, a := range x {
					ctx = observe(&tr, ctx, a, c.D)
				}
				r := newReference(x, c.A, c.D)
				str := nodeStrings(t, &tr)
				nodes, arena := slices.Clone(tr.Nodes), slices.Clone(tr.Arena)
				z := slices.Clone(x)
				var next []int32
				for _, a := range append(c.x(rng), markovSeq(rng, 50, c.A)...) {
					k := len(ctx) - 1 // the order reached before a
					next = tr.Advance(ctx, next, a, maxOrder)
					ctx, next = next, ctx
					z = append(z, a)
					want := 0
					for L := 1; L <= min(k+1, maxOrder) && r.has(string(z[len(z)-L:])); L++ {
						want = L
					}
					if len(ctx) != want+1 {
						t.Fatalf("after %d symbols: order %d, want %d", len(z), len(ctx)-1, want)
					}
					for L, n := range ctx {
						if str[n] != string(z[len(z)-L:]) {
							t.Fatalf("after %d symbols: context %d is %q, want %q", len(z), L, str[n], z[len(z)-L:])
						}
					}
				}
				if !slices.Equal(nodes, tr.Nodes) || !slices.Equal(arena, tr.Arena) {
					t.Error("Advance changed the trie")
				}
			})
		}
	}
}

// TestNoExt checks that struct{} as Ext adds nothing to a kid.
func TestNoExt(t *testing.T) {
	type bare struct {
		Node  int32
		Count uint32
		Sym   byte
	}
	if a, b := unsafe.Sizeof(Kid[struct{}]{}), unsafe.Sizeof(bare{}); a != b {
		t.Errorf("Kid[struct{}] takes %d bytes, a kid without Ext %d", a, b)
	}
	tr := New[struct{}](3)
	i := tr.Add(0, 2)
	if got := tr.Kids(0); len(got) != 3 || got[2].Node != 1 || got[2].Sym != 2 || tr.Find(0, 2) != i || tr.Find(0, 1) != -1 {
		t.Errorf("kids %+v", got)
	}
}
