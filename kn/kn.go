// Package kn implements interpolated Kneser–Ney smoothing (absolute
// discounting) exactly as in the paper's appendix "Kneser–Ney Smoothing"
// (app:kn), fitted in context: the counts are those of the history before
// the current position, with no pretraining.
//
// For an order-D model and a context s of length k ≤ D (the last k symbols
// of the history), let c(s, a) be the number of occurrences of s followed by
// a in the history, c(s) = Σ_w c(s, w) and N(s) = |{w : c(s, w) > 0}|. With a
// discount δ ∈ (0, 1),
//
//	p_k(a | s) = max(c(s, a) − δ, 0) / c(s) + δ·N(s)/c(s) · p_{k−1}(a | s'),
//
// where s' is s without its oldest symbol. If c(s) = 0 (s has never been
// followed by anything) the order falls back entirely: p_k = p_{k−1}. Order
// 0 (s empty, c(a) the count of a in the history) interpolates in the same
// way with order −1, the uniform distribution 1/A; with no history at all
// the prediction is therefore uniform. When the history x_1^n is shorter than
// D the longest available context, of length n, is used (it is necessarily
// unseen, so the prediction comes from the orders below n).
//
// Every symbol gets a positive probability (δ > 0 and N(s) ≥ 1 whenever
// c(s) > 0) and the probabilities sum to one. Each Predict costs O(D + A + Σ_k
// N(s_k)) ⊆ O(D·A); each Observe O(D) trie steps. Log-losses are in nats.
package kn

import (
	"fmt"
	"strconv"

	"github.com/vomc/vomc/internal/ctxtrie"
	"github.com/vomc/vomc/predict"
)

// MaxOrder is the largest order D accepted by New and Tune.
const MaxOrder = 64

// Options are the optional settings of a Kneser–Ney predictor. The zero value
// is the paper's formula (raw counts at every order).
type Options struct {
	// Continuation selects the classic Kneser–Ney lower-order distributions:
	// every order k < D uses, instead of the raw count c(s, a), the
	// continuation count N1+(•s a) = |{w : c(w s a) > 0}|, the number of
	// distinct symbols that preceded the (k+1)-gram s·a, with c(s) and N(s)
	// replaced by Σ_a N1+(•s a) and |{a : N1+(•s a) > 0}|. The top order D
	// keeps raw counts. Off by default: the paper's formula uses raw counts.
	Continuation bool
}

// KN is an order-D interpolated Kneser–Ney predictor with discount δ (see the
// package documentation for the formula, appendix app:kn of the paper). It is
// immutable and safe for concurrent use.
type KN struct {
	a, order int
	delta    float64
	cont     bool
}

func validate(A, order int) error {
	if A < 1 || A > 256 {
		return fmt.Errorf("kn: alphabet size %d outside 1..256", A)
	}
	if order < 0 || order > MaxOrder {
		return fmt.Errorf("kn: order %d outside 0..%d", order, MaxOrder)
	}
	return nil
}

// New returns the order-D (D = order) Kneser–Ney predictor over 0..A−1 with
// discount δ = delta. It returns an error unless 1 ≤ A ≤ 256,
// 0 ≤ order ≤ MaxOrder and 0 < δ < 1.
func New(A, order int, delta float64, opts Options) (*KN, error) {
	if err := validate(A, order); err != nil {
		return nil, err
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("kn: discount δ = %v outside (0, 1)", delta)
	}
	return &KN{a: A, order: order, delta: delta, cont: opts.Continuation}, nil
}

// Name returns "KN(D=<order>,δ=<delta to 4 significant digits>)", with ",cont" appended for the
// continuation-count variant, e.g. "KN(D=3,δ=0.75)".
func (m *KN) Name() string {
	s := "KN(D=" + strconv.Itoa(m.order) + ",δ=" + strconv.FormatFloat(m.delta, 'g', 4, 64)
	if m.cont {
		s += ",cont"
	}
	return s + ")"
}

// AlphabetSize returns A.
func (m *KN) AlphabetSize() int { return m.a }

// Order returns D.
func (m *KN) Order() int { return m.order }

// Delta returns the discount δ.
func (m *KN) Delta() float64 { return m.delta }

// Options returns the options the predictor was built with.
func (m *KN) Options() Options { return Options{Continuation: m.cont} }

// NewState returns a state with an empty history.
func (m *KN) NewState() predict.State { return m.newState() }

func (m *KN) newState() *state {
	s := &state{
		m:     m,
		t:     ctxtrie.New[uint32](m.a),
		ctx:   make([]int32, 1, m.order+1),
		next:  make([]int32, 1, m.order+1),
		found: make([]int32, m.order+2),
	}
	if m.cont {
		s.cn = make([]contNode, 1, 64)
	}
	return s
}

// The trie's kids carry, in Kid.Ext, the continuation count
// N1+(•s a) = |{w : c(w s, a) > 0}| of the string s·a (continuation variant
// only; zero otherwise).
type trie = ctxtrie.Trie[uint32]

// contNode holds the continuation counts of a context s, kept parallel to
// the trie's nodes (index = node id) in the continuation variant only.
type contNode struct {
	total    uint32 // Σ_a N1+(•s a)
	distinct uint16 // |{a : N1+(•s a) > 0}|
}

// state is the history of one sequence: the trie of counts and the nodes of
// the current contexts ctx[k], k = 0..min(D, n).
type state struct {
	m         *KN
	t         trie
	cn        []contNode // cn[node]: continuation counts of node (continuation variant only)
	ctx, next []int32
	frozen    bool    // Freeze was called: contexts move, counts stay
	found     []int32 // found[L]: arena index of the kid a of ctx[L−1], or −1
}

func (s *state) reset() {
	s.t.Reset()
	if s.cn != nil {
		s.cn = s.cn[:1]
		s.cn[0] = contNode{}
	}
	s.ctx = s.ctx[:1]
	s.ctx[0] = 0
}

// stats returns (c, T, N) of order k for the symbol whose kid entry in
// ctx[k] is at arena index i (−1 if absent): raw counts, or continuation
// counts below the top order in the continuation variant.
func (s *state) stats(k int, i int32) (c, T, N uint32) {
	if s.m.cont && k < s.m.order {
		if i >= 0 {
			c = s.t.Arena[i].Ext
		}
		cn := &s.cn[s.ctx[k]]
		return c, cn.total, uint32(cn.distinct)
	}
	if i >= 0 {
		c = s.t.Arena[i].Count
	}
	nd := &s.t.Nodes[s.ctx[k]]
	return c, nd.Total, uint32(nd.N)
}

// tiny is the scale below which Predict folds its running scale factor into
// the distribution, so that long products of interpolation weights cannot
// underflow.
const tiny = 1e-200

// Predict writes the Kneser–Ney distribution of the next symbol. It works
// from order −1 upwards keeping p_k = S_k·q_k with S_k the product of the
// interpolation weights δ·N(s)/c(s), so each order costs only its N(s)
// seen symbols plus O(1).
func (s *state) Predict(p []float64) {
	m := s.m
	p = p[:m.a]
	u := 1 / float64(m.a)
	for a := range p {
		p[a] = u
	}
	scale := 1.0
	nodes := s.t.Nodes
	for k := range s.ctx {
		useCont := m.cont && k < m.order
		var T, N uint32
		if useCont {
			cn := &s.cn[s.ctx[k]]
			T, N = cn.total, uint32(cn.distinct)
		} else {
			nd := &nodes[s.ctx[k]]
			T, N = nd.Total, uint32(nd.N)
		}
		if T == 0 {
			continue
		}
		invT := 1 / float64(T)
		g := m.delta * float64(N) * invT
		if scale*g < tiny {
			for a := range p {
				p[a] *= scale
			}
			scale = 1
		}
		scale *= g
		w := invT / scale
		kids := s.t.Kids(s.ctx[k])
		if useCont {
			for i := range kids {
				if cn := kids[i].Ext; cn > 0 {
					p[kids[i].Sym] += (float64(cn) - m.delta) * w
				}
			}
		} else {
			for i := range kids {
				if cn := kids[i].Count; cn > 0 {
					p[kids[i].Sym] += (float64(cn) - m.delta) * w
				}
			}
		}
	}
	if scale != 1 {
		for a := range p {
			p[a] *= scale
		}
	}
}

// lookup fills found[L] with the arena index of the kid a of ctx[L−1]
// (−1 if absent) for L = 1..len(ctx).
func (s *state) lookup(a byte) {
	for L := 1; L <= len(s.ctx); L++ {
		s.found[L] = s.t.Find(s.ctx[L-1], a)
	}
}

// update appends a to the history, using found from lookup(a): it counts
// the new occurrence of every string x_{n−L+2}^{n+1}, L = 1..min(D, n)+1,
// and moves the contexts one position on.
func (s *state) update(a byte) {
	m := s.m
	t := &s.t
	next := s.next[:1]
	next[0] = 0
	for L := 1; L <= len(s.ctx); L++ {
		parent := s.ctx[L-1]
		i := s.found[L]
		created := i < 0
		if created {
			i = t.Add(parent, a)
			if m.cont {
				s.cn = append(s.cn, contNode{}) // continuation counts of the new node
			}
		}
		kd := &t.Arena[i]
		kd.Count++
		c := kd.Node
		t.Nodes[parent].Total++
		if m.cont && created && L >= 2 {
			// The new string x_{n−L+2}^{n+1} gives its suffix u, the
			// previous level's node, a new left extension.
			u, gp := next[L-1], s.ctx[L-2]
			ke := &t.Arena[t.Nodes[gp].Off+int32(t.Nodes[u].Pos)]
			ke.Ext++
			if ke.Ext == 1 {
				s.cn[gp].distinct++
			}
			s.cn[gp].total++
		}
		if L <= m.order {
			next = append(next, c)
		}
	}
	s.ctx, s.next = next, s.ctx
}

// Observe appends a to the history.
func (s *state) Observe(a byte) {
	if s.frozen {
		s.ctx, s.next = s.t.Advance(s.ctx, s.next, a, s.m.order), s.ctx
		return
	}
	s.lookup(a)
	s.update(a)
}

// prob returns p_kn(a | history) for the symbol a whose children were just
// looked up (found), by the recursion of appendix app:kn from order −1 upwards.
// It is the single-symbol counterpart of Predict used for log-loss.
func (s *state) prob(delta float64) float64 {
	p := 1 / float64(s.m.a)
	for k := range s.ctx {
		c, T, N := s.stats(k, s.found[k+1])
		p = interp(p, c, T, N, delta)
	}
	return p
}

// interp is one step of the recursion: the order-k probability of a symbol
// from its count c, the context total T and distinct count N, and the
// order-(k−1) probability lower (T = 0: fall back to lower).
func interp(lower float64, c, T, N uint32, delta float64) float64 {
	if T == 0 {
		return lower
	}
	fT := float64(T)
	hi := 0.0
	if c > 0 {
		hi = (float64(c) - delta) / fT
	}
	return hi + delta*float64(N)/fT*lower
}

// Freeze stops learning (predict.Freezer): later symbols move the contexts
// to the longest ones that occurred before freezing, but no count changes.
func (s *state) Freeze() { s.frozen = true }

var _ predict.Predictor = (*KN)(nil)
