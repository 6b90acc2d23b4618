// Package leafprior computes the exact marginal likelihoods of the leaf
// distributions that package source draws, for use as the leaf estimator of
// an exact Bayes (CTW-style) predictor.
//
// A leaf of a context tree emits symbols i.i.d. from its distribution p,
// which the prior draws from a leaf generator (source.LeafKind). If the
// leaf has seen symbol a exactly n_a times, the probability of that
// sequence, averaged over the generator, is the marginal likelihood
//
//	M(n) = E[∏_a p_a^{n_a}],
//
// and the Bayes predictive probability of the next symbol is the ratio
// M(n+e_a)/M(n), where e_a is the unit vector of symbol a. Both depend on
// the counts only, not on their order.
//
// Dirichlet is the closed form for Dir(α) leaves; Sparse is the marginal of
// source's Sparse generator, computed by one-dimensional quadrature with a
// stated and tested accuracy. Both satisfy Leaf. FromPrior builds the
// estimator for a source.Prior's leaf settings; a Mixed prior draws one
// generator per tree, so its Bayes predictor mixes whole trees (see
// FromPrior), not leaves.
//
// Logarithms are natural: marginals are returned as ln M in nats.
package leafprior

import (
	"errors"
	"fmt"

	"github.com/vomc/vomc/source"
)

// Leaf is the marginal likelihood of a leaf generator over an alphabet of
// AlphabetSize() symbols. Implementations are safe for concurrent use.
type Leaf interface {
	// AlphabetSize returns A, the length of every count vector.
	AlphabetSize() int
	// LogMarginal returns ln M(n) in nats for the count vector n
	// (len(n) = A, n_a ≥ 0); −Inf when M(n) = 0.
	LogMarginal(n []int32) (float64, error)
	// Predictive writes out[a] = M(n+e_a)/M(n) (len(out) = A), which sums
	// to 1. When M(n) = 0 it sets out to zeros and returns an error for
	// which errors.Is(err, ErrZeroMarginal) holds.
	Predictive(n []int32, out []float64) error
}

// ErrZeroMarginal is returned by Predictive when the counts have
// marginal likelihood 0 under the generator, so that no predictive
// distribution exists; out is then set to all zeros. For a Sparse leaf with
// zero = 1 this happens as soon as two distinct symbols were seen.
var ErrZeroMarginal = errors.New("leafprior: the counts have marginal likelihood 0")

var (
	_ Leaf = (*Dirichlet)(nil)
	_ Leaf = (*Sparse)(nil)
)

// FromPrior returns the leaf estimator of the generator kind (source.Dirichlet
// or source.Sparse) under the prior p: NewDirichlet(p.AlphaVector()) or
// NewSparse(p.A, zero) with zero = p.SparseZero, or source.DefaultSparseZero
// when that is 0 (source's convention; so zero = 0 itself cannot be
// expressed by a Prior, use NewSparse). The prior must be valid and its
// leaves must include kind: Dirichlet or Mixed for kind Dirichlet, Sparse
// or Mixed for kind Sparse.
//
// A Mixed prior gives all leaves of one tree the same generator, drawn per
// tree (Sparse with probability SparseWeight(p)). Its Bayes predictor is
// therefore a mixture of two whole-tree predictors, one with each leaf
// estimator, weighted by the prior weights 1−f and f times each one's
// marginal likelihood of the sequence so far; a leaf-level mixture of the
// two estimators would be a different (wrong) prior. FromPrior refuses kind
// Mixed for this reason.
func FromPrior(p source.Prior, kind source.LeafKind) (Leaf, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch kind {
	case source.Dirichlet:
		if p.Leaves == source.Sparse {
			return nil, errors.New("leafprior: the prior has sparse leaves, it has no Dirichlet leaf estimator")
		}
		return NewDirichlet(p.AlphaVector())
	case source.Sparse:
		if p.Leaves == source.Dirichlet {
			return nil, errors.New("leafprior: the prior has Dirichlet leaves, it has no sparse leaf estimator")
		}
		z := p.SparseZero
		if z == 0 {
			z = source.DefaultSparseZero
		}
		return NewSparse(p.A, z)
	case source.Mixed:
		return nil, errors.New("leafprior: mixed leaves are drawn per tree, not per leaf: build the Dirichlet and the Sparse estimator and mix the two tree predictors with SparseWeight")
	}
	return nil, fmt.Errorf("leafprior: unknown leaf kind %d", int(kind))
}

// SparseWeight returns the prior probability that a tree drawn from p has
// Sparse leaves: 0 for Dirichlet leaves, 1 for Sparse leaves, and for Mixed
// leaves p.SparseFrac, or source.DefaultSparseFrac when that is 0.
func SparseWeight(p source.Prior) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	switch p.Leaves {
	case source.Dirichlet:
		return 0, nil
	case source.Sparse:
		return 1, nil
	}
	if p.SparseFrac == 0 {
		return source.DefaultSparseFrac, nil
	}
	return p.SparseFrac, nil
}

// checkCounts validates a count vector of length a and returns its total.
func checkCounts(n []int32, a int) (int64, error) {
	if len(n) != a {
		return 0, fmt.Errorf("leafprior: %d counts for an alphabet of %d symbols", len(n), a)
	}
	var tot int64
	for i, v := range n {
		if v < 0 {
			return 0, fmt.Errorf("leafprior: count n[%d] = %d is negative", i, v)
		}
		tot += int64(v)
	}
	return tot, nil
}

// checkOut validates the length of a predictive output vector.
func checkOut(out []float64, a int) error {
	if len(out) != a {
		return fmt.Errorf("leafprior: predictive output has length %d, want the alphabet size %d", len(out), a)
	}
	return nil
}
