package source

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// splitMix64 is the SplitMix64 output function (Steele, Lea & Flood 2014):
// z = x + 0x9e3779b97f4a7c15, z = (z ⊕ z≫30)·0xbf58476d1ce4e5b9,
// z = (z ⊕ z≫27)·0x94d049bb133111eb, return z ⊕ z≫31. It is a bijection
// of uint64.
func splitMix64(x uint64) uint64 {
	z := x + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// RNG returns the random number generator of stream number stream under the
// given seed: rand.New(rand.NewPCG(hi, lo)) with hi = SM(seed) and
// lo = SM(stream ⊕ SM(seed ⊕ 0x5851f42d4c957f2d)), SM being the SplitMix64
// mixer. Distinct (seed, stream) pairs give distinct PCG states, and nearby
// seeds or streams give unrelated ones. By convention tree i of a data set
// uses RNG(seed, i), so results do not depend on the number of workers.
func RNG(seed, stream uint64) *rand.Rand {
	hi := splitMix64(seed)
	lo := splitMix64(stream ^ splitMix64(seed^0x5851f42d4c957f2d))
	return rand.New(rand.NewPCG(hi, lo))
}

const (
	// MaxFlatContexts is the largest table of contexts (A^Depth() entries)
	// that a Sampler precompiles; deeper trees are walked symbol by symbol.
	MaxFlatContexts = 1 << 20
	// MaxSequence is the largest sequence length Generate accepts (16 GiB).
	MaxSequence = 1 << 34
	// linearSearchMax is the largest alphabet size for which a symbol is
	// found by a linear scan of its leaf's CDF; larger alphabets start the
	// scan from a guide table.
	linearSearchMax = 16
)

// Sampler is a context tree compiled for fast generation. It holds every
// leaf's cumulative distribution (CDF) and either a flat table mapping each
// context of Depth() symbols to its leaf (when A^Depth() ≤ MaxFlatContexts)
// or a compact array form of the tree that is walked for every symbol. A
// Sampler is immutable and safe for concurrent use; it does not refer to the
// Tree it was built from.
type Sampler struct {
	a, d int
	// cdf[k·A + a] = Σ_{b≤a} p_s(b) for leaf k, normalised, with the entry
	// of the last positive-probability symbol and all later ones set to 1 so
	// that a zero-probability symbol is never drawn.
	cdf []float64
	// flat[ctx] = k·A for the leaf k of context ctx = Σ_{j=0}^{d−1}
	// x_{n−j}·A^j (most recent symbol least significant); nil in walk mode.
	flat []int32
	// next[i·A + q] is the child q of internal node i: ≥ 0 another internal
	// node, < 0 the leaf with CDF offset ^next[i·A+q]. Walk mode only.
	next []int32
	// guide[k·A + j] (alphabets larger than 16 only) is a guide table for
	// leaf k (Chen & Asau 1974): a symbol ≤ the smallest a with
	// cdf[k·A + a] > u for every u with ⌊u·A⌋ = j, so that the inverse-CDF
	// search for u starts at guide[k·A + ⌊u·A⌋] and takes O(1) steps on
	// average.
	guide []uint8
	// pow = A^{d−1}, the weight of the oldest symbol of a context.
	pow int
}

// NewSampler compiles a valid tree for generation.
func NewSampler(t *Tree) (*Sampler, error) {
	return newSampler(t, false)
}

func newSampler(t *Tree, forceWalk bool) (*Sampler, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	A := t.A
	s := &Sampler{a: A, d: t.Depth()}
	contexts, flat := 1, true
	for range s.d {
		contexts *= A
		if contexts > MaxFlatContexts {
			flat = false
			break
		}
	}
	if forceWalk {
		flat = false
	}
	s.pow = 1
	for range max(s.d-1, 0) {
		if s.pow > math.MaxInt32 {
			break
		}
		s.pow *= A
	}
	leafOff := func(n *Node) int32 {
		off := int32(len(s.cdf))
		s.cdf = append(s.cdf, make([]float64, A)...)
		fillCDF(n.P, s.cdf[off:])
		if A > linearSearchMax {
			s.guide = append(s.guide, make([]uint8, A)...)
			fillGuide(s.cdf[off:], s.guide[off:])
		}
		return off
	}
	if flat {
		s.flat = make([]int32, contexts)
		var path []byte
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Children == nil {
				off := leafOff(n)
				base, stride := 0, 1
				for _, q := range path {
					base += int(q) * stride
					stride *= A
				}
				for c := base; c < contexts; c += stride {
					s.flat[c] = off
				}
				return
			}
			for q, c := range n.Children {
				path = append(path, byte(q))
				walk(c)
				path = path[:len(path)-1]
			}
		}
		walk(t.Root)
		return s, nil
	}
	if t.Root.Children == nil {
		leafOff(t.Root)
		return s, nil
	}
	// Walk mode: number internal nodes in breadth-first order (root = 0).
	queue := []*Node{t.Root}
	for i := 0; i < len(queue); i++ {
		if len(queue) > math.MaxInt32/A || len(s.cdf) > math.MaxInt32-A {
			return nil, errors.New("source: tree too large to compile")
		}
		for _, c := range queue[i].Children {
			if c.Children == nil {
				s.next = append(s.next, ^leafOff(c))
			} else {
				s.next = append(s.next, int32(len(queue)))
				queue = append(queue, c)
			}
		}
	}
	return s, nil
}

// fillCDF writes the normalised CDF of p into c (see Sampler.cdf).
func fillCDF(p, c []float64) {
	total, last := 0.0, 0
	for a, v := range p {
		total += v
		if v > 0 {
			last = a
		}
	}
	cum := 0.0
	for a, v := range p {
		cum += v
		c[a] = cum / total
		if a >= last {
			c[a] = 1
		}
	}
}

// fillGuide fills the guide table g of one leaf's CDF c (see
// Sampler.guide). Every u with ⌊u·A⌋ = j in floating point is at least
// (j/A)(1 − 1e−12), so g[j] is the smallest a with c[a] above that.
func fillGuide(c []float64, g []uint8) {
	A := len(c)
	a := 0
	for j := range g {
		lo := float64(j) / float64(A) * (1 - 1e-12)
		for a < A-1 && c[a] <= lo {
			a++
		}
		g[j] = uint8(a)
	}
}

// AlphabetSize returns A.
func (s *Sampler) AlphabetSize() int { return s.a }

// Depth returns the depth of the compiled tree: the number of past symbols
// that determine the next symbol's distribution.
func (s *Sampler) Depth() int { return s.d }

// Flat reports whether the sampler uses a flat context table (A^Depth() ≤
// MaxFlatContexts) rather than walking the tree.
func (s *Sampler) Flat() bool { return s.flat != nil || s.next == nil }

// initTail checks init and returns the last d symbols of the initial
// context (d zeros when init is nil).
func (s *Sampler) initTail(init []byte) ([]byte, error) {
	if init == nil {
		return make([]byte, s.d), nil
	}
	if len(init) < s.d {
		return nil, fmt.Errorf("source: initial context has %d symbols, the tree needs at least its depth %d", len(init), s.d)
	}
	for i, a := range init {
		if int(a) >= s.a {
			return nil, fmt.Errorf("source: initial context symbol %d at position %d is outside the alphabet 0..%d", a, i, s.a-1)
		}
	}
	return init[len(init)-s.d:], nil
}

// Generate draws x_1, …, x_n from the source given the initial context
// x_{1−D}^0 = init (time order, most recent symbol last; it is not part of
// the output). Only the last Depth() symbols of init matter, so init may
// have any length ≥ Depth(); nil means the paper's dummy context of D copies
// of symbol 0 (Section 4.2). Each symbol x_j is drawn from p_s, s the leaf of
// (…, x_{j−1}), by inverse CDF with one rng.Float64().
func (s *Sampler) Generate(rng *rand.Rand, n int, init []byte) ([]byte, error) {
	if n < 0 || n > MaxSequence {
		return nil, fmt.Errorf("source: sequence length %d outside 0..%d", n, MaxSequence)
	}
	if rng == nil {
		return nil, errors.New("source: nil *rand.Rand")
	}
	tail, err := s.initTail(init)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	s.fill(rng, out, tail)
	return out, nil
}

// Fill is Generate writing x_1, …, x_{len(dst)} into dst.
func (s *Sampler) Fill(rng *rand.Rand, dst []byte, init []byte) error {
	if rng == nil {
		return errors.New("source: nil *rand.Rand")
	}
	tail, err := s.initTail(init)
	if err != nil {
		return err
	}
	s.fill(rng, dst, tail)
	return nil
}

// Generate compiles the tree (see NewSampler) and draws n symbols; see
// Sampler.Generate. To generate many sequences from one tree, compile it
// once with NewSampler.
func (t *Tree) Generate(rng *rand.Rand, n int, init []byte) ([]byte, error) {
	s, err := NewSampler(t)
	if err != nil {
		return nil, err
	}
	return s.Generate(rng, n, init)
}

func (s *Sampler) fill(rng *rand.Rand, dst, tail []byte) {
	if len(dst) == 0 {
		return
	}
	if s.flat != nil || s.next == nil {
		if s.a <= linearSearchMax {
			s.fillFlatLinear(rng, dst, tail)
		} else {
			s.fillFlatGuided(rng, dst, tail)
		}
		return
	}
	s.fillWalk(rng, dst, tail)
}

// ringFor returns a ring buffer (power-of-two length ≥ d) holding tail at
// positions 0..d−1, and its mask.
func ringFor(tail []byte, d int) ([]byte, int) {
	size := 1
	for size < d+1 {
		size <<= 1
	}
	ring := make([]byte, size)
	copy(ring, tail)
	return ring, size - 1
}

func (s *Sampler) startContext(tail []byte) int {
	ctx, w := 0, 1
	for j := len(tail) - 1; j >= 0; j-- {
		ctx += int(tail[j]) * w
		w *= s.a
	}
	return ctx
}

func (s *Sampler) fillFlatLinear(rng *rand.Rand, dst, tail []byte) {
	A, d, pow := s.a, s.d, s.pow
	cdf, flat := s.cdf, s.flat
	if d == 0 {
		c := cdf[:A]
		for i := range dst {
			u := rng.Float64()
			x := 0
			for u >= c[x] {
				x++
			}
			dst[i] = byte(x)
		}
		return
	}
	ring, mask := ringFor(tail, d)
	p := d
	ctx := s.startContext(tail)
	for i := range dst {
		off := int(flat[ctx])
		c := cdf[off : off+A : off+A]
		u := rng.Float64()
		x := 0
		for u >= c[x] {
			x++
		}
		dst[i] = byte(x)
		old := int(ring[(p-d)&mask])
		ring[p&mask] = byte(x)
		p++
		ctx = (ctx-old*pow)*A + x
	}
}

func (s *Sampler) fillFlatGuided(rng *rand.Rand, dst, tail []byte) {
	A, d, pow := s.a, s.d, s.pow
	fA := float64(A)
	var ring []byte
	mask := 0
	if d > 0 {
		ring, mask = ringFor(tail, d)
	}
	p := d
	ctx := s.startContext(tail)
	for i := range dst {
		off := 0
		if d > 0 {
			off = int(s.flat[ctx])
		}
		x := s.guided(off, rng.Float64(), fA)
		dst[i] = byte(x)
		if d > 0 {
			old := int(ring[(p-d)&mask])
			ring[p&mask] = byte(x)
			p++
			ctx = (ctx-old*pow)*A + x
		}
	}
}

// guided returns the symbol of leaf offset off for the uniform u: the
// smallest a with cdf[off+a] > u, scanning from the guide table.
func (s *Sampler) guided(off int, u, fA float64) int {
	j := min(int(u*fA), s.a-1)
	x := int(s.guide[off+j])
	c := s.cdf[off : off+s.a]
	for u >= c[x] {
		x++
	}
	return x
}

func (s *Sampler) fillWalk(rng *rand.Rand, dst, tail []byte) {
	A, d := s.a, s.d
	fA := float64(A)
	ring, mask := ringFor(tail, d)
	p := d
	next, cdf := s.next, s.cdf
	for i := range dst {
		c := next[int(ring[(p-1)&mask])]
		for j := 2; c >= 0; j++ {
			c = next[int(c)*A+int(ring[(p-j)&mask])]
		}
		off := int(^c)
		u := rng.Float64()
		var x int
		if A <= linearSearchMax {
			cd := cdf[off : off+A]
			for u >= cd[x] {
				x++
			}
		} else {
			x = s.guided(off, u, fA)
		}
		dst[i] = byte(x)
		ring[p&mask] = byte(x)
		p++
	}
}

// LogLikelihood returns ln P_{T,{p_s}}(x_1^n | x_{1−D}^0) in nats, the
// log-likelihood of x under the source (Section 4.2):
// Σ_j ln p_{β(…, x_{j−1})}(x_j), with the initial context init as in
// Generate (nil: D zeros). It is −Inf if some x_j has probability 0.
func (t *Tree) LogLikelihood(x, init []byte) (float64, error) {
	if err := t.Validate(); err != nil {
		return 0, err
	}
	d := t.Depth()
	var tail []byte
	if init == nil {
		tail = make([]byte, d)
	} else {
		if len(init) < d {
			return 0, fmt.Errorf("source: initial context has %d symbols, the tree needs at least its depth %d", len(init), d)
		}
		tail = init[len(init)-d:]
	}
	buf := append(append(make([]byte, 0, d+len(x)), tail...), x...)
	ll := 0.0
	for j, a := range x {
		if int(a) >= t.A {
			return 0, fmt.Errorf("source: symbol %d at position %d is outside the alphabet 0..%d", a, j, t.A-1)
		}
		leaf, err := t.LeafFor(buf[:d+j])
		if err != nil {
			return 0, err
		}
		ll += math.Log(leaf.P[a])
	}
	return ll, nil
}
