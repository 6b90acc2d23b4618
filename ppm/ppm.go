// Package ppm implements Prediction by Partial Matching (Cleary and Witten
// 1984) of finite order D with the escape methods A and C of Moffat (1990)
// and D of Howard (1993), with or without exclusion, as described in the
// paper's appendix "The PPM Algorithm" (app:ppm). It is fitted in context:
// the counts are those of the history before the current position.
//
// # Coding a symbol
//
// For the next symbol a, PPM looks at the contexts s_k = x_{n−k+1}^n for
// k = m, m−1, …, 0 with m = min(D, n) (the longest available context when
// the history is shorter than D). In context s with counts c(s, b), total
// n = Σ_b c(s, b) and d = |{b : c(s, b) > 0}| distinct symbols:
//
//	method A: P(b) = c/(n+1),       P(Esc) = 1/(n+1)
//	method C: P(b) = c/(n+d),       P(Esc) = d/(n+d)
//	method D: P(b) = (2c−1)/(2n),   P(Esc) = d/(2n)
//
// If c(s, a) > 0, a is coded at this order with probability P(a); otherwise
// an escape is coded with probability P(Esc) and PPM moves to order k−1. A
// context never seen (n = 0) is skipped without any escape cost. Order −1
// is the uniform distribution 1/A over the alphabet. The probability of a
// is the product of the escape probabilities and P(a) at the order that
// codes it: for instance in the paper's table (alphabet {a,b,c}, D = 2,
// method A, after a b c a b b c) P(a) = 1/2 and P(b) = 1/2 · 1/2 · 3/8.
//
// # Exclusion
//
// With exclusion, the symbols that occurred in a higher-order context that
// was visited (and escaped from) are removed from every lower-order
// context: n and d are recomputed over the remaining symbols, a context with
// no remaining symbol is skipped without cost, and order −1 is uniform over
// the symbols not excluded. In addition, an escape from a context whose
// remaining symbols are all the symbols not yet excluded could lead
// nowhere; it is not coded (probability 0) and that context's symbol
// probabilities are the method's symbol weights renormalised without the
// escape (c/n for A and C, (2c−1)/(2n−d) for D). With exclusion the A
// probabilities therefore sum to exactly 1 (up to rounding).
//
// # Without exclusion the probabilities sum to less than one
//
// Without exclusion a symbol already predicted at a higher order still takes
// part in n and d below, and the escape mass of lower orders that would
// reach it again is wasted: the A values written by Predict sum to less than
// one as soon as an escape can lead to an already predicted symbol (to one
// only in degenerate cases such as an empty history). Predict returns them
// exactly as PPM assigns them, so −ln p is exactly PPM's code length (in
// nats); set Options.Normalize to renormalise them into a distribution
// instead.
//
// # Updates
//
// After each symbol its count is incremented in all the contexts of orders
// 0..min(D, n) (no update exclusion), as in the paper's table. With
// Options.UpdateExclusion only the contexts of orders ≥ the order that coded
// the symbol are updated (all of them for a symbol coded at order −1), the
// "update exclusion" of PPMC-style compressors.
//
// Predict costs O(Σ_k d(s_k) + A) ⊆ O(D·A) per symbol and Observe O(D) trie
// steps. Counts are kept in a forward trie whose child lists are dense
// arrays for A ≤ 16 and hashed by (context node, symbol) for larger
// alphabets such as bytes.
package ppm

import (
	"fmt"
	"strconv"

	"github.com/vomc/vomc/internal/ctxtrie"
	"github.com/vomc/vomc/predict"
)

// MaxOrder is the largest order D accepted by New.
const MaxOrder = 64

// Method is a PPM escape method (Moffat 1990). The zero value is MethodA.
type Method int

const (
	// MethodA gives the escape a count of one: P(b) = c/(n+1),
	// P(Esc) = 1/(n+1). It is the method of the paper's appendix app:ppm.
	MethodA Method = iota
	// MethodC gives the escape the number of distinct symbols d:
	// P(b) = c/(n+d), P(Esc) = d/(n+d).
	MethodC
	// MethodD halves each count and gives the escape d/2:
	// P(b) = (2c−1)/(2n), P(Esc) = d/(2n).
	MethodD
)

// String returns "A", "C" or "D".
func (m Method) String() string {
	switch m {
	case MethodA:
		return "A"
	case MethodC:
		return "C"
	case MethodD:
		return "D"
	}
	return "Method(" + strconv.Itoa(int(m)) + ")"
}

// Options are the settings of a PPM predictor. The zero value is the paper's
// configuration: method A, no exclusion, no update exclusion, unnormalised.
type Options struct {
	// Method is the escape method.
	Method Method
	// Exclusion removes the symbols of visited higher-order contexts from
	// the lower orders (see the package documentation).
	Exclusion bool
	// UpdateExclusion updates only the contexts of orders at or above the
	// order that coded the symbol.
	UpdateExclusion bool
	// Normalize divides the A probabilities by their sum. Without
	// exclusion they otherwise sum to less than one (PPM's code space
	// wasted on escapes); with exclusion it changes nothing but rounding.
	Normalize bool
}

// PPM is an order-D PPM predictor (see the package documentation). It is
// immutable and safe for concurrent use.
type PPM struct {
	a, order int
	opts     Options
}

// New returns the order-D (D = order) PPM predictor over 0..A−1. It returns
// an error unless 1 ≤ A ≤ 256, 0 ≤ order ≤ MaxOrder and opts.Method is one
// of MethodA, MethodC, MethodD.
func New(A, order int, opts Options) (*PPM, error) {
	if A < 1 || A > 256 {
		return nil, fmt.Errorf("ppm: alphabet size %d outside 1..256", A)
	}
	if order < 0 || order > MaxOrder {
		return nil, fmt.Errorf("ppm: order %d outside 0..%d", order, MaxOrder)
	}
	switch opts.Method {
	case MethodA, MethodC, MethodD:
	default:
		return nil, fmt.Errorf("ppm: unknown escape method %d", int(opts.Method))
	}
	return &PPM{a: A, order: order, opts: opts}, nil
}

// Name returns "PPM(D=<order>,<method>" followed by ",excl", ",updexcl" and
// ",norm" for the options set, and ")", e.g. "PPM(D=2,A)" or
// "PPM(D=4,C,excl)".
func (m *PPM) Name() string {
	s := "PPM(D=" + strconv.Itoa(m.order) + "," + m.opts.Method.String()
	if m.opts.Exclusion {
		s += ",excl"
	}
	if m.opts.UpdateExclusion {
		s += ",updexcl"
	}
	if m.opts.Normalize {
		s += ",norm"
	}
	return s + ")"
}

// AlphabetSize returns A.
func (m *PPM) AlphabetSize() int { return m.a }

// Order returns D.
func (m *PPM) Order() int { return m.order }

// Options returns the options the predictor was built with.
func (m *PPM) Options() Options { return m.opts }

// NewState returns a state with an empty history (uniform first prediction).
func (m *PPM) NewState() predict.State { return m.newState() }

func (m *PPM) newState() *state {
	return &state{
		m:     m,
		t:     ctxtrie.New[struct{}](m.a),
		ctx:   make([]int32, 1, m.order+1),
		next:  make([]int32, 1, m.order+1),
		found: make([]int32, m.order+2),
		mark:  make([]uint32, m.a),
	}
}

// state is the history of one sequence: the trie of counts and the nodes of
// the current contexts ctx[k], k = 0..min(D, n).
type state struct {
	m         *PPM
	t         ctxtrie.Trie[struct{}]
	ctx, next []int32
	frozen    bool     // Freeze was called: contexts move, counts stay
	found     []int32  // found[L]: arena index of the kid a of ctx[L−1], or −1
	mark      []uint32 // mark[a] == gen: a has been given its probability
	gen       uint32
}

// weights returns, for a context with (remaining) total n and d distinct
// symbols, the denominator and escape weight of the method; a symbol of
// count c then has probability symWeight(c)/den and the escape escW/den.
func (m *PPM) weights(n, d uint32) (den, escW float64) {
	switch m.opts.Method {
	case MethodC:
		return float64(n) + float64(d), float64(d)
	case MethodD:
		return 2 * float64(n), float64(d)
	}
	return float64(n) + 1, 1
}

func (m *PPM) symWeight(c uint32) float64 {
	if m.opts.Method == MethodD {
		return 2*float64(c) - 1
	}
	return float64(c)
}

// Predict writes PPM's probability of every symbol: the product of the
// escapes from the orders above the one that codes it and its probability
// there. Without exclusion the values sum to less than one unless
// Options.Normalize is set (see the package documentation).
func (s *state) Predict(p []float64) {
	m := s.m
	A := m.a
	p = p[:A]
	s.gen++
	if s.gen == 0 {
		clear(s.mark)
		s.gen = 1
	}
	gen := s.gen
	excl := m.opts.Exclusion
	assigned := 0
	esc := 1.0
	for k := len(s.ctx) - 1; k >= 0 && esc > 0; k-- {
		nd := &s.t.Nodes[s.ctx[k]]
		if nd.Total == 0 {
			continue
		}
		kids := s.t.Kids(s.ctx[k])
		n, d := nd.Total, uint32(nd.N)
		if excl {
			n, d = 0, 0
			for i := range kids {
				if c := kids[i].Count; c > 0 && s.mark[kids[i].Sym] != gen {
					n += c
					d++
				}
			}
			if n == 0 {
				continue
			}
		}
		den, escW := m.weights(n, d)
		if excl && int(d) == A-assigned {
			den -= escW // no symbol left to escape to: the escape is not coded
			escW = 0
		}
		f := esc / den
		for i := range kids {
			c := kids[i].Count
			if c == 0 {
				continue
			}
			a := kids[i].Sym
			if s.mark[a] != gen {
				s.mark[a] = gen
				p[a] = f * m.symWeight(c)
				assigned++
			}
		}
		esc *= escW / den
	}
	if assigned < A {
		// Order −1: uniform over the alphabet, or over the symbols not
		// excluded.
		u := esc / float64(A)
		if excl {
			u = esc / float64(A-assigned)
		}
		for a := range p {
			if s.mark[a] != gen {
				p[a] = u
			}
		}
	}
	if m.opts.Normalize {
		sum := 0.0
		for _, v := range p {
			sum += v
		}
		inv := 1 / sum
		for a := range p {
			p[a] *= inv
		}
	}
}

// Observe appends a to the history and updates the counts.
func (s *state) Observe(a byte) {
	if s.frozen {
		s.ctx, s.next = s.t.Advance(s.ctx, s.next, a, s.m.order), s.ctx
		return
	}
	m := s.m
	t := &s.t
	// Find a in every current context; the highest order where it occurs
	// is the order that codes it (−1 if none).
	coded := -1
	for L := 1; L <= len(s.ctx); L++ {
		i := t.Find(s.ctx[L-1], a)
		s.found[L] = i
		if i >= 0 {
			coded = L - 1
		}
	}
	next := s.next[:1]
	next[0] = 0
	for L := 1; L <= len(s.ctx); L++ {
		parent := s.ctx[L-1]
		i := s.found[L]
		if i < 0 {
			i = t.Add(parent, a)
		}
		if !m.opts.UpdateExclusion || L-1 >= coded {
			t.Arena[i].Count++
			t.Nodes[parent].Total++
		}
		if L <= m.order {
			next = append(next, t.Arena[i].Node)
		}
	}
	s.ctx, s.next = next, s.ctx
}

// Freeze stops learning (predict.Freezer): later symbols move the contexts
// to the longest ones that occurred before freezing, but no count changes.
func (s *state) Freeze() { s.frozen = true }

var _ predict.Predictor = (*PPM)(nil)
