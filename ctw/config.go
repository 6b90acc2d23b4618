// Package ctw implements context-tree weighting (CTW), the Bayes-optimal
// predictor for variable-order Markov chains under the prior π_CTW(D, λ, α)
// of Section 4.2 of the paper (Kontoyiannis et al. 2022, Theorem 3.1).
//
// Three exact sequential forms are provided, all giving the full next-symbol
// distribution P(x_{n+1} = · | x_1^n) at every position:
//
//   - Blend (the default, fast): the ω-blending form of Theorem 2,
//     P = Σ_{l=0..D} ω_{n,l} p_{n,s_{n,l}}, where the weights are kept as one
//     "stop weight" w_s = λp^e_s / p^w_s per node, so that
//     ω_{n,l} = w_{s_l} Π_{j<l} (1 − w_{s_j}) and only the D+1 nodes on the
//     current path are touched per symbol: O(D·A) work, no underflow.
//   - Theorem1: the literal formula of Theorem 2 in the log domain, with
//     ℓ^e, ℓ^w stored at every node and ln ω_{n,l} − ln ω_{n,l−1} formed as in
//     the theorem.
//   - Ratio: the recursive definition, P(a | x_1^n) = p^w_{()}(x_1^n a) /
//     p^w_{()}(x_1^n) (eq. (autoregressive)), recomputing the root's
//     ℓ^w = ln p^w for every candidate symbol a.
//
// Batch functions compute the log marginal likelihood ln p^w_{()} of a whole
// sequence from its counts (LogMarginalLikelihood) and the maximum a
// posteriori tree (MAPTree). All probabilities are handled in the log domain
// or as bounded ratios; all logs are natural (nats).
//
// The prior's λ is the STOP probability: a node at depth < D is a leaf with
// probability λ and has all A children with probability 1 − λ.
package ctw

import (
	"fmt"
	"math"
	"strconv"
)

// Init selects how the first symbols of a sequence, which have fewer than D
// predecessors, are handled.
type Init int

const (
	// Pad: the sequence is preceded by the dummy context x_{1−D}^0 = D copies
	// of symbol 0 (the paper's convention, and vomc's generator's); every
	// symbol has a full depth-D context. LogML is ln p^w_{()}(x_1^n | 0^D).
	Pad Init = iota
	// Condition: the first D symbols serve only as the initial context
	// x_{1−D}^0 (the convention of Willems et al. 1995 and of the R package
	// BCT). They update no counts and are not part of LogML; Predict returns
	// the prior predictive α/Σα for them.
	Condition
	// Shorter: a symbol with h < D predecessors uses the context of length h;
	// its prediction is the Bayes mixture over suffix lengths 0..h with the
	// node at depth h treated as a leaf, and it updates the counts of the
	// nodes at depths 0..h only.
	Shorter
)

// String names the convention as the CLI spells it.
func (i Init) String() string {
	switch i {
	case Pad:
		return "pad"
	case Condition:
		return "condition"
	case Shorter:
		return "shorter"
	}
	return "Init(" + strconv.Itoa(int(i)) + ")"
}

// ParseInit parses "pad", "condition" or "shorter".
func ParseInit(s string) (Init, error) {
	switch s {
	case "pad":
		return Pad, nil
	case "condition", "cond":
		return Condition, nil
	case "shorter", "short":
		return Shorter, nil
	}
	return 0, fmt.Errorf("ctw: unknown initial-context convention %q (want pad, condition or shorter)", s)
}

// Set sets i to the convention s names (ParseInit), so that an Init is a
// flag.Value.
func (i *Init) Set(s string) (err error) {
	*i, err = ParseInit(s)
	return err
}

// Form selects which of the three exact computations a State uses.
type Form int

const (
	// Blend is the fast ω-blending form of Theorem 2 with per-node stop
	// weights (default).
	Blend Form = iota
	// Theorem1 is the literal log-domain formula of the paper's Theorem 2 (the
	// name is historical; the paper's Theorem 1 is Kontoyiannis et al.'s
	// Theorem 3.1, CTW = the Bayes mixture).
	Theorem1
	// Ratio is the ratio of root marginal likelihoods (recursive definition).
	Ratio
)

// String names the form.
func (f Form) String() string {
	switch f {
	case Blend:
		return "blend"
	case Theorem1:
		return "theorem1"
	case Ratio:
		return "ratio"
	}
	return "Form(" + strconv.Itoa(int(f)) + ")"
}

// DefaultMaxMemory is the default memory budget of one CTW state, in bytes.
const DefaultMaxMemory = 4 << 30

// Config holds the prior π_CTW(D, λ, α) and the computational options.
type Config struct {
	A      int     // alphabet size, 2..256
	D      int     // maximum depth (order), ≥ 0
	Lambda float64 // stop probability λ ∈ (0,1); the paper uses 0.15
	// Alpha is the symmetric Dirichlet parameter α (> 0; 0.5 = Jeffreys/KT,
	// the paper's choice). Ignored when AlphaVec is set.
	Alpha float64
	// AlphaVec optionally gives one Dirichlet parameter per symbol.
	AlphaVec []float64
	Init     Init // initial-context convention (default Pad)
	Form     Form // which exact computation (default Blend)
	// MaxMemory bounds the memory of one State in bytes (0 means
	// DefaultMaxMemory). When the context tree would outgrow it, new nodes
	// are no longer created and the path stops at the deepest existing node,
	// which is then treated as a leaf (as in Shorter); Saturated counts such
	// positions. Use CheckMemory to refuse such runs up front.
	MaxMemory int64
}

// params are the validated, precomputed constants of a Config.
type params struct {
	A, D      int
	alpha     []float64
	sumAlpha  float64
	lnLam     float64 // ln λ
	ln1mLam   float64 // ln(1−λ)
	lam       float64
	init      Init
	form      Form
	maxMemory int64
}

// alphaVec returns the per-symbol Dirichlet parameters.
func (c Config) alphaVec() []float64 {
	if c.AlphaVec != nil {
		return c.AlphaVec
	}
	v := make([]float64, c.A)
	for i := range v {
		v[i] = c.Alpha
	}
	return v
}

// Validate reports the first impossible parameter.
func (c Config) Validate() error {
	if c.A < 2 || c.A > 256 {
		return fmt.Errorf("ctw: alphabet size A=%d outside 2..256", c.A)
	}
	if c.D < 0 {
		return fmt.Errorf("ctw: depth D=%d is negative", c.D)
	}
	if c.D > 64 {
		return fmt.Errorf("ctw: depth D=%d exceeds the supported maximum 64", c.D)
	}
	if !(c.Lambda > 0 && c.Lambda < 1) {
		return fmt.Errorf("ctw: stop probability λ=%v outside (0,1)", c.Lambda)
	}
	if c.AlphaVec != nil {
		if len(c.AlphaVec) != c.A {
			return fmt.Errorf("ctw: %d Dirichlet parameters for alphabet size %d", len(c.AlphaVec), c.A)
		}
		for i, a := range c.AlphaVec {
			if !(a > 0) || math.IsInf(a, 0) {
				return fmt.Errorf("ctw: Dirichlet parameter α[%d]=%v must be positive and finite", i, a)
			}
		}
	} else if !(c.Alpha > 0) || math.IsInf(c.Alpha, 0) {
		return fmt.Errorf("ctw: Dirichlet parameter α=%v must be positive and finite", c.Alpha)
	}
	if c.Init < Pad || c.Init > Shorter {
		return fmt.Errorf("ctw: unknown initial-context convention %d", c.Init)
	}
	if c.Form < Blend || c.Form > Ratio {
		return fmt.Errorf("ctw: unknown form %d", c.Form)
	}
	if c.MaxMemory < 0 {
		return fmt.Errorf("ctw: negative memory budget %d", c.MaxMemory)
	}
	return nil
}

func (c Config) params() (*params, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	p := &params{A: c.A, D: c.D, alpha: append([]float64(nil), c.alphaVec()...),
		lam: c.Lambda, lnLam: math.Log(c.Lambda), ln1mLam: math.Log1p(-c.Lambda),
		init: c.Init, form: c.Form, maxMemory: c.MaxMemory}
	for _, a := range p.alpha {
		p.sumAlpha += a
	}
	if p.maxMemory == 0 {
		p.maxMemory = DefaultMaxMemory
	}
	return p, nil
}

// nodeBytes is the memory one context-tree node takes in a State of the
// given form (counts, per-node floats and indexing overhead).
func nodeBytes(A int, f Form) int64 {
	b := int64(4*A) + 4 + 24 + 16 // counts, total, trie bookkeeping
	if f == Blend {
		b += 24 // w, 1−w, η
	} else {
		b += 24 // ℓ^e, ℓ^w, Σ children ℓ^w
	}
	if A <= smallA {
		b += int64(4 * A) // inline child table
	}
	return b
}

// MemoryEstimate is the worst-case memory in bytes of a CTW state that has
// seen n symbols: one node per distinct context of length ≤ D, bounded by
// both Σ_{l≤D} A^l and (D+1)·n + 1.
func MemoryEstimate(c Config, n int64) int64 {
	nodes := float64(n)*float64(c.D+1) + 1
	full := 0.0
	pw := 1.0
	for l := 0; l <= c.D; l++ {
		full += pw
		pw *= float64(c.A)
	}
	nodes = math.Min(nodes, full)
	est := nodes * float64(nodeBytes(c.A, c.Form))
	if est > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(est)
}

// CheckMemory returns an error, stating the estimate, when a State of c that
// reads n symbols could need more than the memory budget (c.MaxMemory, or
// DefaultMaxMemory when zero).
func CheckMemory(c Config, n int64) error {
	budget := c.MaxMemory
	if budget == 0 {
		budget = DefaultMaxMemory
	}
	est := MemoryEstimate(c, n)
	if est > budget {
		return fmt.Errorf("ctw: A=%d, D=%d on %d symbols may need up to %.3g GB of context-tree memory (%.3g M nodes), over the budget of %.3g GB; lower D or raise the budget",
			c.A, c.D, n, float64(est)/1e9, float64(est)/float64(nodeBytes(c.A, c.Form))/1e6, float64(budget)/1e9)
	}
	return nil
}

// exactCountLimit bounds the work (and the map) of SequenceMemoryEstimate's
// exact count of contexts: at most this many (position, length) pairs.
const exactCountLimit = 1 << 24

// SequenceMemoryEstimate is MemoryEstimate for a known sequence x: where
// nodes are large (A ≥ 32, where the worst case (D+1)·n overshoots the
// contexts of repetitive data many times) and len(x)·D ≤ 2^24, it counts
// the distinct contexts of length ≤ D that a State of c creates on x
// (after the D padding zeros of the pad convention; a 64-bit hash per
// context, so a collision can only lower the count by a negligible
// amount) and returns their memory; otherwise MemoryEstimate.
func SequenceMemoryEstimate(c Config, x []byte) int64 {
	n := int64(len(x))
	if c.A < 32 || n*int64(c.D) > exactCountLimit {
		return MemoryEstimate(c, n)
	}
	seen := make(map[uint64]struct{}, min(n*int64(c.D), 1<<16))
	sym := func(i int) uint64 { // symbol i of pad+x, 0-based in x (i < 0: padding)
		if i < 0 {
			return 1
		}
		return uint64(x[i]) + 1
	}
	const mul = 0x9e3779b97f4a7c15
	for i := 0; i <= len(x); i++ { // the context before symbol i (and after the last)
		h := uint64(0x243f6a8885a308d3)
		for l := 1; l <= c.D; l++ {
			h = (h ^ sym(i-l)) * mul
			h ^= h >> 29
			seen[h^uint64(l)<<56] = struct{}{}
		}
	}
	nodes := int64(len(seen)) + 1 // plus the root
	return nodes * nodeBytes(c.A, c.Form)
}
