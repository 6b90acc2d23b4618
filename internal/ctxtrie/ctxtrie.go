// Package ctxtrie is the context-count trie shared by the Kneser–Ney (kn)
// and PPM (ppm) predictors.
//
// For a history x_1^n and a maximum order D the trie holds, for every string
// s of length ≤ D that has occurred in the history and every symbol a, the
// count
//
//	c(s, a) = the number of occurrences of s followed by a,
//
// together with c(s) = Σ_a c(s, a) and the number of distinct symbols
// N(s) = |{a : c(s, a) > 0}| that have followed s. Strings are stored
// forwards (the child of s by a is s·a), so the order-k context of the next
// position is the child, by the newest symbol, of the previous order-(k−1)
// context, and a caller updating the counts after symbol a walks its current
// contexts once.
//
// The trie only stores the counts: the caller decides when to create a
// child (Add) and when to increment Kid.Count and Node.Total. A caller that
// needs more per-child data stores it in the Ext field of Kid (a type
// parameter, struct{} when unused, which costs no space); per-node data is
// best kept by the caller in a slice parallel to Nodes, indexed by node id.
package ctxtrie

// SmallAlphabet is the largest alphabet for which kid lists are dense: a
// node's first child allocates A slots and the kid a sits in slot a. Larger
// alphabets keep kids in order of first appearance and find them through a
// hash map keyed by (node, symbol).
const SmallAlphabet = 16

// Kid is the entry of a child s·a in the list of its parent s. The counts of
// s·a live here, next to those of its siblings, so that a prediction reads
// one contiguous block per context. Ext is extra per-child data of the
// caller (struct{} for none); it is zero when the kid is added and moves with
// the kid when its list is reallocated.
type Kid[E any] struct {
	Node  int32  // the node of s·a
	Count uint32 // c(s, a): occurrences of s followed by a
	Ext   E      // caller's data for s·a; before Sym so that struct{} adds no padding
	Sym   byte   // a
}

// Node is one string s (length ≤ D+1) that has been added to the trie; the
// root (node 0) is the empty string. Its children s·a are the kids
// Arena[Off : Off+N] (sparse lists) or the used slots of Arena[Off : Off+Cap]
// (dense lists, where an unused slot has Node 0).
type Node struct {
	Total  uint32 // c(s) = Σ_a c(s, a), maintained by the caller
	Off    int32  // first kid in the arena
	N, Cap uint16 // kids in use (= N(s) = |{a : c(s, a) > 0}| when every added kid is counted) and slots allocated
	Pos    uint16 // index of this node in its parent's kid list
}

// Trie holds the counts of all strings of length ≤ D+1 of one history (see
// the package documentation). Kid lists live in one arena and move to its
// end, doubling, when full. The zero value is not usable; call New.
type Trie[E any] struct {
	Nodes []Node   // Nodes[0] is the root (the empty string)
	Arena []Kid[E] // the kid lists of all nodes
	index map[uint64]int32
	a     int  // alphabet size: no kid list grows beyond it
	dense bool // A ≤ SmallAlphabet
}

// New returns an empty trie (only the root) over the alphabet 0..A−1.
func New[E any](A int) Trie[E] {
	t := Trie[E]{Nodes: make([]Node, 1, 64), Arena: make([]Kid[E], 0, 64), a: A}
	if A > SmallAlphabet {
		t.index = make(map[uint64]int32)
	} else {
		t.dense = true
	}
	return t
}

// Reset empties the trie, keeping its memory.
func (t *Trie[E]) Reset() {
	t.Nodes = t.Nodes[:1]
	t.Nodes[0] = Node{}
	t.Arena = t.Arena[:0]
	clear(t.index)
}

// Kids returns the kid slots of node n; in dense lists some are unused
// (zero counts).
func (t *Trie[E]) Kids(n int32) []Kid[E] {
	nd := &t.Nodes[n]
	if t.dense {
		return t.Arena[nd.Off : nd.Off+int32(nd.Cap)]
	}
	return t.Arena[nd.Off : nd.Off+int32(nd.N)]
}

// Find returns the arena index of the kid a of node n, or −1.
func (t *Trie[E]) Find(n int32, a byte) int32 {
	nd := &t.Nodes[n]
	if t.dense {
		if nd.Cap == 0 || t.Arena[nd.Off+int32(a)].Node == 0 {
			return -1
		}
		return nd.Off + int32(a)
	}
	if t.index != nil {
		if c, ok := t.index[uint64(n)<<8|uint64(a)]; ok {
			return nd.Off + int32(t.Nodes[c].Pos)
		}
		return -1
	}
	ks := t.Arena[nd.Off : nd.Off+int32(nd.N)]
	for i := range ks {
		if ks[i].Sym == a {
			return nd.Off + int32(i)
		}
	}
	return -1
}

// Add creates the child s·a of node n (which must not exist), with zero
// counts, and returns the arena index of its kid entry. The new node is
// appended to Nodes, so its id is len(Nodes)−1; Add may move Nodes and
// Arena, invalidating pointers into them.
func (t *Trie[E]) Add(n int32, a byte) int32 {
	nd := &t.Nodes[n]
	if t.dense {
		if nd.Cap == 0 {
			nd.Off, nd.Cap = int32(len(t.Arena)), uint16(t.a)
			for i := 0; i < t.a; i++ {
				t.Arena = append(t.Arena, Kid[E]{})
			}
		}
		child := int32(len(t.Nodes))
		i := nd.Off + int32(a)
		t.Arena[i] = Kid[E]{Node: child, Sym: a}
		nd.N++
		t.Nodes = append(t.Nodes, Node{Pos: uint16(a)})
		return i
	}
	if nd.N == nd.Cap {
		c := min(max(2, 2*int(nd.Cap)), t.a)
		off := int32(len(t.Arena))
		t.Arena = append(t.Arena, t.Arena[nd.Off:nd.Off+int32(nd.N)]...)
		for i := int(nd.N); i < c; i++ {
			t.Arena = append(t.Arena, Kid[E]{})
		}
		nd.Off, nd.Cap = off, uint16(c)
	}
	child := int32(len(t.Nodes))
	i := nd.Off + int32(nd.N)
	t.Arena[i] = Kid[E]{Node: child, Sym: a}
	t.Nodes = append(t.Nodes, Node{Pos: nd.N})
	nd = &t.Nodes[n] // Nodes may have moved
	nd.N++
	if t.index != nil {
		t.index[uint64(n)<<8|uint64(a)] = child
	}
	return i
}

// Advance moves the contexts of a history one symbol on without counting
// anything (a frozen model): ctx[L] is the node of the order-L context
// (ctx[0] the root), and the result, written into next[:0] and returned,
// holds the nodes of the contexts after symbol a, up to order maxOrder,
// stopping at the first one that is not in the trie (a string that never
// occurred has no longer extension that did).
func (t *Trie[E]) Advance(ctx, next []int32, a byte, maxOrder int) []int32 {
	next = append(next[:0], 0)
	for L := 1; L <= len(ctx) && L <= maxOrder; L++ {
		i := t.Find(ctx[L-1], a)
		if i < 0 {
			break
		}
		next = append(next, t.Arena[i].Node)
	}
	return next
}
