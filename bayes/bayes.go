// Package bayes is the exact Bayes predictor of a context-tree prior: the
// posterior predictive distribution P(x_{n+1} | x_1^n) of the source.Prior
// that generated a data set, the yardstick against which every other
// method's excess loss is measured.
//
// CTW(D) (package ctw) is this predictor only when every tree of the prior
// has maximum depth D and Dirichlet leaves whose α CTW uses. The paper's
// training distribution mixes maximum depths (D drawn uniformly from 1..5)
// and two leaf generators (Dirichlet, and the "sparse" generator of
// source.Sparse). Its Bayes predictor is the posterior mixture over the
// prior's components c = (D, leaf kind),
//
//	P(x_{n+1} = a | x_1^n) = Σ_c w_c(n) P_c(a | x_1^n),
//	w_c(n) ∝ π(c) · P_c(x_1^n),
//
// where π(c) is the prior probability of the component (the share of D
// among Prior.Depths times, for mixed leaves, SparseFrac or 1 − SparseFrac),
// and P_c is the CTW recursion for depth D with the exact marginal of that
// leaf kind: the Dirichlet marginal (ctw itself) or the sparse generator's
// (leafprior.Sparse, in the recursion of tree.go). The weights are kept in
// logs (the components' log marginal likelihoods), so nothing underflows
// over long windows. All losses are natural-log losses (nats).
//
// The predictor is exact up to floating-point rounding and, for sparse
// leaves, the stated accuracy of leafprior's marginals; where that cannot be
// had (an alphabet or a count beyond leafprior's tested range) New or the
// evaluation fails with an error, never with a silent approximation.
package bayes

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/leafprior"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// Predictor is the exact Bayes predictor of one prior. It is immutable and
// safe for concurrent use.
type Predictor struct {
	prior source.Prior
	comps []component
	name  string
}

// component is one (D, leaf kind) of the prior with its log prior weight.
type component struct {
	D       int
	sparse  bool
	lnPrior float64
	ctw     *ctw.Predictor // Dirichlet leaves
	tree    *tree          // sparse leaves
}

// New returns the Bayes predictor of prior p (validated). Dirichlet leaves
// take ctw's own recursion, sparse leaves the generic one with
// leafprior.Sparse's exact marginal; New fails where that marginal is not
// available to its stated accuracy (see leafprior.NewSparse).
func New(p source.Prior) (*Predictor, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("bayes: %w", err)
	}
	share := map[int]float64{}
	for _, D := range p.Depths {
		share[D] += 1 / float64(len(p.Depths))
	}
	depths := make([]int, 0, len(share))
	for D := range share {
		depths = append(depths, D)
	}
	slices.Sort(depths)
	kinds := map[bool]float64{}
	switch p.Leaves {
	case source.Dirichlet:
		kinds[false] = 1
	case source.Sparse:
		kinds[true] = 1
	case source.Mixed:
		f := p.SparseFrac
		if f == 0 {
			f = source.DefaultSparseFrac
		}
		kinds[false], kinds[true] = 1-f, f
	}
	var sparse *leafprior.Sparse
	if kinds[true] > 0 {
		z := p.SparseZero
		if z == 0 {
			z = source.DefaultSparseZero
		}
		var err error
		if sparse, err = sharedSparse(p.A, z); err != nil {
			return nil, fmt.Errorf("bayes: the exact Bayes predictor of sparse leaves is not available: %w", err)
		}
	}
	pr := &Predictor{prior: p}
	for _, D := range depths {
		for _, isSparse := range []bool{false, true} {
			w, ok := kinds[isSparse]
			if !ok || w == 0 {
				continue
			}
			c := component{D: D, sparse: isSparse, lnPrior: math.Log(share[D]) + math.Log(w)}
			if isSparse {
				c.tree = &tree{A: p.A, D: D, lnLam: math.Log(p.Lambda), ln1Lam: math.Log1p(-p.Lambda), leaf: sparse}
			} else {
				var err error
				c.ctw, err = ctw.New(ctw.Config{A: p.A, D: D, Lambda: p.Lambda, AlphaVec: p.AlphaVector(), Init: ctw.Pad})
				if err != nil {
					return nil, fmt.Errorf("bayes: %w", err)
				}
			}
			pr.comps = append(pr.comps, c)
		}
	}
	pr.name = name(p)
	return pr, nil
}

// sparseLeaves holds one leafprior.Sparse per (A, zero) for the process,
// so that every Predictor of one prior (reproduce builds one per
// evaluation stage) shares the memo of the marginals, the cost of sparse
// leaves: the values are functions of the counts alone, so sharing changes
// no number.
var sparseLeaves sync.Map // sparseKey → *leafprior.Sparse

type sparseKey struct {
	A    int
	zero float64
}

func sharedSparse(A int, zero float64) (*leafprior.Sparse, error) {
	if v, ok := sparseLeaves.Load(sparseKey{A, zero}); ok {
		return v.(*leafprior.Sparse), nil
	}
	sp, err := leafprior.NewSparse(A, zero)
	if err != nil {
		return nil, err
	}
	v, _ := sparseLeaves.LoadOrStore(sparseKey{A, zero}, sp)
	return v.(*leafprior.Sparse), nil
}

// name is e.g. "Bayes(D=1..5,λ=0.15,α=0.5)", with the leaf kind appended
// when it is not Dirichlet ("sparse z=0.5", "mixed 0.5 sparse z=0.5").
func name(p source.Prior) string {
	ds := slices.Clone(p.Depths)
	slices.Sort(ds)
	ds = slices.Compact(ds)
	d := source.DepthList(ds)
	if len(ds) > 1 && ds[len(ds)-1]-ds[0] == len(ds)-1 {
		d = fmt.Sprintf("%d..%d", ds[0], ds[len(ds)-1])
	}
	parts := []string{"D=" + d, "λ=" + strconv.FormatFloat(p.Lambda, 'g', -1, 64)}
	if p.Leaves != source.Sparse {
		a := p.AlphaVector()
		sym := true
		for _, v := range a {
			sym = sym && v == a[0]
		}
		if sym {
			parts = append(parts, "α="+strconv.FormatFloat(a[0], 'g', -1, 64))
		} else {
			parts = append(parts, fmt.Sprintf("α=%v", a))
		}
	}
	z := p.SparseZero
	if z == 0 {
		z = source.DefaultSparseZero
	}
	switch p.Leaves {
	case source.Sparse:
		parts = append(parts, "sparse z="+strconv.FormatFloat(z, 'g', -1, 64))
	case source.Mixed:
		f := p.SparseFrac
		if f == 0 {
			f = source.DefaultSparseFrac
		}
		parts = append(parts, "mixed "+strconv.FormatFloat(f, 'g', -1, 64)+" sparse z="+strconv.FormatFloat(z, 'g', -1, 64))
	}
	return "Bayes(" + strings.Join(parts, ",") + ")"
}

// Name is e.g. "Bayes(D=1..5,λ=0.15,α=0.5)".
func (pr *Predictor) Name() string { return pr.name }

// AlphabetSize is A.
func (pr *Predictor) AlphabetSize() int { return pr.prior.A }

// Prior returns the prior the predictor is the Bayes predictor of.
func (pr *Predictor) Prior() source.Prior { return pr.prior }

// Components returns the number of mixture components (D, leaf kind).
func (pr *Predictor) Components() int { return len(pr.comps) }

// NewState returns a fresh state (empty history, initial context 0^D).
func (pr *Predictor) NewState() predict.State { return pr.NewBayesState() }

// NewBayesState returns a fresh State with the posterior read-outs.
func (pr *Predictor) NewBayesState() *State {
	st := &State{pr: pr, ctw: make([]ctw.State, len(pr.comps)), tree: make([]*treeState, len(pr.comps)),
		w: make([]float64, len(pr.comps)), scratch: make([]float64, pr.prior.A), om: make([]float64, pr.MaxDepth()+1)}
	for i, c := range pr.comps {
		if c.ctw != nil {
			st.ctw[i] = c.ctw.NewCTWState()
		} else {
			st.tree[i] = c.tree.newState()
		}
	}
	return st
}

// State is the Bayes predictor's state on one sequence.
type State struct {
	pr      *Predictor
	ctw     []ctw.State
	tree    []*treeState
	w       []float64
	scratch []float64
	om      []float64 // one component's ω (LeafPosterior)
}

// logML returns component i's ln P_c(x_1^n).
func (st *State) logML(i int) float64 {
	if st.ctw[i] != nil {
		return st.ctw[i].LogML()
	}
	return st.tree[i].logML()
}

// Posterior writes the posterior probabilities w_c(n) of the components
// (in the order of Component) into w (length Components()).
func (st *State) Posterior(w []float64) {
	m := math.Inf(-1)
	for i, c := range st.pr.comps {
		w[i] = c.lnPrior + st.logML(i)
		m = max(m, w[i])
	}
	sum := 0.0
	for i := range w {
		if math.IsInf(m, -1) {
			w[i] = 1
		} else {
			w[i] = math.Exp(w[i] - m)
		}
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
}

// Component describes component i: its maximum depth D and whether its
// leaves are sparse.
func (pr *Predictor) Component(i int) (D int, sparse bool) {
	return pr.comps[i].D, pr.comps[i].sparse
}

// MaxDepth is the prior's largest depth D_max, LeafPosterior's last index.
func (pr *Predictor) MaxDepth() int { return pr.comps[len(pr.comps)-1].D }

// LeafPosterior writes into omega (length MaxDepth()+1) the posterior
// probability, given x_1^n, that the suffix s_l of length l of the current
// context (the dummy context 0^D before x_1) is a leaf of the source tree:
//
//	ω_l = Σ_c w_c(n) · ω^(c)_l,   l = 0..D_max,
//
// with w_c(n) the components' posterior (Posterior) and ω^(c)_l the same
// probability under component c's prior π_CTW(D_c, λ): for Dirichlet
// leaves CTW's ω_{n,l} (ctw.State.Weights, the paper's Theorem 2), for
// sparse leaves the same product ω_l = β_l Π_{j<l} (1 − β_j) of the
// recursion's posterior leaf probabilities β_l (β_{D_c} = 1), and 0 for
// l > D_c (the tree has no deeper node). The entries sum to 1. Under a prior
// of one depth D with Dirichlet leaves it is CTW(D)'s ω; under mixed depths
// it is not CTW(D_max)'s.
func (st *State) LeafPosterior(omega []float64) {
	st.Posterior(st.w)
	clear(omega)
	for i, c := range st.pr.comps {
		if st.w[i] == 0 {
			continue
		}
		om := st.om[:c.D+1]
		if st.ctw[i] != nil {
			st.ctw[i].Weights(om)
		} else {
			st.tree[i].weights(om)
		}
		for l, v := range om {
			omega[l] += st.w[i] * v
		}
	}
}

// LogML is ln P(x_1^n) in nats under the prior: ln Σ_c π(c) P_c(x_1^n).
func (st *State) LogML() float64 {
	m := math.Inf(-1)
	for i, c := range st.pr.comps {
		m = max(m, c.lnPrior+st.logML(i))
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for i, c := range st.pr.comps {
		s += math.Exp(c.lnPrior + st.logML(i) - m)
	}
	return m + math.Log(s)
}

// Err reports the first error of a sparse component's leaf marginal (a
// count beyond leafprior's tested range); the predictions made after it are
// not exact.
func (st *State) Err() error {
	for _, t := range st.tree {
		if t != nil && t.err != nil {
			return fmt.Errorf("bayes: %w", t.err)
		}
	}
	return nil
}

// Predict writes the posterior predictive Σ_c w_c P_c(· | x_1^n) into p.
func (st *State) Predict(p []float64) {
	st.Posterior(st.w)
	clear(p)
	for i := range st.pr.comps {
		if st.w[i] == 0 {
			continue
		}
		if st.ctw[i] != nil {
			st.ctw[i].Predict(st.scratch)
		} else {
			st.tree[i].predict(st.scratch)
		}
		for a, v := range st.scratch {
			p[a] += st.w[i] * v
		}
	}
}

// Observe appends a to every component's history.
func (st *State) Observe(a byte) {
	for i := range st.pr.comps {
		if st.ctw[i] != nil {
			st.ctw[i].Observe(a)
		} else {
			st.tree[i].observe(a)
		}
	}
}
