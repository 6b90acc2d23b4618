package kn

// smallAlphabet is the largest alphabet for which kid lists are dense: a
// node's first child allocates A slots and the kid a sits in slot a. Larger
// alphabets keep kids in order of first appearance and find them through a
// hash map keyed by (node, symbol).
const smallAlphabet = 16

// kid is the entry of a child s·a in the list of its parent s. The counts of
// s·a live here, next to those of its siblings, so that a prediction reads
// one contiguous block per context.
type kid struct {
	node  int32  // the node of s·a
	count uint32 // c(s, a): occurrences of s followed by a
	cont  uint32 // N1+(•s a) = |{w : c(w s, a) > 0}| (continuation variant only)
	sym   byte   // a
}

// node is one string s (length ≤ D+1) that has occurred in the history; the
// root (node 0) is the empty string. Its children s·a are the kids
// arena[off : off+n] (sparse lists) or the used slots of arena[off : off+cap]
// (dense lists, where an unused slot has node 0).
type node struct {
	total        uint32 // c(s) = Σ_a c(s, a)
	contTotal    uint32 // Σ_a N1+(•s a) (continuation variant only)
	off          int32  // first kid in the arena
	n, cap       uint16 // kids in use (= N(s) = |{a : c(s, a) > 0}|) and slots allocated
	contDistinct uint16 // |{a : N1+(•s a) > 0}| (continuation variant only)
	pos          uint16 // index of this node in its parent's kid list
}

// trie holds the counts of all strings of length ≤ D+1 of one history,
// stored forwards, so that the order-k context of the next position is the
// child, by the newest symbol, of the previous order-(k−1) context. Kid lists
// live in one arena and move to its end, doubling, when full.
type trie struct {
	nodes []node
	arena []kid
	index map[uint64]int32 // (parent, symbol) → child node; nil for small alphabets
	a     int              // alphabet size: no kid list grows beyond it
	dense bool             // A ≤ smallAlphabet
}

func newTrie(A int) trie {
	t := trie{nodes: make([]node, 1, 64), arena: make([]kid, 0, 64), a: A}
	if A > smallAlphabet {
		t.index = make(map[uint64]int32)
	} else {
		t.dense = true
	}
	return t
}

// reset empties the trie, keeping its memory.
func (t *trie) reset() {
	t.nodes = t.nodes[:1]
	t.nodes[0] = node{}
	t.arena = t.arena[:0]
	clear(t.index)
}

// kids returns the kid slots of node n; in dense lists some are unused
// (zero counts).
func (t *trie) kids(n int32) []kid {
	nd := &t.nodes[n]
	if t.dense {
		return t.arena[nd.off : nd.off+int32(nd.cap)]
	}
	return t.arena[nd.off : nd.off+int32(nd.n)]
}

// find returns the arena index of the kid a of node n, or −1.
func (t *trie) find(n int32, a byte) int32 {
	nd := &t.nodes[n]
	if t.dense {
		if nd.cap == 0 || t.arena[nd.off+int32(a)].node == 0 {
			return -1
		}
		return nd.off + int32(a)
	}
	if t.index != nil {
		if c, ok := t.index[uint64(n)<<8|uint64(a)]; ok {
			return nd.off + int32(t.nodes[c].pos)
		}
		return -1
	}
	ks := t.arena[nd.off : nd.off+int32(nd.n)]
	for i := range ks {
		if ks[i].sym == a {
			return nd.off + int32(i)
		}
	}
	return -1
}

// add creates the child s·a of node n (which must not exist), with zero
// counts, and returns the arena index of its kid entry.
func (t *trie) add(n int32, a byte) int32 {
	nd := &t.nodes[n]
	if t.dense {
		if nd.cap == 0 {
			nd.off, nd.cap = int32(len(t.arena)), uint16(t.a)
			for i := 0; i < t.a; i++ {
				t.arena = append(t.arena, kid{})
			}
		}
		child := int32(len(t.nodes))
		i := nd.off + int32(a)
		t.arena[i] = kid{node: child, sym: a}
		nd.n++
		t.nodes = append(t.nodes, node{pos: uint16(a)})
		return i
	}
	if nd.n == nd.cap {
		c := min(max(2, 2*int(nd.cap)), t.a)
		off := int32(len(t.arena))
		t.arena = append(t.arena, t.arena[nd.off:nd.off+int32(nd.n)]...)
		for i := int(nd.n); i < c; i++ {
			t.arena = append(t.arena, kid{})
		}
		nd.off, nd.cap = off, uint16(c)
	}
	child := int32(len(t.nodes))
	i := nd.off + int32(nd.n)
	t.arena[i] = kid{node: child, sym: a}
	t.nodes = append(t.nodes, node{pos: nd.n})
	nd = &t.nodes[n] // nodes may have moved
	nd.n++
	if t.index != nil {
		t.index[uint64(n)<<8|uint64(a)] = child
	}
	return i
}
