package leafprior

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/vomc/vomc/internal/logexp"
)

// Limits of Sparse, the range over which its accuracy is tested.
const (
	// MaxSparseAlphabet is the largest alphabet NewSparse accepts.
	MaxSparseAlphabet = 16
	// MaxTotal is the largest total count Σ_a n_a that Sparse.LogMarginal
	// accepts; Sparse.Predictive accepts totals up to MaxTotal − 1 (it
	// evaluates the marginal at n + e_a).
	MaxTotal = 1 << 20
	// MemoEntries bounds the number of memoised values of one Sparse. An
	// entry (a string key of one to five bytes per non-zero count and a
	// float64, in a map) takes about 66 bytes at A = 3 and small counts
	// (measured), so a full memo holds some 35 MB there, and at most about
	// 80 MB at A = 16. The memo is split into 32 independently locked
	// shards, and a shard that reaches its share of MemoEntries is cleared
	// before its next insertion, so the memo never exceeds MemoEntries.
	MemoEntries = 1 << 19
	memoShards  = 32
)

// Sparse is the marginal likelihood of the leaves of source's Sparse
// generator over an alphabet of A symbols with zeroing probability z: every
// symbol is zeroed independently with probability z; if all A were zeroed,
// one symbol chosen uniformly is kept; the kept set S gets i.i.d.
// Uniform(0,1] values normalised to sum 1. So S has probability
//
//	P(S) = (1−z)^{|S|} z^{A−|S|}            for |S| ≥ 2,
//	P({a}) = (1−z) z^{A−1} + z^A/A,
//
// and for counts n with total N ≥ 1 and support U = {a : n_a > 0}, k = |U|,
//
//	M(n) = Σ_{S ⊇ U} P(S) · I_S(n) = Σ_{j=0}^{A−k} C(A−k, j) · P_{k+j} · I(n_U, 0^j),
//
// where P_m is P(S) for |S| = m and I(c_1, …, c_m) = E[∏ p_i^{c_i}] for m
// normalised uniforms (see integral.go), which depends only on the multiset
// of counts on S, j of them zero. M(0) = 1.
//
// Writing I(c) = exp(L(c))·J(c) with L(c) = Σ ln c_i! − ln Γ(N), which does
// not depend on the zeros, gives M(n) = exp(L(n))·K(n) with
// K(n) = Σ_j C(A−k, j) P_{k+j} J(n_U, 0^j), and the predictive
//
//	M(n+e_a)/M(n) = (n_a+1)·K(n+e_a) / Σ_b (n_b+1)·K(n+e_b),
//
// which uses Σ_b M(n+e_b) = M(n) and needs neither L nor K(n). ln K is
// memoised by the sorted non-zero counts; see MemoEntries.
//
// Accuracy, over the accepted range (A ≤ MaxSparseAlphabet, totals ≤
// MaxTotal): ln M is within about 1e−14 + 1e−15·|ln M| nats of the exact
// value, the second term being the rounding of L (|ln M| itself grows like
// N·ln A, where a float64's spacing is 2.2e−16·|ln M|). So M has a relative
// error below 1e−12 whenever |ln M| ≤ 900, e.g. for every count vector of
// total ≤ 800 at A = 3. The predictive probabilities have a relative error
// of about 1e−14 at every total (they use only ratios of K) and sum to 1
// to rounding. The tests verify: ln J and ln I for two symbols against
// 256-bit references from N = 1 to N = 2²⁰ (errors ≤ 4e−15 in ln J);
// M for A = 2 and z ∈ [0, 1] against its exact expansion; the quadrature's
// acceptance rule against a much stricter one for m ≤ 16; the identity
// Σ_a M(n+e_a) = M(n) for A ∈ {2, 3, 5, 16} and z ∈ {0, 0.2, 0.5, 0.9, 1}
// (through K: within 1e−14 observed, 1e−13 required, at totals up to
// MaxTotal − 1); and M against Monte Carlo averages over source's own
// generator.
//
// A Sparse is safe for concurrent use.
type Sparse struct {
	a    int
	zero float64
	// logW[m] = ln P_m, −Inf where P_m = 0.
	logW [MaxSparseAlphabet + 1]float64
	// logBin[r][j] = ln C(r, j).
	logBin [MaxSparseAlphabet + 1][MaxSparseAlphabet + 1]float64
	memo   memo
}

// NewSparse returns the marginal likelihood of source's Sparse generator
// over A symbols, 2 ≤ A ≤ MaxSparseAlphabet, with zeroing probability zero
// in [0, 1]. zero = 1 gives single-symbol leaves (p = e_a for a uniform a),
// zero = 0 gives A normalised uniforms.
func NewSparse(A int, zero float64) (*Sparse, error) {
	if A < 2 {
		return nil, fmt.Errorf("leafprior: sparse alphabet of %d symbols, need at least 2", A)
	}
	if A > MaxSparseAlphabet {
		return nil, fmt.Errorf("leafprior: sparse alphabet of %d symbols exceeds %d, the largest at which the sparse marginal's accuracy is tested", A, MaxSparseAlphabet)
	}
	if !(zero >= 0 && zero <= 1) {
		return nil, fmt.Errorf("leafprior: sparse zeroing probability %v outside [0,1]", zero)
	}
	s := &Sparse{a: A, zero: zero}
	l1z := math.Log1p(-zero) // ln(1−z)
	lz := math.Log(zero)
	xlog := func(k int, l float64) float64 { // k·l with 0·(−Inf) = 0
		if k == 0 {
			return 0
		}
		return float64(k) * l
	}
	s.logW[0] = math.Inf(-1)
	for m := 2; m <= A; m++ {
		s.logW[m] = xlog(m, l1z) + xlog(A-m, lz)
	}
	s.logW[1] = logexp.Add(l1z+xlog(A-1, lz), xlog(A, lz)-math.Log(float64(A)))
	for r := 0; r <= MaxSparseAlphabet; r++ {
		b := 1.0
		for j := 0; j <= r; j++ {
			s.logBin[r][j] = math.Log(b)
			b = b * float64(r-j) / float64(j+1)
		}
	}
	return s, nil
}

// AlphabetSize returns A.
func (s *Sparse) AlphabetSize() int { return s.a }

// Zero returns the zeroing probability z.
func (s *Sparse) Zero() float64 { return s.zero }

// LogMarginal returns ln M(n) in nats, −Inf when M(n) = 0 (at z = 1 when
// two or more symbols have non-zero counts; at z = 0 never). It fails if
// len(n) ≠ A, a count is negative or the total exceeds MaxTotal.
func (s *Sparse) LogMarginal(n []int32) (float64, error) {
	tot, err := checkCounts(n, s.a)
	if err != nil {
		return 0, err
	}
	if tot > MaxTotal {
		return 0, fmt.Errorf("leafprior: total count %d exceeds MaxTotal = %d, the largest at which the sparse marginal's accuracy is tested", tot, MaxTotal)
	}
	if tot == 0 {
		return 0, nil
	}
	var buf [MaxSparseAlphabet]int32
	c := sortedSupport(buf[:0], n)
	lk, err := s.logK(c)
	if err != nil || math.IsInf(lk, -1) {
		return lk, err
	}
	return logMultinomial(n) + lk, nil
}

// Predictive writes out[a] = M(n+e_a)/M(n), computed as (n_a+1)·K(n+e_a)
// normalised over a (see Sparse), so out sums to 1 to rounding. With
// M(n) = 0 it sets out to zeros and returns ErrZeroMarginal. It fails if
// len(n) or len(out) is not A, a count is negative or the total is at
// least MaxTotal.
//
// With a warm memo it costs one map lookup per distinct value among the
// counts n_a (at most A).
func (s *Sparse) Predictive(n []int32, out []float64) error {
	tot, err := checkCounts(n, s.a)
	if err != nil {
		return err
	}
	if err := checkOut(out, s.a); err != nil {
		return err
	}
	if tot >= MaxTotal {
		return fmt.Errorf("leafprior: total count %d is not below MaxTotal = %d, the largest at which the sparse marginal's accuracy is tested", tot, MaxTotal)
	}
	var buf, next [MaxSparseAlphabet + 1]int32
	c := sortedSupport(buf[:0], n)
	// lr[i] = ln((v_i+1)·K(n+e_a)) for the distinct count values v_i.
	var vals [MaxSparseAlphabet]int32
	var lr [MaxSparseAlphabet]float64
	nv := 0
	top := math.Inf(-1)
	for _, v := range n {
		seen := false
		for i := range nv {
			if vals[i] == v {
				seen = true
				break
			}
		}
		if seen {
			continue
		}
		var cn []int32
		if v == 0 {
			next[0] = 1
			cn = append(next[:1], c...)
		} else {
			cn = append(next[:0], c...)
			i := len(cn) - 1
			for cn[i] != v {
				i--
			}
			cn[i]++ // the last v becomes v+1; cn stays sorted
		}
		lk, err := s.logK(cn)
		if err != nil {
			return err
		}
		vals[nv], lr[nv] = v, math.Log(float64(v)+1)+lk
		top = max(top, lr[nv])
		nv++
	}
	if math.IsInf(top, -1) {
		clear(out)
		return ErrZeroMarginal
	}
	sum := 0.0
	for a, v := range n {
		i := 0
		for vals[i] != v {
			i++
		}
		out[a] = math.Exp(lr[i] - top)
		sum += out[a]
	}
	for a := range out {
		out[a] /= sum
	}
	return nil
}

// sortedSupport appends the non-zero counts of n to dst in ascending order.
func sortedSupport(dst []int32, n []int32) []int32 {
	for _, v := range n {
		if v == 0 {
			continue
		}
		dst = append(dst, v)
		for i := len(dst) - 1; i > 0 && dst[i-1] > dst[i]; i-- {
			dst[i-1], dst[i] = dst[i], dst[i-1]
		}
	}
	return dst
}

// logK returns ln K for the sorted non-zero counts c (1 ≤ len(c) ≤ A):
// ln Σ_{j=0}^{A−k} C(A−k, j) P_{k+j} J(c, 0^j), from the memo when present.
func (s *Sparse) logK(c []int32) (float64, error) {
	var kb [MaxSparseAlphabet * binary.MaxVarintLen32]byte
	key := kb[:0]
	for _, v := range c {
		key = binary.AppendUvarint(key, uint64(v))
	}
	if v, ok := s.memo.get(key); ok {
		return v, nil
	}
	k := len(c)
	top := math.Inf(-1)
	var terms [MaxSparseAlphabet + 1]float64
	for j := 0; j <= s.a-k; j++ {
		terms[j] = math.Inf(-1)
		lw := s.logW[k+j]
		if math.IsInf(lw, -1) {
			continue
		}
		var lj float64
		if k+j == 1 {
			lj = -math.Log(float64(c[0])) // J(c) = 1/c for one symbol
		} else {
			var err error
			if lj, err = logJ(c, j); err != nil {
				return 0, fmt.Errorf("%w for counts %v and %d zeros", err, c, j)
			}
		}
		terms[j] = s.logBin[s.a-k][j] + lw + lj
		top = max(top, terms[j])
	}
	lk := top
	if !math.IsInf(top, -1) {
		sum := 0.0
		for j := 0; j <= s.a-k; j++ {
			sum += math.Exp(terms[j] - top)
		}
		lk += math.Log(sum)
	}
	s.memo.put(key, lk)
	return lk, nil
}

// MemoLen returns the number of memoised values.
func (s *Sparse) MemoLen() int {
	n := 0
	for i := range s.memo.shards {
		sh := &s.memo.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// ResetMemo empties the memo.
func (s *Sparse) ResetMemo() {
	for i := range s.memo.shards {
		sh := &s.memo.shards[i]
		sh.mu.Lock()
		sh.m = nil
		sh.mu.Unlock()
	}
}

// memo maps keys (the uvarint-encoded sorted non-zero counts) to ln K, in
// memoShards independently locked maps chosen by the FNV-1a hash of the key.
type memo struct {
	shards [memoShards]memoShard
	limit  int // entries per shard; 0 means MemoEntries/memoShards
}

type memoShard struct {
	mu sync.RWMutex
	m  map[string]float64
}

func (m *memo) shard(key []byte) *memoShard {
	h := uint32(2166136261)
	for _, b := range key {
		h = (h ^ uint32(b)) * 16777619
	}
	return &m.shards[h%memoShards]
}

func (m *memo) get(key []byte) (float64, bool) {
	sh := m.shard(key)
	sh.mu.RLock()
	v, ok := sh.m[string(key)]
	sh.mu.RUnlock()
	return v, ok
}

func (m *memo) put(key []byte, v float64) {
	sh := m.shard(key)
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = make(map[string]float64)
	}
	limit := m.limit
	if limit == 0 {
		limit = MemoEntries / memoShards
	}
	if len(sh.m) >= limit {
		clear(sh.m)
	}
	sh.m[string(key)] = v
	sh.mu.Unlock()
}
