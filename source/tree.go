// Package source implements context-tree sources: the variable-order Markov
// chains (VOMCs) of the paper's Section 2 ("Preliminaries"), the prior
// π_CTW(D, λ, α) over them of Section 4.2, and fast sequence generation.
//
// # Conventions
//
// Symbols are bytes holding 0..A−1 (2 ≤ A ≤ 256), as in package predict.
//
// A suffix (context) s = (x_{n−l+1}, …, x_n) is always written in TIME ORDER,
// oldest symbol first, exactly as in the paper: "(1,0)" means x_{n−1} = 1 and
// x_n = 0. In the tree the root is the empty context "()"; the root's child q
// is the context whose most recent symbol is x_n = q; that node's child q′ is
// the context (q′, q), i.e. x_{n−1} = q′, x_n = q; and so on. A leaf at depth
// l therefore stands for a suffix of length l, and the leaves of a tree form a
// proper and complete suffix set S = L(T) (Section 2).
//
// Given the semi-infinite past (…, x_{n−1}, x_n), the next symbol x_{n+1} is
// drawn from p_s, where s = β_S(…, x_n) is the unique leaf that is a suffix of
// the past.
//
// # Randomness
//
// Every random function takes an explicit *rand.Rand from math/rand/v2.
// RNG(seed, stream) derives one from a uint64 seed and a stream number, so
// that, e.g., tree i of a data set can use stream i and results do not depend
// on how work is split among goroutines.
package source

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	// MaxAlphabet is the largest alphabet size A: symbols are bytes.
	MaxAlphabet = 256
	// MaxDepth is the largest declared maximum depth D of a Tree or Prior.
	MaxDepth = 64
	// MaxTreeNodes bounds the number of nodes of one tree (and the expected
	// number of nodes of a Prior's trees); beyond it a tree would need
	// gigabytes of memory.
	MaxTreeNodes = 100_000_000
	// probTolerance is how far from 1 the sum of a distribution may be.
	probTolerance = 1e-9
)

// Tree is a context tree source (T, {p_s}_{s∈L(T)}) over the alphabet
// {0, …, A−1} with declared maximum depth (maximum order) D: every leaf has
// depth ≤ D. The declared D matters for generation (the initial dummy
// context has D symbols, Section 4.2) and for the prior π_D(T); the actual
// depth of the deepest leaf is Depth() ≤ D.
type Tree struct {
	// A is the alphabet size, 2..256.
	A int
	// D is the declared maximum depth, 0..MaxDepth.
	D int
	// Root is the node of the empty context ().
	Root *Node
}

// Node is a node of a context tree. A leaf has Children == nil and P, the
// next-symbol distribution p_s (length A, P[a] = P(x_{n+1} = a | suffix s)).
// An internal node has exactly A children, Children[q] being the context
// extended one step into the past by the symbol q, and P == nil.
type Node struct {
	// Children are the A children of an internal node (nil for a leaf).
	Children []*Node
	// P is the next-symbol distribution p_s of a leaf (nil for an internal
	// node): P[a] = P(x_{n+1} = a | the past ends in s), summing to 1.
	P []float64
}

// IsLeaf reports whether the node is a leaf (it has no children).
func (n *Node) IsLeaf() bool { return n != nil && n.Children == nil }

// Leaf is one element of the suffix set: the suffix s in time order (oldest
// symbol first, len(Suffix) = depth of the leaf) and its distribution p_s.
type Leaf struct {
	// Suffix is s = (x_{n−l+1}, …, x_n) in time order, l = len(Suffix).
	Suffix []byte
	// P is p_s, the distribution of x_{n+1} (length A, summing to 1).
	P []float64
}

// SymbolName is how a symbol a of an alphabet of size A is written in
// suffixes, error messages, JSON-free text and drawings: its decimal value
// ("0", "1", …). All of vomc writes symbols this way.
func SymbolName(a byte, A int) string {
	_ = A // Decimal for every alphabet size keeps suffixes unambiguous.
	return strconv.Itoa(int(a))
}

// FormatSuffix writes a suffix in time order as in the paper, e.g. "(2,0)"
// for x_{n−1} = 2, x_n = 0, and "()" for the empty suffix (the root).
func FormatSuffix(s []byte, A int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, a := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(SymbolName(a, A))
	}
	b.WriteByte(')')
	return b.String()
}

// formatPath writes the context of a node given its root-to-node path
// (path[0] = most recent symbol x_n), i.e. the path reversed.
func formatPath(path []byte, A int) string {
	return FormatSuffix(reversed(path), A)
}

func reversed(s []byte) []byte {
	r := make([]byte, len(s))
	for i, a := range s {
		r[len(s)-1-i] = a
	}
	return r
}

// checkAlphabet reports an error unless 2 ≤ A ≤ 256.
func checkAlphabet(A int) error {
	if A < 2 || A > MaxAlphabet {
		return fmt.Errorf("source: alphabet size %d outside 2..%d", A, MaxAlphabet)
	}
	return nil
}

// checkDepth reports an error unless 0 ≤ D ≤ MaxDepth.
func checkDepth(D int) error {
	if D < 0 || D > MaxDepth {
		return fmt.Errorf("source: maximum depth %d outside 0..%d", D, MaxDepth)
	}
	return nil
}

// checkDist reports an error unless p is a distribution over A symbols:
// length A, every entry finite and ≥ 0, sum within 1e-9 of 1.
func checkDist(p []float64, A int) error {
	if len(p) != A {
		return fmt.Errorf("distribution has %d entries, want A = %d", len(p), A)
	}
	sum := 0.0
	for a, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("p[%d] = %v is not a finite non-negative probability", a, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > probTolerance {
		return fmt.Errorf("probabilities sum to %.12g, want 1 (tolerance %g)", sum, probTolerance)
	}
	return nil
}

// Validate checks that t is a well-formed context tree: 2 ≤ A ≤ 256,
// 0 ≤ D ≤ MaxDepth, a non-nil root, every node either a leaf (nil Children,
// P a distribution over A symbols) or internal (exactly A non-nil children,
// nil P), every leaf at depth ≤ D, no node reachable twice, and at most
// MaxTreeNodes nodes. Errors name the offending node by its context.
func (t *Tree) Validate() error {
	if t == nil {
		return errNilTree
	}
	if err := checkAlphabet(t.A); err != nil {
		return err
	}
	if err := checkDepth(t.D); err != nil {
		return err
	}
	if t.Root == nil {
		return errors.New("source: tree has no root")
	}
	seen := make(map[*Node]bool)
	var path []byte
	var walk func(n *Node) error
	walk = func(n *Node) error {
		ctx := func() string { return formatPath(path, t.A) }
		if n == nil {
			return fmt.Errorf("source: node %s is nil", ctx())
		}
		if seen[n] {
			return fmt.Errorf("source: node %s is reachable twice (shared or cyclic nodes)", ctx())
		}
		seen[n] = true
		if len(seen) > MaxTreeNodes {
			return fmt.Errorf("source: tree has more than %d nodes", MaxTreeNodes)
		}
		if n.Children == nil {
			if err := checkDist(n.P, t.A); err != nil {
				return fmt.Errorf("source: leaf %s: %v", ctx(), err)
			}
			return nil
		}
		if n.P != nil {
			return fmt.Errorf("source: internal node %s has a distribution P; only leaves may", ctx())
		}
		if len(n.Children) != t.A {
			return fmt.Errorf("source: internal node %s has %d children, want A = %d", ctx(), len(n.Children), t.A)
		}
		if len(path) >= t.D {
			return fmt.Errorf("source: internal node %s at depth %d: leaves would be deeper than the maximum depth D = %d", ctx(), len(path), t.D)
		}
		for q, c := range n.Children {
			path = append(path, byte(q))
			err := walk(c)
			path = path[:len(path)-1]
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(t.Root)
}

// walkLeaves calls f for every leaf in depth-first order, children in
// symbol order 0..A−1; path is the root-to-leaf path (most recent symbol
// first) and is only valid during the call. It assumes a valid tree.
func (t *Tree) walkLeaves(f func(path []byte, n *Node)) {
	var path []byte
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Children == nil {
			f(path, n)
			return
		}
		for q, c := range n.Children {
			path = append(path, byte(q))
			walk(c)
			path = path[:len(path)-1]
		}
	}
	walk(t.Root)
}

// Leaves returns the suffix set L(T) with its distributions, in depth-first
// order of the tree (children in symbol order), each Suffix in time order.
// The returned slices are copies. It returns nil for an invalid tree.
func (t *Tree) Leaves() []Leaf {
	if t.Validate() != nil {
		return nil
	}
	var out []Leaf
	t.walkLeaves(func(path []byte, n *Node) {
		out = append(out, Leaf{Suffix: reversed(path), P: append([]float64(nil), n.P...)})
	})
	return out
}

// NumLeaves returns |L(T)|, the number of leaves (0 for a nil tree or root).
func (t *Tree) NumLeaves() int {
	if t == nil || t.Root == nil {
		return 0
	}
	var count func(n *Node) int
	count = func(n *Node) int {
		if n == nil {
			return 0
		}
		if n.Children == nil {
			return 1
		}
		s := 0
		for _, c := range n.Children {
			s += count(c)
		}
		return s
	}
	return count(t.Root)
}

// NodeBytes is the memory of one parsed or sampled tree node of an
// alphabet of A symbols: the struct, its A child pointers or A
// probabilities, and allocation overhead.
func NodeBytes(A int) int64 { return 96 + 8*int64(A) }

// MemoryEstimate estimates the memory of t held in memory (parsed or
// sampled): NodeBytes for each of its leaves and internal nodes.
func (t *Tree) MemoryEstimate() int64 {
	leaves := int64(t.NumLeaves())
	internal := (leaves - 1) / int64(max(t.A-1, 1))
	return (leaves + internal) * NodeBytes(t.A)
}

// Depth returns the actual depth of the tree: the length of its longest
// suffix (0 for a single leaf), which is ≤ D for a valid tree.
func (t *Tree) Depth() int {
	if t == nil || t.Root == nil {
		return 0
	}
	var depth func(n *Node) int
	depth = func(n *Node) int {
		if n == nil || n.Children == nil {
			return 0
		}
		m := 0
		for _, c := range n.Children {
			m = max(m, depth(c))
		}
		return m + 1
	}
	return depth(t.Root)
}

// LeafFor returns the leaf β_S(history) of the context whose most recent
// symbol is history[len(history)−1], the one before it history[len−2], and
// so on (history in time order). The returned node's P is the distribution
// of the next symbol. It is an error if a symbol of the history is ≥ A, or if
// the history is shorter than the leaf's depth requires (history only needs
// as many symbols as the leaf reached is deep, at most Depth()).
func (t *Tree) LeafFor(history []byte) (*Node, error) {
	if t == nil || t.Root == nil {
		return nil, errNilTree
	}
	n := t.Root
	for j := 0; n.Children != nil; j++ {
		if j >= len(history) {
			return nil, fmt.Errorf("source: history %s of length %d is too short: context %s is an internal node, so at least %d symbols are needed",
				FormatSuffix(history, t.A), len(history), FormatSuffix(history[len(history)-j:], t.A), j+1)
		}
		q := history[len(history)-1-j]
		if int(q) >= len(n.Children) {
			return nil, fmt.Errorf("source: history symbol %d at position %d is outside the alphabet 0..%d", q, len(history)-1-j, t.A-1)
		}
		n = n.Children[q]
		if n == nil {
			return nil, fmt.Errorf("source: invalid tree: nil node on the path of history %s", FormatSuffix(history, t.A))
		}
	}
	return n, nil
}

// trieNode is a node of the suffix trie built by FromLeaves.
type trieNode struct {
	kids []*trieNode
	leaf *Leaf // non-nil at a leaf of the suffix set
}

// FromLeaves builds the context tree whose leaves are the given suffix set
// (suffixes in time order) with their distributions. It checks that
// 2 ≤ A ≤ 256 and 0 ≤ D ≤ MaxDepth; that every suffix has length ≤ D and
// symbols < A; that every P is a distribution (finite, ≥ 0, sum 1 ± 1e-9);
// that the set is PROPER (no suffix is a suffix of another: the error names
// both) and COMPLETE (every context has a suffix in the set: the error names
// one missing suffix, e.g. "(2,0)"). The leaves' slices are copied.
func FromLeaves(A, D int, leaves []Leaf) (*Tree, error) {
	if err := checkAlphabet(A); err != nil {
		return nil, err
	}
	if err := checkDepth(D); err != nil {
		return nil, err
	}
	if len(leaves) == 0 {
		return nil, errors.New("source: empty suffix set is not complete (missing suffix ())")
	}
	root := &trieNode{}
	for i := range leaves {
		l := &leaves[i]
		s := l.Suffix
		if len(s) > D {
			return nil, fmt.Errorf("source: suffix %s has length %d > maximum depth D = %d", FormatSuffix(s, A), len(s), D)
		}
		for j, a := range s {
			if int(a) >= A {
				return nil, fmt.Errorf("source: suffix %s: symbol %d at position %d is outside the alphabet 0..%d", FormatSuffix(s, A), a, j, A-1)
			}
		}
		if err := checkDist(l.P, A); err != nil {
			return nil, fmt.Errorf("source: leaf %s: %v", FormatSuffix(s, A), err)
		}
		n := root
		for j := len(s) - 1; j >= 0; j-- {
			if n.leaf != nil {
				return nil, fmt.Errorf("source: suffix set is not proper: %s is a suffix of %s",
					FormatSuffix(n.leaf.Suffix, A), FormatSuffix(s, A))
			}
			if n.kids == nil {
				n.kids = make([]*trieNode, A)
			}
			q := s[j]
			if n.kids[q] == nil {
				n.kids[q] = &trieNode{}
			}
			n = n.kids[q]
		}
		if n.leaf != nil {
			return nil, fmt.Errorf("source: suffix set is not proper: %s appears twice", FormatSuffix(s, A))
		}
		if n.kids != nil {
			longer := firstTrieLeaf(n)
			return nil, fmt.Errorf("source: suffix set is not proper: %s is a suffix of %s",
				FormatSuffix(s, A), FormatSuffix(longer.Suffix, A))
		}
		n.leaf = &Leaf{Suffix: append([]byte(nil), s...), P: append([]float64(nil), l.P...)}
	}
	var path []byte
	var build func(n *trieNode) (*Node, error)
	build = func(n *trieNode) (*Node, error) {
		if n.leaf != nil {
			return &Node{P: n.leaf.P}, nil
		}
		out := &Node{Children: make([]*Node, A)}
		for q := 0; q < A; q++ {
			path = append(path, byte(q))
			if n.kids[q] == nil {
				return nil, fmt.Errorf("source: suffix set is not complete: missing suffix %s (no suffix in the set matches contexts ending in it)", formatPath(path, A))
			}
			c, err := build(n.kids[q])
			path = path[:len(path)-1]
			if err != nil {
				return nil, err
			}
			out.Children[q] = c
		}
		return out, nil
	}
	r, err := build(root)
	if err != nil {
		return nil, err
	}
	return &Tree{A: A, D: D, Root: r}, nil
}

// firstTrieLeaf returns some leaf below n (n has at least one).
func firstTrieLeaf(n *trieNode) *Leaf {
	for n.leaf == nil {
		for _, k := range n.kids {
			if k != nil {
				n = k
				break
			}
		}
	}
	return n.leaf
}

// Clone returns a deep copy of the tree.
func (t *Tree) Clone() *Tree {
	if t == nil {
		return nil
	}
	var cp func(n *Node) *Node
	cp = func(n *Node) *Node {
		if n == nil {
			return nil
		}
		m := &Node{}
		if n.P != nil {
			m.P = append([]float64(nil), n.P...)
		}
		if n.Children != nil {
			m.Children = make([]*Node, len(n.Children))
			for i, c := range n.Children {
				m.Children[i] = cp(c)
			}
		}
		return m
	}
	return &Tree{A: t.A, D: t.D, Root: cp(t.Root)}
}

// NumLeavesAtDepth returns |L_D(T)| for the tree's declared D: the number of
// leaves whose depth equals D (the leaves that did not stop by the λ coin in
// π_D(T), Section 4.2).
func (t *Tree) NumLeavesAtDepth() int {
	if t == nil {
		return 0
	}
	return t.leavesAt(t.D)
}

// leavesAt counts the leaves at depth exactly D.
func (t *Tree) leavesAt(D int) int {
	if t == nil || t.Root == nil {
		return 0
	}
	var count func(n *Node, d int) int
	count = func(n *Node, d int) int {
		if n == nil {
			return 0
		}
		if n.Children == nil {
			if d == D {
				return 1
			}
			return 0
		}
		s := 0
		for _, c := range n.Children {
			s += count(c, d+1)
		}
		return s
	}
	return count(t.Root, 0)
}
