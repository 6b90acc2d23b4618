package ctw

import "math/bits"

// smallA is the largest alphabet whose trie nodes keep an inline child
// table; larger alphabets look children up in a hash map.
const smallA = 16

// denseLimit is the largest memory (bytes) spent on a dense, preallocated
// context tree; larger trees are grown node by node as a trie.
const denseLimit = 8 << 20

// store holds the context tree of one sequence: for every node (context s of
// length ≤ D) its symbol counts n_s(a) and three per-node floats whose
// meaning belongs to the State using it. Node 0 is the root (s = ()).
//
// Two layouts: dense, where the node of context s at depth l has the fixed
// index off[l] + Σ_j s_j·2^{b·j} (b bits per symbol, the most recent symbol
// in the lowest bits), preallocated; and a trie grown on demand.
type store struct {
	A, D  int
	dense bool

	// dense layout
	b    uint
	off  []int32
	mask []uint64

	// trie layout
	child    []int32          // node·A + q → child index, or 0 when absent (A ≤ smallA)
	childMap map[uint64]int32 // node<<8 | q → child index (A > smallA)
	maxNodes int
	// shapeOnly makes newNode grow the child links only; allocNodes then
	// sizes the per-node arrays (CountSequence's first pass).
	shapeOnly bool

	nodes int
	cnt   []uint32 // node·A + a → n_s(a)
	tot   []uint32 // node → Σ_a n_s(a)
	f     [3][]float64
	init  [3]float64
}

// newStore allocates a context tree for (A, D) with the given initial values
// of the three per-node floats and a memory budget in bytes.
func newStore(A, D int, form Form, init [3]float64, maxMemory int64) *store {
	s := &store{A: A, D: D, init: init}
	nb := nodeBytes(A, form)
	s.b = uint(bits.Len(uint(A - 1)))
	if int(s.b)*D <= 30 {
		slots := int64(0)
		for l := 0; l <= D; l++ {
			slots += int64(1) << (s.b * uint(l))
		}
		if slots*nb <= denseLimit && slots*nb <= maxMemory {
			s.dense = true
			s.off = make([]int32, D+2)
			s.mask = make([]uint64, D+1)
			for l := 0; l <= D; l++ {
				s.off[l+1] = s.off[l] + int32(1)<<(s.b*uint(l))
				s.mask[l] = uint64(1)<<(s.b*uint(l)) - 1
			}
			s.nodes = int(slots)
			s.allocNodes()
			return s
		}
	}
	mn := maxMemory / nb
	if mn > 1<<31-1 {
		mn = 1<<31 - 1
	}
	if mn < 1 {
		mn = 1
	}
	s.maxNodes = int(mn)
	if A > smallA {
		s.childMap = make(map[uint64]int32)
	}
	s.newNode()
	return s
}

// allocNodes allocates the per-node arrays for s.nodes nodes (zero
// counts, initial floats): every node of the dense layout, or the nodes a
// shape-only pass reached, which it ends.
func (s *store) allocNodes() {
	s.shapeOnly = false
	n := s.nodes
	s.cnt = make([]uint32, n*s.A)
	s.tot = make([]uint32, n)
	for k := range s.f {
		s.f[k] = make([]float64, n)
		if s.init[k] != 0 {
			for i := range s.f[k] {
				s.f[k][i] = s.init[k]
			}
		}
	}
}

// newNode appends a fresh trie node (zero counts, initial floats).
func (s *store) newNode() int32 {
	id := int32(s.nodes)
	s.nodes++
	if s.shapeOnly {
		if s.childMap == nil {
			for a := 0; a < s.A; a++ {
				s.child = append(s.child, 0)
			}
		}
		return id
	}
	for a := 0; a < s.A; a++ {
		s.cnt = append(s.cnt, 0)
	}
	s.tot = append(s.tot, 0)
	for k := range s.f {
		s.f[k] = append(s.f[k], s.init[k])
	}
	if s.childMap == nil {
		for a := 0; a < s.A; a++ {
			s.child = append(s.child, 0)
		}
	}
	return id
}

// path fills ids[0..d] with the nodes of the contexts s_0 = (), s_1, …, s_d,
// where ctx[j] is the symbol j+1 steps back (ctx[0] the most recent) and, for
// the dense layout, key packs the same symbols b bits each. It creates
// missing trie nodes while the budget allows and returns the depth actually
// reached (d, or less when the budget is exhausted).
func (s *store) path(ctx []byte, key uint64, d int, ids []int32) int {
	if s.dense {
		for l := 0; l <= d; l++ {
			ids[l] = s.off[l] + int32(key&s.mask[l])
		}
		return d
	}
	id := int32(0)
	ids[0] = 0
	for l := 1; l <= d; l++ {
		q := ctx[l-1]
		var c int32
		if s.childMap == nil {
			c = s.child[int(id)*s.A+int(q)]
		} else {
			c = s.childMap[uint64(id)<<8|uint64(q)]
		}
		if c == 0 {
			if s.nodes >= s.maxNodes {
				return l - 1
			}
			c = s.newNode()
			if s.childMap == nil {
				s.child[int(id)*s.A+int(q)] = c
			} else {
				s.childMap[uint64(id)<<8|uint64(q)] = c
			}
		}
		ids[l] = c
		id = c
	}
	return d
}

// childOf returns the child q of node id (at depth l < D) if it exists and
// has been counted at least once.
func (s *store) childOf(id int32, l int, q int) (int32, bool) {
	var c int32
	if s.dense {
		c = s.off[l+1] + int32(uint64(id-s.off[l])|uint64(q)<<(s.b*uint(l)))
	} else if s.childMap == nil {
		c = s.child[int(id)*s.A+q]
	} else {
		c = s.childMap[uint64(id)<<8|uint64(q)]
	}
	if c == 0 || s.tot[c] == 0 {
		return 0, false
	}
	return c, true
}

// history tracks the most recent D symbols of a sequence, both as a byte
// slice (most recent first) and packed b bits per symbol for the dense
// layout.
type history struct {
	ctx  []byte
	key  uint64
	b    uint
	mask uint64
	n    int // symbols appended so far
}

func newHistory(D int, b uint) history {
	h := history{ctx: make([]byte, D), b: b}
	if int(b)*D < 64 {
		h.mask = uint64(1)<<(b*uint(D)) - 1
	} else {
		h.mask = ^uint64(0)
	}
	return h
}

func (h *history) push(a byte) {
	if len(h.ctx) > 0 {
		copy(h.ctx[1:], h.ctx[:len(h.ctx)-1])
		h.ctx[0] = a
	}
	h.key = (h.key<<h.b | uint64(a)) & h.mask
	h.n++
}
