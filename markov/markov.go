// Package markov implements vomc's fixed-order Markov baselines: the
// order-0 (unigram) estimator and the order-k Markov estimator, both with
// Dirichlet(α) ("add-α") smoothing fitted sequentially to the history seen so
// far (in-context, no pretraining).
//
// With n_s(a) the number of times symbol a followed context s in the history
// x_1^n, the prediction of x_{n+1} in context s is the Dirichlet(α) posterior
// mean (the paper's eq. (dirichlet-mean) in the appendix "A New Formula for
// Bayesian Next Token Prediction", app:new-formula, with α(a) = α for every
// a):
//
//	P(a | s) = (n_s(a) + α) / (Σ_b n_s(b) + A·α).
//
// α = 1/2 is the Krichevsky–Trofimov (Jeffreys) estimator, α = 1 is Laplace.
// The unigram estimator is the case k = 0 (s is empty, n(a) counts a in
// x_1^n). Each Predict costs O(A); each Observe O(1) with dense tables (used
// when A^(k+1) ≤ 65536) and otherwise one hash-map lookup plus a scan of the
// symbols already seen in the context (large alphabets or orders).
//
// All losses in vomc are natural-log losses (nats).
package markov

import (
	"fmt"
	"math"
	"strconv"

	"github.com/vomc/vomc/predict"
)

// Init selects how a FixedOrder estimator of order k treats the first k
// positions, where fewer than k symbols of context exist.
type Init int

const (
	// Pad (the default) prefixes the sequence with k zero symbols, the
	// convention of vomc's generator, which pads the source with D zeros:
	// the context of x_{n+1} is the last k symbols of 0^k x_1^n, and the
	// first k (padded) contexts are counted like any other.
	Pad Init = iota
	// Shorter uses the available shorter context x_1^n (length min(k, n))
	// with its own counts table per length. A length-n context can never
	// have been followed by a symbol in a history of length n, so under this
	// convention the first k symbols are predicted uniformly (1/A) and only
	// positions with a full order-k context contribute counts: the classic
	// "no padding" fixed-order estimator.
	Shorter
)

// String returns "pad" or "shorter".
func (i Init) String() string {
	switch i {
	case Pad:
		return "pad"
	case Shorter:
		return "shorter"
	}
	return "Init(" + strconv.Itoa(int(i)) + ")"
}

// Options are the optional settings of a FixedOrder estimator. The zero
// value gives the defaults.
type Options struct {
	// Init is the initial-context convention; the zero value is Pad.
	Init Init
}

// MaxOrder is the largest order k accepted by New and NewFixedOrder.
const MaxOrder = 64

// denseLimit is the largest table size A^(k+1) (in counts) for which a
// FixedOrder state uses dense arrays indexed by the base-A context id;
// above it contexts are kept in a hash map.
const denseLimit = 1 << 16

func checkAlphabet(A int) error {
	if A < 1 || A > 256 {
		return fmt.Errorf("markov: alphabet size %d outside 1..256", A)
	}
	return nil
}

func checkAlpha(alpha float64) error {
	if !(alpha > 0) || math.IsInf(alpha, 1) {
		return fmt.Errorf("markov: Dirichlet parameter α = %v must be positive and finite", alpha)
	}
	return nil
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// New returns the order-k Dirichlet(α) Markov estimator over the alphabet
// 0..A−1: a *Unigram when k = 0 and a *FixedOrder otherwise. It returns an
// error unless 1 ≤ A ≤ 256, 0 ≤ k ≤ MaxOrder, α > 0 (finite) and opts.Init
// is valid.
func New(A, k int, alpha float64, opts Options) (predict.Predictor, error) {
	if k == 0 {
		if err := checkInit(opts.Init); err != nil {
			return nil, err
		}
		return NewUnigram(A, alpha)
	}
	return NewFixedOrder(A, k, alpha, opts)
}

func checkInit(i Init) error {
	if i != Pad && i != Shorter {
		return fmt.Errorf("markov: unknown initial-context convention %d", int(i))
	}
	return nil
}

// Unigram is the order-0 Dirichlet(α) estimator
//
//	P(x_{n+1} = a | x_1^n) = (n(a) + α) / (n + A·α),
//
// where n(a) is the number of occurrences of a in x_1^n. It is immutable and
// safe for concurrent use. Its log-loss, like all of vomc's, is in nats.
type Unigram struct {
	a     int
	alpha float64
}

// NewUnigram returns the order-0 Dirichlet(α) estimator over 0..A−1. It
// returns an error unless 1 ≤ A ≤ 256 and α > 0 is finite.
func NewUnigram(A int, alpha float64) (*Unigram, error) {
	if err := checkAlphabet(A); err != nil {
		return nil, err
	}
	if err := checkAlpha(alpha); err != nil {
		return nil, err
	}
	return &Unigram{a: A, alpha: alpha}, nil
}

// Name returns "Unigram(α=<alpha>)", e.g. "Unigram(α=0.5)".
func (u *Unigram) Name() string { return "Unigram(α=" + fmtFloat(u.alpha) + ")" }

// AlphabetSize returns A.
func (u *Unigram) AlphabetSize() int { return u.a }

// Alpha returns the Dirichlet parameter α.
func (u *Unigram) Alpha() float64 { return u.alpha }

// NewState returns a state with an empty history (uniform first prediction).
func (u *Unigram) NewState() predict.State {
	return &unigramState{u: u, counts: make([]uint32, u.a)}
}

type unigramState struct {
	u      *Unigram
	counts []uint32
	total  uint64
	frozen bool
}

func (s *unigramState) Predict(p []float64) {
	A := s.u.a
	p = p[:A]
	inv := 1 / (float64(s.total) + float64(A)*s.u.alpha)
	for a, c := range s.counts {
		p[a] = (float64(c) + s.u.alpha) * inv
	}
}

func (s *unigramState) Observe(a byte) {
	if s.frozen {
		return
	}
	s.counts[a]++
	s.total++
}

// Freeze stops learning (predict.Freezer): later symbols change no count.
func (s *unigramState) Freeze() { s.frozen = true }

// FixedOrder is the order-k Dirichlet(α) Markov estimator
//
//	P(x_{n+1} = a | x_1^n) = (n_s(a) + α) / (Σ_b n_s(b) + A·α),   s = x_{n−k+1}^n,
//
// where n_s(a) counts the positions i ≤ n at which context s was followed by
// a (see Init for the first k positions). It is immutable and safe for
// concurrent use; log-losses are in nats.
type FixedOrder struct {
	a, k        int
	alpha       float64
	init        Init
	nctx        int    // A^k when dense
	bits        uint   // bits per symbol for the uint64 sparse key
	keyMask     uint64 // mask of k·bits bits
	mode        int    // modeDense, modeKey, modeString
	forceSparse bool   // tests only: use the map even when dense fits
}

const (
	modeDense  = iota // counts[ctxID·A + a] with ctxID the base-A value of s
	modeKey           // map from the packed uint64 context to a table
	modeString        // map from the k-byte context string to a table
)

// NewFixedOrder returns the order-k Dirichlet(α) Markov estimator over
// 0..A−1 with the given options. It returns an error unless 1 ≤ A ≤ 256,
// 0 ≤ k ≤ MaxOrder, α > 0 (finite) and opts.Init is valid. (k = 0 is allowed and
// equivalent to NewUnigram.)
func NewFixedOrder(A, k int, alpha float64, opts Options) (*FixedOrder, error) {
	if err := checkAlphabet(A); err != nil {
		return nil, err
	}
	if k < 0 || k > MaxOrder {
		return nil, fmt.Errorf("markov: order k = %d outside 0..%d", k, MaxOrder)
	}
	if err := checkAlpha(alpha); err != nil {
		return nil, err
	}
	if err := checkInit(opts.Init); err != nil {
		return nil, err
	}
	m := &FixedOrder{a: A, k: k, alpha: alpha, init: opts.Init}
	m.configure()
	return m, nil
}

func (m *FixedOrder) configure() {
	size := m.a // A^(k+1)
	dense := !m.forceSparse
	for i := 0; i < m.k && dense; i++ {
		size *= m.a
		if size > denseLimit {
			dense = false
		}
	}
	if dense {
		m.mode = modeDense
		m.nctx = size / m.a
		return
	}
	b := uint(0)
	for (1 << b) < m.a {
		b++
	}
	if b == 0 {
		b = 1
	}
	m.bits = b
	if uint(m.k)*b <= 64 {
		m.mode = modeKey
		if uint(m.k)*b == 64 {
			m.keyMask = math.MaxUint64
		} else {
			m.keyMask = (uint64(1) << (uint(m.k) * b)) - 1
		}
		return
	}
	m.mode = modeString
}

// Name returns "Markov(k=<k>,α=<alpha>)", with ",shorter" appended for the
// Shorter convention, e.g. "Markov(k=2,α=0.5)".
func (m *FixedOrder) Name() string {
	s := "Markov(k=" + strconv.Itoa(m.k) + ",α=" + fmtFloat(m.alpha)
	if m.init == Shorter {
		s += ",shorter"
	}
	return s + ")"
}

// AlphabetSize returns A.
func (m *FixedOrder) AlphabetSize() int { return m.a }

// Order returns k.
func (m *FixedOrder) Order() int { return m.k }

// Alpha returns the Dirichlet parameter α.
func (m *FixedOrder) Alpha() float64 { return m.alpha }

// Init returns the initial-context convention.
func (m *FixedOrder) Init() Init { return m.init }

// NewState returns a state with an empty history.
func (m *FixedOrder) NewState() predict.State {
	if m.mode == modeDense {
		return &denseState{
			m:      m,
			counts: make([]uint32, m.nctx*m.a),
			totals: make([]uint32, m.nctx),
		}
	}
	s := &sparseState{m: m, cur: -1}
	if m.mode == modeKey {
		s.byKey = make(map[uint64]int32)
	} else {
		s.byStr = make(map[string]int32)
		s.win = make([]byte, m.k) // 0^k: the padded initial context
	}
	return s
}

// counting reports whether the transition out of the current context is
// counted (always under Pad; only with a full context under Shorter).
func (m *FixedOrder) counting(n int) bool { return m.init == Pad || n >= m.k }

func (m *FixedOrder) uniform(p []float64) {
	u := 1 / float64(m.a)
	for a := range p {
		p[a] = u
	}
}

// denseState keeps the counts of all A^k contexts in flat arrays; the
// context id is the base-A number formed by the last k symbols of the
// zero-padded history, so the initial id 0 is the padded context 0^k.
type denseState struct {
	m      *FixedOrder
	n      int
	id     int
	counts []uint32
	totals []uint32
	frozen bool
}

// Freeze stops learning (predict.Freezer): later symbols move the context
// but change no count.
func (s *denseState) Freeze() { s.frozen = true }

func (s *denseState) Predict(p []float64) {
	m := s.m
	p = p[:m.a]
	if !m.counting(s.n) {
		m.uniform(p)
		return
	}
	c := s.counts[s.id*m.a : (s.id+1)*m.a]
	inv := 1 / (float64(s.totals[s.id]) + float64(m.a)*m.alpha)
	for a, n := range c {
		p[a] = (float64(n) + m.alpha) * inv
	}
}

func (s *denseState) Observe(a byte) {
	m := s.m
	if !s.frozen && m.counting(s.n) {
		s.counts[s.id*m.a+int(a)]++
		s.totals[s.id]++
	}
	s.id = (s.id*m.a + int(a)) % m.nctx
	s.n++
}

type entry struct {
	sym byte
	n   uint32
}

type table struct {
	total uint32
	ent   []entry // the symbols seen in this context, in order of first appearance
}

// sparseState keeps one small table per context actually seen, found through
// a hash map keyed by the packed context (or by its bytes when k·⌈log2 A⌉
// exceeds 64 bits).
type sparseState struct {
	m      *FixedOrder
	n      int
	key    uint64
	win    []byte
	byKey  map[uint64]int32
	byStr  map[string]int32
	tables []table
	cur    int32 // table of the current context, −1 if never seen
	frozen bool
}

// Freeze stops learning (predict.Freezer): later symbols move the context
// but change no count.
func (s *sparseState) Freeze() { s.frozen = true }

func (s *sparseState) Predict(p []float64) {
	m := s.m
	p = p[:m.a]
	if s.cur < 0 || !m.counting(s.n) {
		m.uniform(p)
		return
	}
	t := &s.tables[s.cur]
	inv := 1 / (float64(t.total) + float64(m.a)*m.alpha)
	base := m.alpha * inv
	for a := range p {
		p[a] = base
	}
	for _, e := range t.ent {
		p[e.sym] = (float64(e.n) + m.alpha) * inv
	}
}

func (s *sparseState) Observe(a byte) {
	m := s.m
	if !s.frozen && m.counting(s.n) {
		if s.cur < 0 {
			s.cur = int32(len(s.tables))
			s.tables = append(s.tables, table{})
			if s.byKey != nil {
				s.byKey[s.key] = s.cur
			} else {
				s.byStr[string(s.win)] = s.cur
			}
		}
		t := &s.tables[s.cur]
		t.total++
		found := false
		for i := range t.ent {
			if t.ent[i].sym == a {
				t.ent[i].n++
				found = true
				break
			}
		}
		if !found {
			t.ent = append(t.ent, entry{sym: a, n: 1})
		}
	}
	s.n++
	var ok bool
	if s.byKey != nil {
		s.key = ((s.key << m.bits) | uint64(a)) & m.keyMask
		s.cur, ok = s.byKey[s.key]
	} else {
		copy(s.win, s.win[1:])
		s.win[len(s.win)-1] = a
		s.cur, ok = s.byStr[string(s.win)]
	}
	if !ok {
		s.cur = -1
	}
}

var _ predict.Predictor = (*Unigram)(nil)
var _ predict.Predictor = (*FixedOrder)(nil)
