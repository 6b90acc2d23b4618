package source

import (
	"errors"
	"fmt"
	"math"
)

// maxExactLeaves bounds A^D in LeafCountDistribution (its cost grows like
// the square of A^D).
const maxExactLeaves = 1 << 14

func checkLambda(lambda float64) error {
	if !(lambda > 0 && lambda < 1) {
		return fmt.Errorf("source: λ = %v must lie strictly between 0 and 1", lambda)
	}
	return nil
}

// LeafCountDistribution returns the exact distribution of the number of
// leaves |L(T)| of a tree T ~ π_D (Section 4.2) over alphabet size A:
// out[k] = P(|L(T)| = k) for k = 0..A^D (zero unless k ≡ 1 mod A−1).
//
// It is computed with probability generating functions in the number of
// internal nodes m (|L(T)| = 1 + m(A−1)): for a node with r levels left
// below it, H_0(z) = 1 and H_r(z) = λ + (1−λ)·z·H_{r−1}(z)^A, since the node
// stops with probability λ and otherwise has A independent subtrees; H_D is
// the root's. A^D must be at most 16384.
func LeafCountDistribution(A, D int, lambda float64) ([]float64, error) {
	if err := checkAlphabet(A); err != nil {
		return nil, err
	}
	if err := checkDepth(D); err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	maxLeaves := 1
	for range D {
		maxLeaves *= A
		if maxLeaves > maxExactLeaves {
			return nil, fmt.Errorf("source: LeafCountDistribution needs A^D ≤ %d, got A = %d, D = %d", maxExactLeaves, A, D)
		}
	}
	h := []float64{1}
	for range D {
		pow := []float64{1}
		for range A {
			pow = polyMul(pow, h)
		}
		next := make([]float64, len(pow)+1)
		next[0] = lambda
		for m, c := range pow {
			next[m+1] = (1 - lambda) * c
		}
		h = next
	}
	out := make([]float64, maxLeaves+1)
	for m, c := range h {
		out[1+m*(A-1)] = c
	}
	return out, nil
}

// polyMul returns the coefficients of the product of two polynomials.
func polyMul(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		for j, y := range b {
			out[i+j] += x * y
		}
	}
	return out
}

// ContextDepthDistribution returns, for a tree T ~ π_D and any fixed context
// (…, x_{n−1}, x_n), the distribution of the depth of its leaf
// β_{L(T)}(…, x_n): out[d] = λ(1−λ)^d for d < D and out[D] = (1−λ)^D, since
// the nodes on the context's path each stop with probability λ (Section
// 4.2). It does not depend on A.
func ContextDepthDistribution(D int, lambda float64) ([]float64, error) {
	if err := checkDepth(D); err != nil {
		return nil, err
	}
	if err := checkLambda(lambda); err != nil {
		return nil, err
	}
	out := make([]float64, D+1)
	for d := 0; d < D; d++ {
		out[d] = lambda * math.Pow(1-lambda, float64(d))
	}
	out[D] = math.Pow(1-lambda, float64(D))
	return out, nil
}

// ExpectedLeavesAtDepth returns the expected number of leaves at each depth
// of a tree T ~ π_D: out[d] = (A(1−λ))^d·λ for d < D and out[D] = (A(1−λ))^D,
// as there are A^d possible nodes at depth d, each present with probability
// (1−λ)^d. Σ_d out[d] = E|L(T)|.
func ExpectedLeavesAtDepth(A, D int, lambda float64) ([]float64, error) {
	if err := checkAlphabet(A); err != nil {
		return nil, err
	}
	probs, err := ContextDepthDistribution(D, lambda)
	if err != nil {
		return nil, err
	}
	for d := range probs {
		probs[d] *= math.Pow(float64(A), float64(d))
	}
	return probs, nil
}

// logPiD returns ln π_D(T) for a tree with the given leaf counts.
func logPiD(A, leaves, leavesAtD int, lambda float64) float64 {
	internal := float64(leaves-1) / float64(A-1)
	v := float64(leaves-leavesAtD) * math.Log(lambda)
	if internal > 0 {
		v += internal * math.Log1p(-lambda)
	}
	return v
}

// LogStructurePrior returns ln π_D(T) for the tree's structure and its
// declared D (Section 4.2):
//
//	π_D(T) = (1−λ)^{(|L(T)|−1)/(A−1)} · λ^{|L(T)|−|L_D(T)|},
//
// where (|L(T)|−1)/(A−1) is the number of internal nodes and L_D(T) are the
// leaves at depth D. The result is in nats (natural log).
func (t *Tree) LogStructurePrior(lambda float64) (float64, error) {
	if err := t.Validate(); err != nil {
		return 0, err
	}
	if err := checkLambda(lambda); err != nil {
		return 0, err
	}
	return logPiD(t.A, t.NumLeaves(), t.NumLeavesAtDepth(), lambda), nil
}

// LogTreeProb returns the natural log of the probability that p.Sample
// returns a tree with the structure of t (distributions and t.D ignored):
//
//	ln( (1/|Depths|) · Σ_{D ∈ Depths, D ≥ Depth(t)} π_D(T) ),
//
// with π_D as in LogStructurePrior. It is −Inf when no depth can produce t.
func (p Prior) LogTreeProb(t *Tree) (float64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if err := t.Validate(); err != nil {
		return 0, err
	}
	if t.A != p.A {
		return 0, fmt.Errorf("source: tree alphabet %d differs from the prior's %d", t.A, p.A)
	}
	depth, leaves := t.Depth(), t.NumLeaves()
	terms := make([]float64, 0, len(p.Depths))
	for _, D := range p.Depths {
		if D < depth {
			continue
		}
		terms = append(terms, logPiD(p.A, leaves, t.leavesAt(D), p.Lambda))
	}
	if len(terms) == 0 {
		return math.Inf(-1), nil
	}
	return logSumExp(terms) - math.Log(float64(len(p.Depths))), nil
}

func logSumExp(x []float64) float64 {
	if len(x) == 0 {
		return math.Inf(-1)
	}
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

var errNilTree = errors.New("source: nil tree")
