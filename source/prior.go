package source

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// LeafKind says how a Prior draws the leaf distributions p_s.
type LeafKind int

const (
	// Dirichlet draws p_s ~ Dir(α) independently for every leaf: the paper's
	// π_p(p_s) = Dir(p_s; {α(a)}) (Section 4.2), under which CTW with the
	// same (D, λ, α) is Bayes-optimal.
	Dirichlet LeafKind = iota
	// Sparse is the paper's second generator (Appendix "Training Details"):
	// every symbol is zeroed independently with probability SparseZero; if
	// all A were zeroed, one symbol chosen uniformly is kept instead; the kept
	// symbols get i.i.d. Uniform(0,1] values which are then normalised to
	// sum to 1.
	Sparse
	// Mixed draws, once per tree, which of the two generators gives all of
	// that tree's leaves: Sparse with probability SparseFrac, Dirichlet
	// otherwise. This is the paper's training distribution, which uses
	// "two different ways of generating these probability distributions"
	// (Appendix "Training Details"). Under it, CTW with Dirichlet(α) leaf
	// estimators is no longer exactly Bayes-optimal: the sparse trees' leaf
	// prior is not Dir(α).
	Mixed
)

// String returns "dirichlet", "sparse" or "mixed".
func (k LeafKind) String() string {
	switch k {
	case Dirichlet:
		return "dirichlet"
	case Sparse:
		return "sparse"
	case Mixed:
		return "mixed"
	}
	return fmt.Sprintf("LeafKind(%d)", int(k))
}

// MarshalText implements encoding.TextMarshaler ("dirichlet", "sparse" or
// "mixed").
func (k LeafKind) MarshalText() ([]byte, error) {
	if k != Dirichlet && k != Sparse && k != Mixed {
		return nil, fmt.Errorf("source: unknown leaf kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler. The empty string
// selects the default, Dirichlet, like a missing "leaves" field or JSON
// null (which encoding/json leaves at the zero value, Dirichlet), so that
// the three spellings of "not given" mean the same.
func (k *LeafKind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "dirichlet", "":
		*k = Dirichlet
	case "sparse":
		*k = Sparse
	case "mixed":
		*k = Mixed
	default:
		return fmt.Errorf("source: unknown leaf kind %q (want \"dirichlet\", \"sparse\" or \"mixed\")", b)
	}
	return nil
}

// DefaultSparseZero is the probability with which the Sparse generator
// zeroes each symbol when Prior.SparseZero is 0.
const DefaultSparseZero = 0.5

// DefaultSparseFrac is the probability with which a Mixed prior gives a
// tree Sparse leaves when Prior.SparseFrac is 0.
const DefaultSparseFrac = 0.5

// ParseLeafKind returns the leaf kind named "dirichlet", "sparse" or
// "mixed".
func ParseLeafKind(s string) (LeafKind, error) {
	if s == "" {
		return Dirichlet, fmt.Errorf("source: empty leaf kind (want \"dirichlet\", \"sparse\" or \"mixed\")")
	}
	var k LeafKind
	err := k.UnmarshalText([]byte(s))
	return k, err
}

// Prior is the prior π_CTW(D, λ, α) over context trees of Section 4.2,
//
//	π_CTW(T, {p_s}) = π_D(T) · ∏_{s∈L(T)} π_p(p_s),
//	π_D(T) = (1−λ)^{(|L(T)|−1)/(A−1)} · λ^{|L(T)|−|L_D(T)|},
//
// i.e. a bounded branching process: every node at depth < D is a leaf with
// probability λ (it "stops") and otherwise has all A children; nodes at
// depth D are leaves. L_D(T) are the leaves at depth D. With several Depths,
// each tree's D is first drawn uniformly from them (the paper's training data
// mixes trees of maximum order ≤ 5, Appendix "Training Details"); the
// sampled Tree's D field is the drawn D.
//
// The JSON form (used in data set manifests) is
// {"alphabet":3,"depths":[5],"lambda":0.15,"alpha":[0.5],"leaves":"dirichlet"}.
type Prior struct {
	// A is the alphabet size, 2..256.
	A int `json:"alphabet"`
	// Depths is the set of maximum depths D (each 0..MaxDepth); a tree's D
	// is drawn uniformly from it. Repeating a value weights it.
	Depths []int `json:"depths"`
	// Lambda is the STOP probability λ ∈ (0,1) of a node at depth < D.
	Lambda float64 `json:"lambda"`
	// Alpha are the Dirichlet parameters α(a) > 0: one value (symmetric
	// Dir(α, …, α); the paper uses 0.5, the Jeffreys prior) or A values.
	// Required for Dirichlet and Mixed leaves, ignored for Sparse leaves.
	Alpha []float64 `json:"alpha,omitempty"`
	// Leaves selects the leaf-distribution generator.
	Leaves LeafKind `json:"leaves"`
	// SparseZero is the Sparse generator's per-symbol zeroing probability,
	// in (0,1]; 0 means DefaultSparseZero (0.5). Ignored for Dirichlet.
	SparseZero float64 `json:"sparse_zero,omitempty"`
	// SparseFrac is, for Mixed leaves, the probability that a tree's leaves
	// come from the Sparse generator, in (0,1); 0 means DefaultSparseFrac
	// (0.5). It must be 0 for the other kinds.
	SparseFrac float64 `json:"sparse_frac,omitempty"`
}

// PaperPrior returns the paper's prior for maximum depth D (Section 3):
// A = 3, λ = 0.15, symmetric α = 0.5, Dirichlet leaves.
func PaperPrior(D int) Prior {
	return Prior{A: 3, Depths: []int{D}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: Dirichlet}
}

// DepthList writes depths as a comma-separated list without spaces
// ("5", "1,2,3"), the form the --D flag takes and figure titles show.
func DepthList(depths []int) string {
	s := make([]string, len(depths))
	for i, d := range depths {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, ",")
}

// AlphaVector returns the Dirichlet parameter vector (α(0), …, α(A−1)),
// expanding a single symmetric value; nil when Alpha has neither 1 nor A
// entries.
func (p Prior) AlphaVector() []float64 {
	switch len(p.Alpha) {
	case 1:
		v := make([]float64, p.A)
		for i := range v {
			v[i] = p.Alpha[0]
		}
		return v
	case p.A:
		return append([]float64(nil), p.Alpha...)
	}
	return nil
}

// sparseFrac returns the effective SparseFrac.
func (p Prior) sparseFrac() float64 {
	if p.SparseFrac == 0 {
		return DefaultSparseFrac
	}
	return p.SparseFrac
}

// sparseZero returns the effective SparseZero.
func (p Prior) sparseZero() float64 {
	if p.SparseZero == 0 {
		return DefaultSparseZero
	}
	return p.SparseZero
}

// bytesPerNode is a rough estimate of the memory of one tree node.
func bytesPerNode(A int) float64 { return 48 + 8*float64(A) }

// expectedNodes returns E[number of nodes] of a π_D tree:
// Σ_{d=0}^{D} (A(1−λ))^d, since a node at depth d < D has A children with
// probability 1−λ.
func expectedNodes(A, D int, lambda float64) float64 {
	m := float64(A) * (1 - lambda)
	s, term := 0.0, 1.0
	for d := 0; d <= D; d++ {
		s += term
		term *= m
	}
	return s
}

// ExpectedNodes returns the expected number of nodes (internal and leaves)
// of a tree drawn from the prior, Σ_{d=0}^{D} (A(1−λ))^d averaged over the
// Depths.
func (p Prior) ExpectedNodes() float64 {
	if len(p.Depths) == 0 {
		return 0
	}
	s := 0.0
	for _, D := range p.Depths {
		s += expectedNodes(p.A, D, p.Lambda)
	}
	return s / float64(len(p.Depths))
}

// Validate checks the prior: 2 ≤ A ≤ 256; at least one depth, each in
// 0..MaxDepth; 0 < λ < 1; for Dirichlet and Mixed leaves 1 or A finite
// α > 0; for Sparse and Mixed leaves 0 ≤ SparseZero ≤ 1; for Mixed leaves
// 0 ≤ SparseFrac < 1 (SparseFrac = 0 otherwise); a known leaf kind; and that
// the expected
// tree size Σ_d (A(1−λ))^d (for the largest D) is at most MaxTreeNodes,
// reporting the estimate and its memory otherwise.
func (p Prior) Validate() error {
	if err := checkAlphabet(p.A); err != nil {
		return err
	}
	if len(p.Depths) == 0 {
		return errors.New("source: prior has no depths (need at least one maximum depth D)")
	}
	for i, D := range p.Depths {
		if D < 0 || D > MaxDepth {
			return fmt.Errorf("source: prior depths[%d] = %d outside 0..%d", i, D, MaxDepth)
		}
	}
	if !(p.Lambda > 0 && p.Lambda < 1) {
		return fmt.Errorf("source: prior λ = %v must lie strictly between 0 and 1", p.Lambda)
	}
	switch p.Leaves {
	case Dirichlet, Sparse, Mixed:
	default:
		return fmt.Errorf("source: prior has unknown leaf kind %d", int(p.Leaves))
	}
	if p.Leaves == Mixed {
		if !(p.SparseFrac >= 0 && p.SparseFrac < 1) {
			return fmt.Errorf("source: prior sparse_frac = %v outside [0,1) (the probability that a tree gets sparse leaves; 0 means the default %v)", p.SparseFrac, DefaultSparseFrac)
		}
	} else if p.SparseFrac != 0 {
		return fmt.Errorf("source: prior sparse_frac = %v is only meaningful for mixed leaves (leaves are %v)", p.SparseFrac, p.Leaves)
	}
	if p.Leaves == Dirichlet || p.Leaves == Mixed {
		if len(p.Alpha) != 1 && len(p.Alpha) != p.A {
			return fmt.Errorf("source: prior has %d Dirichlet parameters α, want 1 (symmetric) or A = %d", len(p.Alpha), p.A)
		}
		for i, a := range p.Alpha {
			if !(a > 0) || math.IsInf(a, 0) {
				return fmt.Errorf("source: prior α[%d] = %v must be finite and > 0", i, a)
			}
		}
	}
	if p.Leaves == Sparse || p.Leaves == Mixed {
		if !(p.SparseZero >= 0 && p.SparseZero <= 1) {
			return fmt.Errorf("source: prior sparse_zero = %v outside [0,1] (0 means the default %v)", p.SparseZero, DefaultSparseZero)
		}
	}
	for _, D := range p.Depths {
		if n := expectedNodes(p.A, D, p.Lambda); n > MaxTreeNodes {
			return fmt.Errorf("source: prior with A = %d, D = %d, λ = %v gives trees of %.3g nodes on average (~%.3g GB each), more than the limit of %d nodes",
				p.A, D, p.Lambda, n, n*bytesPerNode(p.A)/1e9, MaxTreeNodes)
		}
	}
	return nil
}

// Sample draws a context tree from π_CTW (Section 4.2): D uniformly from
// Depths (no random number is used when there is one depth), for Mixed
// leaves the tree's leaf generator (Sparse when rng.Float64() < SparseFrac;
// no random number is used for the other kinds), then the tree
// grown depth-first with children in symbol order 0..A−1: a node at depth
// d < D stops (becomes a leaf) when rng.Float64() < λ and otherwise gets A
// children; a node at depth D is a leaf without a coin. Each leaf's p_s is
// drawn when the leaf is created (Dir(α) or the Sparse generator). The tree
// is returned with its D field set to the drawn D. It fails (without
// returning a partial tree) if the tree grows beyond MaxTreeNodes nodes.
func (p Prior) Sample(rng *rand.Rand) (*Tree, error) {
	if rng == nil {
		return nil, errors.New("source: nil *rand.Rand")
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	D := p.Depths[0]
	if len(p.Depths) > 1 {
		D = p.Depths[rng.IntN(len(p.Depths))]
	}
	sparse := p.Leaves == Sparse
	if p.Leaves == Mixed {
		sparse = rng.Float64() < p.sparseFrac()
	}
	alpha := p.AlphaVector()
	zero := p.sparseZero()
	scratch := make([]float64, p.A)
	nodes := 0
	var grow func(depth int) (*Node, error)
	grow = func(depth int) (*Node, error) {
		nodes++
		if nodes > MaxTreeNodes {
			return nil, fmt.Errorf("source: sampled tree exceeds %d nodes", MaxTreeNodes)
		}
		if depth == D || rng.Float64() < p.Lambda {
			P := make([]float64, p.A)
			if sparse {
				sparseLeaf(rng, zero, P)
			} else {
				dirichlet(rng, alpha, P, scratch)
			}
			return &Node{P: P}, nil
		}
		n := &Node{Children: make([]*Node, p.A)}
		for q := range n.Children {
			c, err := grow(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Children[q] = c
		}
		return n, nil
	}
	root, err := grow(0)
	if err != nil {
		return nil, err
	}
	return &Tree{A: p.A, D: D, Root: root}, nil
}

// gammaVariate draws from Gamma(shape a, scale 1), a ≥ 1, by the method of
// Marsaglia and Tsang (2000): with d = a − 1/3 and c = 1/√(9d), draw
// x ~ N(0,1) and v = (1 + c·x)³ until v > 0 and U < 1 − 0.0331x⁴ (squeeze)
// or ln U < x²/2 + d(1 − v + ln v); return d·v.
func gammaVariate(rng *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = rng.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// logGammaVariate returns ln G for G ~ Gamma(a, 1), a > 0. For a < 1 it uses
// the boost G = G′·U^{1/a} with G′ ~ Gamma(a+1), U ~ Uniform(0,1], computed
// in logs so that tiny a (where U^{1/a} underflows) still works.
func logGammaVariate(rng *rand.Rand, a float64) float64 {
	if a >= 1 {
		return math.Log(gammaVariate(rng, a))
	}
	g := gammaVariate(rng, a+1)
	u := 1 - rng.Float64() // (0,1]
	return math.Log(g) + math.Log(u)/a
}

// dirichlet writes a draw of Dir(alpha) into p (len(p) = len(alpha)) using
// p_a = G_a / Σ_b G_b with independent G_a ~ Gamma(α(a), 1), normalised in
// log space (scratch has the same length).
func dirichlet(rng *rand.Rand, alpha, p, scratch []float64) {
	m := math.Inf(-1)
	for a, al := range alpha {
		scratch[a] = logGammaVariate(rng, al)
		m = max(m, scratch[a])
	}
	sum := 0.0
	for a := range p {
		p[a] = math.Exp(scratch[a] - m)
		sum += p[a]
	}
	for a := range p {
		p[a] /= sum
	}
}

// sparseLeaf writes a draw of the Sparse generator into p: each symbol is
// zeroed independently with probability zero (A coins, in symbol order); if
// all were zeroed one symbol chosen by rng.IntN(A) is kept; kept symbols get
// i.i.d. Uniform(0,1] values (in symbol order), then p is normalised.
func sparseLeaf(rng *rand.Rand, zero float64, p []float64) {
	kept := 0
	for a := range p {
		if rng.Float64() < zero {
			p[a] = 0
		} else {
			p[a] = 1
			kept++
		}
	}
	if kept == 0 {
		p[rng.IntN(len(p))] = 1
	}
	sum := 0.0
	for a := range p {
		if p[a] != 0 {
			p[a] = 1 - rng.Float64()
			sum += p[a]
		}
	}
	for a := range p {
		p[a] /= sum
	}
}
