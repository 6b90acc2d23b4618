package experiment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer"
)

// AblateOptions configures Ablate.
type AblateOptions struct {
	// Model is the trained transformer, already loaded.
	Model *transformer.Model
	// Windows are the evaluated windows (each of at most the model's
	// context N plus one symbol, or the model slides).
	Windows [][]byte
	// Defaults are the data's: its prior draws the reference windows of
	// mean and resample ablation (methods.ReferenceWindows) and the
	// alphabet.
	Defaults methods.Defaults
	// Mode is the ablation of single heads and groups (0: zero).
	Mode transformer.Ablation
	// Refs and RefSeed are the reference windows of mean and resample
	// (0: methods.DefaultRefs and methods.DefaultInterveneSeed).
	Refs    int
	RefSeed uint64
	// Label are the windows whose attention labels the heads
	// (attnmap.ScoreWindows), each cut to the context; nil: the first
	// LabelWindows of Windows (0: 16, as `vomc attention`), which are then
	// evaluated too (labels and costs measured on overlapping windows;
	// RunAblate passes disjoint ones). MaxK is the longest
	// hypothesis (0: the prior's largest depth + 1) and LabelSeed the
	// null test's seed (0: 1).
	Label              [][]byte
	LabelWindows, MaxK int
	LabelSeed          uint64
	// Groups is the number of random groups of each labelled group's size
	// that it is compared with (0: 39, so that the smallest permutation
	// p-value is 0.025), drawn with Seed.
	Groups int
	Seed   uint64
	// Margin is the tolerance of a pattern (0: 0.005 nats/symbol, the
	// study's verdicts' margin) and Alpha the family-wise level of the
	// single-head tests (0: 0.05).
	Margin, Alpha float64
	// Workers evaluate windows in parallel (0: GOMAXPROCS); Events gets
	// the progress of the evaluation.
	Workers int
	Events  events.Sink
}

// AblateReport is what each head and group of heads contributes to a
// model's loss. Every cost is a paired difference, across the windows,
// of the whole-window loss (nats/symbol) of the intervened model minus
// the intact one's, with its 95% interval.
type AblateReport struct {
	Model   string        `json:"model"`
	Path    string        `json:"path,omitempty"` // where the model was read (RunAblate)
	Windows int           `json:"windows"`
	N       int           `json:"n"`
	Mode    string        `json:"mode"`
	Intact  eval.Interval `json:"intact"`
	Margin  float64       `json:"margin"`
	Alpha   float64       `json:"alpha"`
	// LabelWindows is the number of windows the heads were labelled on,
	// with hypotheses up to MaxK; LabelDisjoint whether they are other
	// windows than the evaluated ones (false: the first LabelWindows of
	// them).
	LabelWindows  int           `json:"label_windows"`
	MaxK          int           `json:"max_k"`
	LabelDisjoint bool          `json:"label_disjoint"`
	Heads         []HeadReport  `json:"heads"`
	Groups        []GroupReport `json:"groups"`
}

// HeadReport is one head: its label, the cost of ablating it alone, the
// one-sided paired t-test of "the cost is > 0" with its Holm-adjusted
// p-value across the model's heads, and, for a labelled head with an
// exact pattern, the cost of replacing its attention by that pattern.
type HeadReport struct {
	Head      string        `json:"head"`
	Label     string        `json:"label"`
	Labelled  bool          `json:"labelled"`
	Cost      eval.Interval `json:"cost"`
	P         float64       `json:"p"`
	PHolm     float64       `json:"p_holm"`
	Necessary bool          `json:"necessary"`
	// Pattern is the label's exact pattern ("" when it has none);
	// PatternCost the cost of the head with that pattern, and
	// PatternWithin whether it is not worse than the intact model by
	// Margin or more: its 95% interval lies below +Margin (the one-sided
	// test of the study's verdicts at 2.5%).
	Pattern       string         `json:"pattern,omitempty"`
	PatternCost   *eval.Interval `json:"pattern_cost,omitempty"`
	PatternWithin bool           `json:"pattern_within,omitempty"`
}

// GroupReport is a labelled group of heads ablated together against
// random groups of as many heads: their costs, the permutation p-value
// (permutationP), and the paired
// interval of the group's cost minus the random groups' mean cost.
type GroupReport struct {
	Name       string        `json:"name"`
	Heads      []string      `json:"heads"`
	Cost       eval.Interval `json:"cost"`
	Random     [][]string    `json:"random"`
	RandomCost []float64     `json:"random_cost"`
	P          float64       `json:"p"`
	VsRandom   eval.Interval `json:"vs_random"`
}

func (o AblateOptions) withDefaults() AblateOptions {
	if o.Mode == 0 {
		o.Mode = transformer.AblateZero
	}
	if o.Refs == 0 {
		o.Refs = methods.DefaultRefs
	}
	if o.RefSeed == 0 {
		o.RefSeed = methods.DefaultInterveneSeed
	}
	if o.LabelWindows == 0 {
		o.LabelWindows = 16
	}
	if o.LabelSeed == 0 {
		o.LabelSeed = 1
	}
	if o.MaxK == 0 && o.Defaults.Prior != nil {
		o.MaxK = slices.Max(o.Defaults.Prior.Depths) + 1
	}
	if o.MaxK == 0 {
		o.MaxK = o.Defaults.D + 1
	}
	if o.Groups == 0 {
		o.Groups = 39
	}
	if o.Margin == 0 {
		o.Margin = 0.005
	}
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	return o
}

// variant is one intervened model of the study.
type variant struct {
	name string
	iv   transformer.Intervention
}

// Ablate measures which heads of a model are necessary. It labels the
// heads by their attention (attnmap.ScoreWindows on Label, or the first
// LabelWindows windows), then evaluates on every window, in one pass
// (eval.Evaluate, the intact model as the reference): every head ablated
// alone (Mode); every labelled head set to its label's exact pattern
// (offset:d for a relative-position head, suffix:k for a suffix match at
// offset 1; is its cost below Margin?); and each labelled group — the layer-1 previous-symbol heads
// (relative position d ≥ 1), the suffix-match heads, all labelled heads —
// ablated together, beside Groups random groups of as many heads (all
// distinct, drawn uniformly from the other subsets with Seed). The
// intervened models share the model's parameters and buffers, and, for
// mean and resample, every head's outputs on the reference windows,
// computed once (transformer.HeadOutputs).
func Ablate(ctx context.Context, o AblateOptions) (*AblateReport, error) {
	o = o.withDefaults()
	m, c := o.Model, o.Model.Config
	if len(o.Windows) == 0 {
		return nil, fmt.Errorf("experiment: ablation: no windows")
	}
	label := o.Label
	if label == nil {
		label = o.Windows[:min(o.LabelWindows, len(o.Windows))]
	}
	var lw [][]byte // the label windows, cut to the context
	for _, w := range label {
		lw = append(lw, w[:min(len(w), c.Context)])
	}
	a, err := attnmap.Analyze(m, lw, o.MaxK, attnmap.NullOptions{Seed: o.LabelSeed, Workers: o.Workers})
	if err != nil {
		return nil, fmt.Errorf("experiment: ablation: head labels: %w", err)
	}
	var outs *transformer.HeadOutputs // every head's, shared by the variants
	if o.Mode != transformer.AblateZero {
		if o.Defaults.Prior == nil {
			return nil, fmt.Errorf("experiment: ablation mode %v draws reference windows from the data's prior, which this data has not", o.Mode)
		}
		refs, err := methods.ReferenceWindows(*o.Defaults.Prior, o.Refs, c.Context, o.RefSeed)
		if err != nil {
			return nil, err
		}
		if outs, err = m.HeadOutputs(refs, nil); err != nil {
			return nil, err
		}
	}
	r := &AblateReport{Model: m.Name(), Windows: len(o.Windows), Mode: o.Mode.String(), Margin: o.Margin, Alpha: o.Alpha,
		LabelWindows: len(lw), MaxK: o.MaxK, LabelDisjoint: o.Label != nil}
	ablate := func(hs []transformer.Head) variant {
		iv := transformer.Intervention{Ablate: hs, Mode: o.Mode, Outputs: outs, Seed: o.RefSeed}
		return variant{iv.String(), iv}
	}
	var vs []variant
	for _, s := range a.Scores {
		h := transformer.Head{Layer: s.Layer - 1, Head: s.Head - 1}
		hr := HeadReport{Head: h.String(), Label: s.Label, Labelled: s.Labelled, Pattern: labelPattern(s)}
		vs = append(vs, ablate([]transformer.Head{h}))
		if hr.Pattern != "" {
			p, _ := transformer.ParsePattern(hr.Pattern)
			iv := transformer.Intervention{Patterns: []transformer.HeadPattern{{Head: h, Pattern: p}}}
			vs = append(vs, variant{iv.String(), iv})
		}
		r.Heads = append(r.Heads, hr)
	}
	groups := labelledGroups(a.Scores)
	rng := rand.New(rand.NewPCG(o.Seed, 0x61626c617465)) // "ablate"
	for _, g := range groups {
		gr := GroupReport{Name: g.name, Heads: headNames(g.heads)}
		vs = append(vs, ablate(g.heads))
		for _, rg := range randomGroups(rng, c.AllHeads(), g.heads, o.Groups) {
			gr.Random = append(gr.Random, headNames(rg))
			vs = append(vs, ablate(rg))
		}
		r.Groups = append(r.Groups, gr)
	}
	res, err := evaluateVariants(ctx, m, vs, o)
	if err != nil {
		return nil, err
	}
	r.N = res.N
	r.fill(res, o)
	return r, nil
}

// evaluateVariants evaluates the intact model and every variant (named
// by its intervention) on the windows, the intact model the reference.
func evaluateVariants(ctx context.Context, m *transformer.Model, vs []variant, o AblateOptions) (*eval.Result, error) {
	preds := []predict.Predictor{m}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.name] {
			continue
		}
		seen[v.name] = true
		x, err := m.Intervene(v.iv)
		if err != nil {
			return nil, fmt.Errorf("experiment: ablation %s: %w", v.name, err)
		}
		preds = append(preds, named{x, v.name})
	}
	return eval.Evaluate(ctx, o.Windows, o.Defaults.A, preds, eval.Config{Reference: m.Name(), Workers: o.Workers, Events: o.Events})
}

// named is an intervened model under the name of its intervention.
type named struct {
	*transformer.Intervened
	name string
}

func (n named) Name() string { return n.name }

// fill computes the report's statistics from the evaluation.
func (r *AblateReport) fill(res *eval.Result, o AblateOptions) {
	intact := res.Ref()
	r.Intact = intact.Window
	cost := func(name string) (eval.Interval, []float64) {
		d := windowDiff(res, res.Method(name), intact)
		return eval.MeanInterval(d, 0.95), d
	}
	ps := make([]float64, len(r.Heads))
	for i := range r.Heads {
		h := &r.Heads[i]
		hd, _ := transformer.ParseHead(h.Head)
		h.Cost, _ = cost(transformer.Intervention{Ablate: []transformer.Head{hd}, Mode: o.Mode}.String())
		h.P = oneSidedP(h.Cost, res.Windows)
		ps[i] = h.P
		if h.Pattern != "" {
			p, _ := transformer.ParsePattern(h.Pattern)
			pc, _ := cost(transformer.Intervention{Patterns: []transformer.HeadPattern{{Head: hd, Pattern: p}}}.String())
			h.PatternCost = &pc
			h.PatternWithin = pc.Hi < o.Margin
		}
	}
	for i, p := range eval.Holm(ps) {
		r.Heads[i].PHolm, r.Heads[i].Necessary = p, p < o.Alpha
	}
	for i := range r.Groups {
		g := &r.Groups[i]
		gc, gd := cost(groupName(g.Heads, o.Mode))
		g.Cost = gc
		mean := make([]float64, len(gd))
		for _, rh := range g.Random {
			rc, rd := cost(groupName(rh, o.Mode))
			g.RandomCost = append(g.RandomCost, rc.Mean)
			for j, v := range rd {
				mean[j] += v / float64(len(g.Random))
			}
		}
		g.P = permutationP(gc.Mean, g.RandomCost)
		vs := make([]float64, len(gd))
		for j := range vs {
			vs[j] = gd[j] - mean[j]
		}
		g.VsRandom = eval.MeanInterval(vs, 0.95)
	}
}

// groupName is the intervention name of ablating the heads named hs.
func groupName(hs []string, mode transformer.Ablation) string {
	var heads []transformer.Head
	for _, s := range hs {
		h, _ := transformer.ParseHead(s)
		heads = append(heads, h)
	}
	return transformer.Intervention{Ablate: heads, Mode: mode}.String()
}

// windowDiff is, window by window, a's whole-window loss minus b's
// (from the per-window means of the two halves).
func windowDiff(res *eval.Result, a, b *eval.MethodResult) []float64 {
	n1, n2 := float64(res.SecondHalfStart-1), float64(res.N-res.SecondHalfStart+1)
	d := make([]float64, len(a.SecondHalfWindows))
	for j := range d {
		d[j] = (n1*(a.FirstHalfWindows[j]-b.FirstHalfWindows[j]) + n2*(a.SecondHalfWindows[j]-b.SecondHalfWindows[j])) / (n1 + n2)
	}
	return d
}

// oneSidedP is the p-value of the one-sided paired t-test of "the mean
// is > 0" from its interval over n windows: P(T ≥ t) = F(−t) for
// t = mean/(SD/√n) and F the CDF of Student's t with n − 1 degrees of
// freedom (the survival function by symmetry, so that a p-value far below
// float64's ε is kept, not rounded to 0 as 1 − F(t) would be). With
// SD = 0 it is 0 for a positive mean and 1 otherwise.
func oneSidedP(iv eval.Interval, n int) float64 {
	se := iv.SD / math.Sqrt(float64(n))
	if !(se > 0) {
		if iv.Mean > 0 {
			return 0
		}
		return 1
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.CDF(-iv.Mean / se)
}

// permutationP is the permutation p-value of a group's cost against the
// costs of random groups: (1 + #{random ≥ cost}) / (1 + #random), which
// counts the group itself among the draws, so that it is never 0 and is
// 1/(1 + #random) at the least.
func permutationP(cost float64, random []float64) float64 {
	ge := 0
	for _, c := range random {
		if c >= cost {
			ge++
		}
	}
	return float64(1+ge) / float64(1+len(random))
}

// labelPattern is the exact pattern of a head's label: offset:d for a
// relative-position head, suffix:k for a suffix match at offset 1; ""
// for an unlabelled head or a suffix match at offset 0.
func labelPattern(s attnmap.HeadScore) string {
	switch {
	case !s.Labelled:
		return ""
	case s.Best.Kind == attnmap.Relative:
		return fmt.Sprintf("offset:%d", s.Best.D)
	case s.Best.Kind == attnmap.SuffixMatch && s.Best.Offset == 1 && s.Best.K >= 1:
		return fmt.Sprintf("suffix:%d", s.Best.K)
	}
	return ""
}

// headGroup is a labelled group of heads.
type headGroup struct {
	name  string
	heads []transformer.Head
}

// labelledGroups are the layer-1 previous-symbol heads (relative
// position d ≥ 1), the suffix-match heads and all labelled heads, each
// when it has a head and is not the whole model nor a group before it.
func labelledGroups(scores []attnmap.HeadScore) []headGroup {
	var prev, suffix, all []transformer.Head
	for _, s := range scores {
		h := transformer.Head{Layer: s.Layer - 1, Head: s.Head - 1}
		if !s.Labelled {
			continue
		}
		all = append(all, h)
		switch {
		case s.Layer == 1 && s.Best.Kind == attnmap.Relative && s.Best.D >= 1:
			prev = append(prev, h)
		case s.Best.Kind == attnmap.SuffixMatch:
			suffix = append(suffix, h)
		}
	}
	var out []headGroup
	for _, g := range []headGroup{{"layer-1 previous-symbol heads", prev}, {"suffix-match heads", suffix}, {"labelled heads", all}} {
		dup := slices.ContainsFunc(out, func(o headGroup) bool { return slices.Equal(o.heads, g.heads) })
		if len(g.heads) > 0 && len(g.heads) < len(scores) && !dup {
			out = append(out, g)
		}
	}
	return out
}

// randomGroups draws up to n distinct subsets of all of len(g) heads,
// other than g, uniformly (fewer when there are not that many).
func randomGroups(rng *rand.Rand, all, g []transformer.Head, n int) [][]transformer.Head {
	key := func(hs []transformer.Head) string { return headNamesKey(hs) }
	seen := map[string]bool{key(g): true}
	total := binomial(len(all), len(g)) - 1
	var out [][]transformer.Head
	for len(out) < min(n, total) {
		perm := rng.Perm(len(all))[:len(g)]
		sort.Ints(perm)
		hs := make([]transformer.Head, len(g))
		for i, p := range perm {
			hs[i] = all[p]
		}
		if k := key(hs); !seen[k] {
			seen[k] = true
			out = append(out, hs)
		}
	}
	return out
}

func binomial(n, k int) int {
	r := 1
	for i := range k {
		r = r * (n - i) / (i + 1)
	}
	return r
}

func headNames(hs []transformer.Head) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()
	}
	return out
}

func headNamesKey(hs []transformer.Head) string { return strings.Join(headNames(hs), "+") }
