package bayes

import (
	"errors"
	"math"

	"github.com/vomc/vomc/internal/logexp"
	"github.com/vomc/vomc/leafprior"
)

// Leaf is a leaf prior's exact predictive: Predictive writes
// out[a] = M(n+e_a)/M(n), where M(n) = E[Π_a p_a^{n_a}] is the marginal
// probability of a leaf's symbol counts n under the prior of its
// distribution p (for Dir(α): (n_a+α_a)/(n+Σα)). leafprior.Dirichlet and
// leafprior.Sparse implement it.
type Leaf interface {
	Predictive(n []int32, out []float64) error
}

// tree is the CTW recursion of a single-depth prior π_CTW(D, λ) with an
// arbitrary leaf prior (Leaf) instead of Dirichlet leaves:
//
//	P_w(s) = P_e(s)                                  at depth D,
//	P_w(s) = λ P_e(s) + (1−λ) Π_q P_w(qs)            at depth < D,
//
// where P_e(s) = M(n_s) is the leaf prior's marginal of the counts seen in
// context s. P_w(root) is then the marginal likelihood of the sequence
// under the prior (the argument of Willems, Shtarkov and Tjalkens 1995 and
// of the paper's Theorem 2 only uses that the leaf distributions are
// independent a priori, not that they are Dirichlet). The initial context
// is D copies of symbol 0 (ctw.Pad, vomc's generator's convention).
type tree struct {
	A, D          int
	lnLam, ln1Lam float64
	leaf          Leaf
}

// treeState is one sequence's state of a tree component, in logs: per
// node ln P_e, ln P_w and Σ_q ln P_w(qs) over its children (absent
// children have P_w = 1).
type treeState struct {
	t     *tree
	cnt   []int32 // node·A + a
	child []int32 // node·A + q: the child for the older symbol q (0: none)
	lpe   []float64
	lpw   []float64
	lkids []float64
	hist  []byte  // hist[0] is the most recent symbol; D entries
	path  []int32 // path[l]: the node of the context suffix of length l
	pe    []float64
	ok    bool // path and pe are current
	err   error
	n     int
}

func (t *tree) newState() *treeState {
	st := &treeState{t: t, hist: make([]byte, t.D), path: make([]int32, t.D+1), pe: make([]float64, (t.D+1)*t.A)}
	st.newNode()
	return st
}

func (st *treeState) newNode() int32 {
	A := st.t.A
	id := int32(len(st.lpe))
	st.cnt = append(st.cnt, make([]int32, A)...)
	st.child = append(st.child, make([]int32, A)...)
	st.lpe = append(st.lpe, 0)
	st.lpw = append(st.lpw, 0)
	st.lkids = append(st.lkids, 0)
	return id
}

// prepare finds (creating) the nodes of the current context and their
// leaf predictives.
func (st *treeState) prepare() {
	if st.ok {
		return
	}
	A := st.t.A
	id := int32(0)
	st.path[0] = 0
	for l := 1; l <= st.t.D; l++ {
		q := int32(st.hist[l-1])
		c := st.child[id*int32(A)+q]
		if c == 0 {
			c = st.newNode()
			st.child[id*int32(A)+q] = c
		}
		id = c
		st.path[l] = id
	}
	for l := 0; l <= st.t.D; l++ {
		id := int(st.path[l])
		// A count vector the leaf prior rules out (M(n) = 0: leafprior
		// sets a zero predictive) is not an error: its node's weight is 0.
		if err := st.t.leaf.Predictive(st.cnt[id*A:id*A+A], st.pe[l*A:l*A+A]); err != nil && !errors.Is(err, leafprior.ErrZeroMarginal) && st.err == nil {
			st.err = err
		}
	}
	st.ok = true
}

// predict writes P(x_{n+1} = · | x_1^n) = P_w(root with ·)/P_w(root): from
// the deepest node up, r_D = P_e(·|s_D) and r_l = β_l P_e(·|s_l) +
// (1−β_l) r_{l+1} with β_l = λ P_e(s_l)/P_w(s_l), the posterior
// probability that s_l is a leaf given that the context reaches it.
func (st *treeState) predict(p []float64) {
	st.prepare()
	A, D := st.t.A, st.t.D
	copy(p, st.pe[D*A:D*A+A])
	for l := D - 1; l >= 0; l-- {
		id := st.path[l]
		b := math.Exp(st.t.lnLam + st.lpe[id] - st.lpw[id])
		if !(b >= 0) { // NaN: a context whose counts the prior rules out
			b = 0
		}
		b = min(b, 1)
		pe := st.pe[l*A : l*A+A]
		for a := range p {
			p[a] = b*pe[a] + (1-b)*p[a]
		}
	}
}

// weights writes ω_l = β_l Π_{j<l} (1 − β_j), l = 0..D (β_D = 1): the
// posterior probability that the context suffix of length l is a leaf,
// with β_l as in predict.
func (st *treeState) weights(omega []float64) {
	st.prepare()
	prod := 1.0
	for l := 0; l < st.t.D; l++ {
		id := st.path[l]
		b := math.Exp(st.t.lnLam + st.lpe[id] - st.lpw[id])
		if !(b >= 0) {
			b = 0
		}
		b = min(b, 1)
		omega[l] = prod * b
		prod *= 1 - b
	}
	omega[st.t.D] = prod
}

// observe appends a: the counts and the logs of P_e and P_w along the path
// are updated from the deepest node up.
func (st *treeState) observe(a byte) {
	st.prepare()
	A, D := st.t.A, st.t.D
	var oldChild, newChild float64
	for l := D; l >= 0; l-- {
		id := st.path[l]
		old := st.lpw[id]
		st.lpe[id] += math.Log(st.pe[l*A+int(a)])
		if l == D {
			st.lpw[id] = st.lpe[id]
		} else {
			if math.IsInf(oldChild, -1) || math.IsInf(newChild, -1) {
				// A child whose P_w is 0 (leaves the prior rules out):
				// the difference of logs is undefined, so sum afresh.
				st.lkids[id] = st.sumChildren(id)
			} else {
				st.lkids[id] += newChild - oldChild
			}
			st.lpw[id] = logexp.Add(st.t.lnLam+st.lpe[id], st.t.ln1Lam+st.lkids[id])
		}
		oldChild, newChild = old, st.lpw[id]
		st.cnt[int(id)*A+int(a)]++
	}
	if D > 0 {
		copy(st.hist[1:], st.hist[:D-1])
		st.hist[0] = a
	}
	st.n++
	st.ok = false
}

// sumChildren is Σ_q ln P_w(qs) over node id's children (absent ones
// count 0).
func (st *treeState) sumChildren(id int32) float64 {
	A := int32(st.t.A)
	s := 0.0
	for _, c := range st.child[id*A : id*A+A] {
		if c != 0 {
			s += st.lpw[c]
		}
	}
	return s
}

// logML is ln P_w(root): the log marginal likelihood in nats of the
// symbols observed.
func (st *treeState) logML() float64 { return st.lpw[0] }
