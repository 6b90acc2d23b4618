package probe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vomc/vomc/bayes"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
)

// The targets' names (Target.Name): the Bayes posterior that each
// context suffix is a leaf (OmegaTarget) and its arg-max, the MAP context
// length (MAPTarget); CTW(D)'s ω (CTWOmegaTarget) and its arg-max
// (CTWMAPTarget) where they differ from those (a prior of several depths
// or non-Dirichlet leaves); the posterior over the prior's depths
// (PosteriorTarget); the counts of the current context of length k
// (CountsTarget(k)).
const (
	OmegaTarget     = "omega"
	MAPTarget       = "map_length"
	CTWOmegaTarget  = "omega_ctw"
	CTWMAPTarget    = "map_length_ctw"
	PosteriorTarget = "depth_posterior"
)

// CountsTarget is the name of the counts target of context length k.
func CountsTarget(k int) string { return fmt.Sprintf("counts_%d", k) }

// Target describes one probed quantity: its name, what it is, its number
// of outputs, and whether it is a class (scored by accuracy) or a vector
// (scored by R²).
type Target struct {
	Name    string `json:"name"`
	About   string `json:"about"`
	Outputs int    `json:"outputs"`
	Class   bool   `json:"class,omitempty"`
	// lo, hi are the target's columns in the joint target matrix; k is
	// the context length of a counts target (−1 otherwise).
	lo, hi, k int
}

// targetSet computes every target at the positions of a window with
// vomc's own predictors: ctw's State.Weights (CTW(D)'s ω), bayes'
// State.LeafPosterior (the Bayes leaf posterior) and State.Posterior
// summed by depth, and synth's Extractor (the counts n_{s_k}(a),
// Extractor.Counts: the "w/ all counts" block).
type targetSet struct {
	targets []Target
	cols    int
	A, D    int
	ctw     *ctw.Predictor
	// bayes is nil when the prior is one depth with Dirichlet leaves:
	// its leaf posterior is then CTW(D)'s ω (bayes.State.LeafPosterior),
	// and there is no posterior over depths.
	bayes   *bayes.Predictor
	depthOf []int // component → index into depths
	depths  []int
}

// newTargetSet returns the targets of a data set's prior: CTW with the
// prior's largest depth D, its λ and α (Pad, the data's convention), the
// Bayes predictor of the prior when it has more than one depth or
// non-Dirichlet leaves, and the counts of context lengths 0..D.
func newTargetSet(p source.Prior) (*targetSet, error) {
	ts := &targetSet{A: p.A}
	for _, d := range p.Depths {
		ts.D = max(ts.D, d)
		if !slices.Contains(ts.depths, d) {
			ts.depths = append(ts.depths, d)
		}
	}
	slices.Sort(ts.depths)
	if ts.D < 1 {
		return nil, fmt.Errorf("probe: the prior's largest depth is %d; the targets need D ≥ 1", ts.D)
	}
	cfg := ctw.Config{A: p.A, D: ts.D, Lambda: p.Lambda, Alpha: 0.5}
	if len(p.Alpha) == 1 {
		cfg.Alpha = p.Alpha[0]
	} else if len(p.Alpha) == p.A {
		cfg.AlphaVec = p.Alpha
	}
	var err error
	if ts.ctw, err = ctw.New(cfg); err != nil {
		return nil, fmt.Errorf("probe: CTW of the data's prior: %w", err)
	}
	add := func(t Target) {
		if !strings.HasPrefix(t.Name, "counts_") {
			t.k = -1
		}
		t.lo, t.hi = ts.cols, ts.cols+t.Outputs
		ts.cols = t.hi
		ts.targets = append(ts.targets, t)
	}
	ctwName := ts.ctw.Name()
	if len(ts.depths) > 1 || p.Leaves != source.Dirichlet {
		if ts.bayes, err = bayes.New(p); err != nil {
			return nil, fmt.Errorf("probe: the Bayes predictor of the data's prior: %w", err)
		}
		for c := range ts.bayes.Components() {
			d, _ := ts.bayes.Component(c)
			ts.depthOf = append(ts.depthOf, slices.Index(ts.depths, d))
		}
		add(Target{Name: OmegaTarget, Outputs: ts.D + 1, About: fmt.Sprintf("ω_l, l = 0..%d: the Bayes posterior probability that the context suffix of length l is a leaf of the source tree, Σ_c π(c|x) ω^(c)_l over the prior's components c (depth, leaf kind), ω^(c) the leaf posterior under c (CTW's ω for Dirichlet leaves; bayes.State.LeafPosterior); 0 beyond a component's depth", ts.D)})
		add(Target{Name: CTWOmegaTarget, Outputs: ts.D + 1, About: fmt.Sprintf("%s's ω_l, l = 0..%d (Theorem 2, ctw.State.Weights): the leaf posterior under one depth %d with Dirichlet leaves, not this prior's", ctwName, ts.D, ts.D)})
	} else {
		add(Target{Name: OmegaTarget, Outputs: ts.D + 1, About: fmt.Sprintf("ω_l, l = 0..%d: the posterior probability that the context suffix of length l is a leaf of the source tree; under this prior (one depth, Dirichlet leaves) %s's ω (Theorem 2, ctw.State.Weights)", ts.D, ctwName)})
	}
	if len(ts.depths) > 1 {
		add(Target{Name: PosteriorTarget, Outputs: len(ts.depths), About: fmt.Sprintf("the Bayes posterior over the prior's depths %v", ts.depths)})
	}
	for k := 0; k <= ts.D; k++ {
		add(Target{Name: CountsTarget(k), k: k, Outputs: p.A, About: fmt.Sprintf("n_s(a), a = 0..%d: how often the current context s of length %d was followed by a (dummy context 0^D before x_1)", p.A-1, k)})
	}
	add(Target{Name: MAPTarget, Outputs: ts.D + 1, Class: true, About: fmt.Sprintf("the MAP context length arg max_l ω_l of %s (classes 0..%d; one-vs-rest ridge on the one-hot classes, arg-max of the scores)", OmegaTarget, ts.D)})
	if ts.bayes != nil {
		add(Target{Name: CTWMAPTarget, Outputs: ts.D + 1, Class: true, About: fmt.Sprintf("arg max_l of %s (%s's ω), as %s", CTWOmegaTarget, ctwName, MAPTarget)})
	}
	return ts, nil
}

// target returns the target named name.
func (ts *targetSet) target(name string) (Target, bool) {
	for _, t := range ts.targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// fill writes the targets of window x at positions pos (ascending, each
// < len(x)) into rows row0, row0+1, … of y. Position t is the prediction
// of x_{t+2} after x_1..x_{t+1} (the model's row t): every target of row
// t is read after x[t] (0-based) has been observed, so it describes the
// context x[0..t] from which the model's row t predicts x[t+1].
//
// ex counts the contexts (an extractor of ts's A and D for windows of
// len(x) symbols, reused across windows: fill resets it).
func (ts *targetSet) fill(ex *synth.Extractor, x []byte, pos []int, y matrix, row0 int) error {
	if len(pos) == 0 {
		return nil
	}
	D := ts.D
	cst := ts.ctw.NewCTWState()
	var bst *bayes.State
	var post []float64
	if ts.bayes != nil {
		bst = ts.bayes.NewBayesState()
		post = make([]float64, ts.bayes.Components())
	}
	ex.Reset()
	omega, leaf := make([]float64, D+1), make([]float64, D+1)
	next := 0
	for t := 0; t <= pos[len(pos)-1]; t++ {
		cst.Observe(x[t])
		ex.Push(x[t])
		if bst != nil {
			bst.Observe(x[t])
		}
		if t != pos[next] {
			continue
		}
		row := y.row(row0 + next)
		next++
		cst.Weights(omega)
		if bst != nil {
			bst.LeafPosterior(leaf)
		} else {
			copy(leaf, omega)
		}
		for _, tg := range ts.targets {
			out := row[tg.lo:tg.hi]
			switch tg.Name {
			case OmegaTarget:
				copy(out, leaf)
			case CTWOmegaTarget:
				copy(out, omega)
			case PosteriorTarget:
				bst.Posterior(post)
				clear(out)
				for c, w := range post {
					out[ts.depthOf[c]] += w
				}
			case MAPTarget:
				clear(out)
				out[argmax(leaf)] = 1
			case CTWMAPTarget:
				clear(out)
				out[argmax(omega)] = 1
			default: // counts of length tg.k
				ex.Counts(tg.k, out)
			}
		}
	}
	if bst != nil {
		if err := bst.Err(); err != nil {
			return fmt.Errorf("probe: the Bayes posterior: %w", err)
		}
	}
	return nil
}

// extractor returns a context counter for windows of T symbols.
func (ts *targetSet) extractor(T int) (*synth.Extractor, error) {
	ex, err := synth.NewExtractor(ts.A, ts.D, T+ts.D+2, synth.WithAllCounts)
	if err != nil {
		return nil, fmt.Errorf("probe: counting contexts: %w", err)
	}
	return ex, nil
}

// argmax is the index of v's largest value (the first on ties).
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}
