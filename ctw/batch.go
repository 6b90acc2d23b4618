package ctw

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/internal/logexp"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// Counts is the context tree of a whole sequence: the counts n_s(a) of every
// context s of length ≤ D that occurred, from which the weighted and
// maximum-a-posteriori recursions are computed.
type Counts struct {
	p    *params
	s    *store
	n    int       // symbols counted
	kids *kidIndex // children lists of a hash-map trie, built on demand
}

// CountSequence counts x under cfg's initial-context convention (Pad: the
// dummy context 0^D precedes x; Condition: x's first D symbols are only
// context). It is the counts-only pass that every CTW computation needs.
// Shorter has no closed-form batch recursion and is refused.
func CountSequence(cfg Config, x []byte) (*Counts, error) {
	p, err := cfg.params()
	if err != nil {
		return nil, err
	}
	if p.init == Shorter {
		return nil, fmt.Errorf("ctw: the batch recursion needs the pad or condition convention (use a State for shorter)")
	}
	if err := predict.Check(x, p.A); err != nil {
		return nil, err
	}
	if err := CheckMemory(cfg, int64(len(x))); err != nil {
		return nil, err
	}
	s := newStore(p.A, p.D, p.form, [3]float64{}, math.MaxInt64)
	start := countStart(p, len(x))
	if !s.dense {
		// A trie is sized by a first pass that builds its shape only (the
		// child links), so that the per-node arrays are allocated once, at
		// the exact node count: reserving the worst case (D+1)·n can touch
		// gigabytes when the allocator zeroes it, and growing the arrays
		// holds two copies at once.
		s.shapeOnly = true
		ids := make([]int32, p.D+1)
		h := newHistory(p.D, s.b)
		for i, a := range x {
			if i >= start && s.path(h.ctx, h.key, p.D, ids) < p.D {
				return nil, fmt.Errorf("ctw: the context tree of %d symbols at D=%d exceeds %d nodes", len(x), p.D, s.maxNodes)
			}
			h.push(a)
		}
		s.allocNodes()
	}
	c := &Counts{p: p, s: s}
	h := newHistory(p.D, s.b)
	for _, a := range x[:start] {
		h.push(a)
	}
	A, D := p.A, p.D
	if s.dense {
		key := h.key
		off, mask := s.off, s.mask
		cnt, tot := s.cnt, s.tot
		for _, a := range x[start:] {
			for l := 0; l <= D; l++ {
				id := int(off[l]) + int(key&mask[l])
				cnt[id*A+int(a)]++
				tot[id]++
			}
			key = (key<<s.b | uint64(a)) & h.mask
		}
	} else {
		ids := make([]int32, D+1)
		for _, a := range x[start:] {
			s.path(h.ctx, h.key, D, ids)
			for l := 0; l <= D; l++ {
				id := int(ids[l])
				s.cnt[id*A+int(a)]++
				s.tot[id]++
			}
			h.push(a)
		}
	}
	c.n = len(x) - start
	return c, nil
}

// countStart is the index of the first symbol of a sequence of length n
// that is counted: 0 under the pad convention, D (the symbols that are
// only context) under condition.
func countStart(p *params, n int) int {
	if p.init == Condition {
		return min(p.D, n)
	}
	return 0
}

// N is the number of symbols counted.
func (c *Counts) N() int { return c.n }

// Nodes is the number of distinct contexts (nodes) with at least one count.
func (c *Counts) Nodes() int {
	k := 0
	for _, t := range c.s.tot {
		if t > 0 {
			k++
		}
	}
	return k
}

// logPe is ℓ^e_s = ln p^e_s = ln Γ(Σα) − ln Γ(N_s+Σα) + Σ_a [ln Γ(n_s(a)+α_a) −
// ln Γ(α_a)], the Dirichlet-multinomial marginal likelihood (Section 4.2).
func (c *Counts) logPe(id int32) float64 {
	A := c.p.A
	tot := c.s.tot[id]
	if tot == 0 {
		return 0
	}
	v := lgamma(c.p.sumAlpha) - lgamma(float64(tot)+c.p.sumAlpha)
	for a := 0; a < A; a++ {
		n := c.s.cnt[int(id)*A+a]
		if n > 0 {
			v += lgamma(float64(n)+c.p.alpha[a]) - lgamma(c.p.alpha[a])
		}
	}
	return v
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// emptyMax returns ln m_h for h = 0..D: the largest prior weight of a subtree
// of height h that saw no data, m_0 = 1, m_h = max(λ, (1−λ) m_{h−1}^A).
func (c *Counts) emptyMax() []float64 {
	m := make([]float64, c.p.D+1)
	for h := 1; h <= c.p.D; h++ {
		m[h] = math.Max(c.p.lnLam, c.p.ln1mLam+float64(c.p.A)*m[h-1])
	}
	return m
}

// kidIndex lists, for a trie whose children live in a hash map (A >
// smallA), every node's children sorted by symbol, so that the recursions
// visit the contexts seen instead of probing all A symbols of every node.
type kidIndex struct {
	start []int32 // node → first entry; entries start[id]..start[id+1]
	ch    []int32 // child node
	sym   []uint8 // its symbol q
}

// kidsOf returns the kid index (nil for layouts with direct child tables).
func (c *Counts) kidsOf() *kidIndex {
	if c.kids != nil || c.s.childMap == nil {
		return c.kids
	}
	n := c.s.nodes
	k := &kidIndex{start: make([]int32, n+1), ch: make([]int32, len(c.s.childMap)), sym: make([]uint8, len(c.s.childMap))}
	for key := range c.s.childMap {
		k.start[key>>8+1]++
	}
	for i := 1; i <= n; i++ {
		k.start[i] += k.start[i-1]
	}
	fill := append([]int32(nil), k.start[:n]...)
	for key, ch := range c.s.childMap {
		id := key >> 8
		k.ch[fill[id]] = ch
		k.sym[fill[id]] = uint8(key)
		fill[id]++
	}
	for id := 0; id < n; id++ {
		a, b := k.start[id], k.start[id+1]
		// Insertion sort by symbol: lists are short on average.
		for i := a + 1; i < b; i++ {
			for j := i; j > a && k.sym[j] < k.sym[j-1]; j-- {
				k.sym[j], k.sym[j-1] = k.sym[j-1], k.sym[j]
				k.ch[j], k.ch[j-1] = k.ch[j-1], k.ch[j]
			}
		}
	}
	c.kids = k
	return k
}

// forKids calls f for every symbol q = 0..A−1 in order with the child qs of
// node id at depth l < D if it was counted (ok), else with ok false.
func (c *Counts) forKids(id int32, l int, f func(q int, ch int32, ok bool)) {
	A := c.p.A
	if k := c.kidsOf(); k != nil {
		i, end := k.start[id], k.start[id+1]
		for q := 0; q < A; q++ {
			for i < end && int(k.sym[i]) < q {
				i++
			}
			if i < end && int(k.sym[i]) == q && c.s.tot[k.ch[i]] > 0 {
				f(q, k.ch[i], true)
			} else {
				f(q, 0, false)
			}
		}
		return
	}
	for q := 0; q < A; q++ {
		ch, ok := c.s.childOf(id, l, q)
		f(q, ch, ok)
	}
}

// weigh returns ℓ^w_s and ℓ^m_s of node id at depth l: p^w_s = λp^e_s + (1−λ)
// Π_q p^w_{qs} (p^e_s at depth D), and the max-product p^m_s = max(λp^e_s,
// (1−λ) Π_q p^m_{qs}). With lm non-nil it records ℓ^m of every node it
// visits in lm[id].
func (c *Counts) weigh(id int32, l int, em []float64, lm []float64) (lw, lmax float64) {
	le := c.logPe(id)
	if l == c.p.D {
		if lm != nil {
			lm[id] = le
		}
		return le, le
	}
	sw, sm := 0.0, 0.0
	e := em[c.p.D-l-1]
	if k := c.kidsOf(); k != nil {
		// Same order of additions as the loop below (q = 0..A−1), so the
		// sums are bit-identical; only the seen children are visited.
		q := 0
		for i := k.start[id]; i < k.start[id+1]; i++ {
			ch := k.ch[i]
			if c.s.tot[ch] == 0 {
				continue
			}
			for ; q < int(k.sym[i]); q++ {
				sm += e
			}
			w, m := c.weigh(ch, l+1, em, lm)
			sw += w
			sm += m
			q++
		}
		for ; q < c.p.A; q++ {
			sm += e
		}
	} else {
		for q := 0; q < c.p.A; q++ {
			if ch, ok := c.s.childOf(id, l, q); ok {
				w, m := c.weigh(ch, l+1, em, lm)
				sw += w
				sm += m
			} else {
				sm += e
			}
		}
	}
	lw, lmax = logexp.Add(c.p.lnLam+le, c.p.ln1mLam+sw), math.Max(c.p.lnLam+le, c.p.ln1mLam+sm)
	if lm != nil {
		lm[id] = lmax
	}
	return lw, lmax
}

// LogML returns ln p^w_{()}, the log marginal likelihood (nats) of the
// counted sequence under π_CTW (Theorem 3.1 of Kontoyiannis et al. 2022).
func (c *Counts) LogML() float64 {
	lw, _ := c.weigh(0, 0, c.emptyMax(), nil)
	return lw
}

// LogMarginalLikelihood returns ln P_{π_CTW}(x) in nats: one counting pass
// and the CTW recursion over the contexts that occurred.
func LogMarginalLikelihood(cfg Config, x []byte) (float64, error) {
	if cfg.Init == Shorter {
		pr, err := New(cfg)
		if err != nil {
			return 0, err
		}
		st := pr.NewCTWState()
		if err := predict.Check(x, cfg.A); err != nil {
			return 0, err
		}
		for _, a := range x {
			st.Observe(a)
		}
		return st.LogML(), nil
	}
	c, err := CountSequence(cfg, x)
	if err != nil {
		return 0, err
	}
	return c.LogML(), nil
}

// MAP is the maximum a posteriori context tree of a sequence.
type MAP struct {
	// Tree has the MAP suffix set; each leaf's distribution is its
	// Dirichlet posterior mean (n_s(a)+α_a)/(N_s+Σα).
	Tree *source.Tree
	// LogPosterior is ln π(T_MAP | x) = ln p^m_{()} − ln p^w_{()} (nats).
	LogPosterior float64
}

// MAPTree returns the MAP tree under π_CTW given the counts, by the
// max-product version of the CTW recursion (the BCT algorithm of
// Kontoyiannis et al. 2022): a node is a leaf of the MAP tree when
// λp^e_s ≥ (1−λ)Π_q p^m_{qs}. The work is proportional to the contexts
// seen (times A for the MAP tree's own internal nodes, which have all A
// children): ℓ^m of every seen node is computed once, then the tree is
// built along the MAP decisions only.
func (c *Counts) MAPTree() *MAP {
	em := c.emptyMax()
	lm := make([]float64, c.s.nodes)
	lw, lroot := c.weigh(0, 0, em, lm)
	root := c.mapBuild(0, 0, true, em, lm)
	return &MAP{Tree: &source.Tree{A: c.p.A, D: c.p.D, Root: root}, LogPosterior: lroot - lw}
}

// MAPNodes returns the number of nodes of the MAP tree (what MAPTree
// allocates: each leaf holds A probabilities) without building it.
func (c *Counts) MAPNodes() int64 {
	em := c.emptyMax()
	lm := make([]float64, c.s.nodes)
	c.weigh(0, 0, em, lm)
	return c.mapCount(0, 0, true, em, lm)
}

// MAPMemoryEstimate is the memory of a MAP tree of c with nodes nodes
// (MAPNodes): per node its struct and its A children or A probabilities.
func MAPMemoryEstimate(c Config, nodes int64) int64 { return nodes * int64(64+8*c.A) }

// mapSplit reports whether node id (seen or not) at depth l is internal in
// the MAP tree.
func (c *Counts) mapSplit(id int32, l int, seen bool, em, lm []float64) bool {
	if l == c.p.D {
		return false
	}
	if !seen {
		return !(c.p.lnLam >= c.p.ln1mLam+float64(c.p.A)*em[c.p.D-l-1])
	}
	le := c.logPe(id)
	sm := 0.0
	c.forKids(id, l, func(q int, ch int32, ok bool) {
		if ok {
			sm += lm[ch]
		} else {
			sm += em[c.p.D-l-1]
		}
	})
	return !(c.p.lnLam+le >= c.p.ln1mLam+sm)
}

func (c *Counts) mapCount(id int32, l int, seen bool, em, lm []float64) int64 {
	if !c.mapSplit(id, l, seen, em, lm) {
		return 1
	}
	n := int64(1)
	c.forKids(id, l, func(q int, ch int32, ok bool) {
		n += c.mapCount(ch, l+1, seen && ok, em, lm)
	})
	return n
}

func (c *Counts) leafOf(id int32, seen bool) *source.Node {
	A := c.p.A
	pr := make([]float64, A)
	tot := c.p.sumAlpha
	if seen {
		tot += float64(c.s.tot[id])
	}
	for a := 0; a < A; a++ {
		v := c.p.alpha[a]
		if seen {
			v += float64(c.s.cnt[int(id)*A+a])
		}
		pr[a] = v / tot
	}
	return &source.Node{P: pr}
}

// mapBuild builds the MAP subtree of node id (seen false: a context with no
// data) at depth l, given ℓ^m of the seen nodes in lm.
func (c *Counts) mapBuild(id int32, l int, seen bool, em, lm []float64) *source.Node {
	if !c.mapSplit(id, l, seen, em, lm) {
		return c.leafOf(id, seen)
	}
	kids := make([]*source.Node, c.p.A)
	if !seen {
		for q := range kids {
			kids[q] = c.mapBuild(0, l+1, false, em, lm)
		}
		return &source.Node{Children: kids}
	}
	c.forKids(id, l, func(q int, ch int32, ok bool) {
		kids[q] = c.mapBuild(ch, l+1, ok, em, lm)
	})
	return &source.Node{Children: kids}
}
