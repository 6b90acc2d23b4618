package ctw

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// Counts is the context tree of a whole sequence: the counts n_s(a) of every
// context s of length ≤ D that occurred, from which the weighted and
// maximum-a-posteriori recursions are computed.
type Counts struct {
	p *params
	s *store
	n int // symbols counted
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
	c := &Counts{p: p, s: s}
	start := 0
	h := newHistory(p.D, s.b)
	if p.init == Condition {
		start = min(p.D, len(x))
		for _, a := range x[:start] {
			h.push(a)
		}
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

// weigh returns ℓ^w_s and ℓ^m_s of node id at depth l: p^w_s = λp^e_s + (1−λ)
// Π_q p^w_{qs} (p^e_s at depth D), and the max-product p^m_s = max(λp^e_s,
// (1−λ) Π_q p^m_{qs}).
func (c *Counts) weigh(id int32, l int, em []float64) (lw, lm float64) {
	le := c.logPe(id)
	if l == c.p.D {
		return le, le
	}
	sw, sm := 0.0, 0.0
	for q := 0; q < c.p.A; q++ {
		if ch, ok := c.s.childOf(id, l, q); ok {
			w, m := c.weigh(ch, l+1, em)
			sw += w
			sm += m
		} else {
			sm += em[c.p.D-l-1]
		}
	}
	return logAddExp(c.p.lnLam+le, c.p.ln1mLam+sw), math.Max(c.p.lnLam+le, c.p.ln1mLam+sm)
}

// LogML returns ln p^w_{()}, the log marginal likelihood (nats) of the
// counted sequence under π_CTW (Theorem 3.1 of Kontoyiannis et al. 2022).
func (c *Counts) LogML() float64 {
	lw, _ := c.weigh(0, 0, c.emptyMax())
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
// λp^e_s ≥ (1−λ)Π_q p^m_{qs}.
func (c *Counts) MAPTree() *MAP {
	em := c.emptyMax()
	lw, _ := c.weigh(0, 0, em)
	lm, root := c.mapNode(0, 0, true, em)
	return &MAP{Tree: &source.Tree{A: c.p.A, D: c.p.D, Root: root}, LogPosterior: lm - lw}
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

// mapNode builds the MAP subtree of node id (seen false: a context with no
// data) at depth l and returns ln p^m with it.
func (c *Counts) mapNode(id int32, l int, seen bool, em []float64) (float64, *source.Node) {
	le := 0.0
	if seen {
		le = c.logPe(id)
	}
	if l == c.p.D {
		return le, c.leafOf(id, seen)
	}
	if !seen && c.p.lnLam >= c.p.ln1mLam+float64(c.p.A)*em[c.p.D-l-1] {
		return c.p.lnLam, c.leafOf(id, false)
	}
	kids := make([]*source.Node, c.p.A)
	sm := 0.0
	for q := 0; q < c.p.A; q++ {
		ch, ok := int32(0), false
		if seen {
			ch, ok = c.s.childOf(id, l, q)
		}
		m, n := c.mapNode(ch, l+1, ok, em)
		sm += m
		kids[q] = n
	}
	if c.p.lnLam+le >= c.p.ln1mLam+sm {
		return c.p.lnLam + le, c.leafOf(id, seen)
	}
	return c.p.ln1mLam + sm, &source.Node{Children: kids}
}
