// Package dynamics measures how a sequence model becomes an algorithm
// during training. At every training snapshot (the parameters kept at
// chosen steps: trainrun.SnapshotSteps, 'vomc train --snapshots') it evaluates the model on a fixed probe set
// of test windows beside reference predictors — the unigram, fixed-order
// Markov(k) estimators for k = 1..D, Kneser–Ney, CTW, and, where CTW(D) is
// not the Bayes predictor of the source prior (mixed depths, non-Dirichlet
// leaves), the exact Bayes predictor (package bayes) — and reports
//
//   - the model's excess loss over the reference (the exact Bayes
//     predictor: Bayes, or CTW where it is Bayes) per symbol, over the
//     whole window (positions 1..N) and its second half (N/2+1..N), with
//     95% intervals across windows, in nats;
//   - the mean Kullback–Leibler divergence per position from each reference
//     predictor P_r to the model P_θ, (1/N) Σ_t KL(P_r(·|x_{<t}) ‖ P_θ(·|x_{<t}))
//     in nats, averaged over the windows (with intervals): the reference of
//     least divergence is the algorithm the model is closest to at that step
//     (the method of Edelman et al. 2024 for fixed-order chains); the
//     references that the probe set cannot tell apart from it — not shown
//     worse than any other reference by paired (window by window)
//     comparisons at a family-wise level of 5% (conservative: see
//     TieLevel) — are tied with it;
//   - the labels of its attention heads (package attnmap: relative position
//     d or suffix match k, with the window-permutation / Hoeffding null test
//     and Bonferroni correction), so that the emergence of the paper's
//     context-extension (previous-symbol) and statistics-collection
//     (suffix-match) heads can be dated and set beside the loss.
//
// Phases merges consecutive snapshots with the same closest reference and
// the same references tied with it;
// Emergences dates each head's final label.
package dynamics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/parallel"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/trainrun"
)

// ErrNoSnapshots is returned (wrapped) for a run directory without
// training snapshots (trainrun.SnapshotSteps).
var ErrNoSnapshots = errors.New("no snapshots")

// Snapshot is one kept set of parameters: its step and file.
type Snapshot struct {
	Step int    `json:"step"`
	Path string `json:"path"`
}

// Snapshots lists the snapshots of the run in dir in step order (none:
// an error saying how to make them).
func Snapshots(dir string) ([]Snapshot, error) {
	ents, err := os.ReadDir(filepath.Join(dir, trainrun.SnapshotDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []Snapshot
	for _, e := range ents {
		s, ok := trainrun.ParseSnapshotName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		out = append(out, Snapshot{s, filepath.Join(dir, trainrun.SnapshotDir, e.Name())})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dynamics: %s has %w", dir, ErrNoSnapshots)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out, nil
}

// Model is what is measured at a snapshot: a predictor whose attention
// maps can be read (a *transformer.Model), or, without maps, a plain
// predictor (head labels are then left out).
type Model interface {
	predict.Predictor
}

// Reference is a named reference predictor.
type Reference struct {
	Name string
	P    predict.Predictor
}

// Options configure Measure.
type Options struct {
	// Windows are the probe windows, all of length N ≥ 2 (the same at
	// every snapshot).
	Windows [][]byte
	// References are the predictors the model is compared with; Excess
	// names the one excess losses are measured against (empty: the first;
	// Run chooses it by kind with methods.Reference).
	References []Reference
	Excess     string
	// HeadWindows is the number of probe windows the head labels are
	// computed on (0: min(100, len(Windows)); < 0: no head labels); MaxK
	// the largest offset d and suffix length k tested (0: 3); Null the
	// null test's options.
	HeadWindows int
	MaxK        int
	Null        attnmap.NullOptions
	// Workers evaluate windows in parallel (0: GOMAXPROCS); the results do
	// not depend on it.
	Workers int
	// Events, if set, receives the progress over the snapshots (task
	// "snapshots") after each snapshot.
	Events events.Sink
	// Checkpoint, if set, is a file that keeps every snapshot's point as
	// soon as it is measured (JSON lines, synced), so that a measurement
	// interrupted (cancelled, killed) and started again with the same
	// options and snapshots resumes after the last kept snapshot, with the
	// same result as one uninterrupted run. The caller removes it once the
	// result is written (RemoveCheckpoint). Identity names what computes
	// the points (the build, the compute backend): points kept under
	// another identity are measured again.
	Checkpoint, Identity string
}

// Stat is a mean over windows with the half-width of its 95% interval
// (Student-t across windows).
type Stat struct {
	Mean float64 `json:"mean"`
	CI   float64 `json:"ci"`
}

// Divergence is the mean KL divergence per position from a reference to
// the model (nats), over the window and over its second half.
type Divergence struct {
	Reference string `json:"reference"`
	Window    Stat   `json:"window"`
	Half      Stat   `json:"second_half"`
}

// Head is one attention head's label at a snapshot.
type Head struct {
	Layer    int  `json:"layer"`
	Head     int  `json:"head"`
	Labelled bool `json:"labelled"`
	// Hypothesis is the label's hypothesis alone (e.g. "previous-token
	// d=1", "suffix-match k=3 (offset 1)"), Label the whole label with
	// its mass, chance and corrected p-value.
	Hypothesis string  `json:"hypothesis"`
	Label      string  `json:"label"`
	Lift       float64 `json:"lift"`
	PAdj       float64 `json:"p_adj"`
}

// Point is the measurement of one snapshot.
type Point struct {
	Step int `json:"step"`
	// Loss is the model's loss per symbol (nats) over the window and its
	// second half; Excess and ExcessHalf the same minus the reference's,
	// paired by window.
	Loss       Stat `json:"loss"`
	LossHalf   Stat `json:"loss_half"`
	Excess     Stat `json:"excess"`
	ExcessHalf Stat `json:"excess_half"`
	// KL are the divergences from every reference, in Options.References
	// order; Closest names the reference of least window divergence, and
	// Tied the others that the probe windows cannot tell apart from the
	// closest ones: those not shown worse than any other reference by the
	// paired (window by window) comparisons of tied, at a family-wise
	// level of TieLevel — in order of their mean divergence. Not shown
	// different is not shown equal: with few windows many references tie.
	KL      []Divergence `json:"kl"`
	Closest string       `json:"closest"`
	Tied    []string     `json:"tied_with,omitempty"`
	// Heads are the head labels (nil without maps or with HeadWindows < 0).
	Heads []Head `json:"heads,omitempty"`
}

// UnmarshalJSON reads a Point, also as the builds before 2026-11-25 wrote
// it: without the loss (then zero) and with the excess under "Excess" and
// "ExcessHalf".
func (p *Point) UnmarshalJSON(b []byte) error {
	type plain Point
	aux := struct {
		*plain
		OldExcessHalf *Stat `json:"ExcessHalf"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if aux.OldExcessHalf != nil && p.ExcessHalf == (Stat{}) {
		p.ExcessHalf = *aux.OldExcessHalf
	}
	return nil
}

// refDists holds a reference's distributions of every probe window.
type refDists [][]float64 // [window][t*A+a]

// distributions returns p's rows of x (row t: P(x_{t+1} | x_1..x_t));
// the windows were checked against the alphabet, so predict.Sequence
// cannot fail here.
func distributions(p predict.Predictor, x []byte) []float64 {
	out := make([]float64, len(x)*p.AlphabetSize())
	if err := predict.Sequence(p, x, out); err != nil {
		panic("dynamics: " + err.Error())
	}
	return out
}

// stat is the mean and 95% half-width of v (eval.MeanInterval).
func stat(v []float64) Stat {
	iv := eval.MeanInterval(v, 0.95)
	return Stat{iv.Mean, iv.Hi - iv.Mean}
}

// minProb bounds the model's probabilities from below in −ln p and KL: a
// float32 softmax may underflow to 0 (the smallest positive float32).
const minProb = 1.401298464324817e-45

// Measure evaluates every snapshot (load turns a snapshot into its model)
// on the probe windows; see the package documentation. It stops with
// ctx's error when ctx is cancelled (checked for every window).
func Measure(ctx context.Context, snaps []Snapshot, load func(Snapshot) (Model, error), opts Options) ([]Point, error) {
	A, ex, err := checkProbe(opts)
	if err != nil {
		return nil, err
	}
	refs, err := referenceDists(ctx, opts)
	if err != nil {
		return nil, err
	}
	ms := &measurer{ctx: ctx, opts: opts, refs: refs, A: A, N: len(opts.Windows[0]), ex: ex}
	W := len(opts.Windows)
	ms.hw = opts.HeadWindows
	if ms.hw == 0 {
		ms.hw = min(100, W)
	}
	ms.hw = min(ms.hw, W)
	ms.maxK = opts.MaxK
	if ms.maxK <= 0 {
		ms.maxK = 3
	}
	if opts.Checkpoint != "" {
		if ms.ck, err = openCheckpoint(opts.Checkpoint, measurementKey(opts, refs, ms.hw, ms.maxK)); err != nil {
			return nil, err
		}
		defer ms.ck.close()
	}
	var out []Point
	for i, s := range snaps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := ms.snapshot(s, load)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		if opts.Events != nil {
			opts.Events.Progress("snapshots", i+1, len(snaps))
		}
	}
	return out, nil
}

// checkProbe checks Measure's options: at least 2 probe windows, all of
// one length N ≥ 2, references of one alphabet size A with symbols of the
// windows below it, and the excess reference among them. It returns A and
// the excess reference's index.
func checkProbe(opts Options) (A, ex int, err error) {
	W := len(opts.Windows)
	if W < 2 {
		return 0, 0, fmt.Errorf("dynamics: %d probe windows, need at least 2 for intervals", W)
	}
	N := len(opts.Windows[0])
	for i, x := range opts.Windows {
		if len(x) != N || N < 2 {
			return 0, 0, fmt.Errorf("dynamics: probe window %d has %d symbols, window 0 has %d (need ≥ 2, all equal)", i, len(x), N)
		}
	}
	if len(opts.References) == 0 {
		return 0, 0, errors.New("dynamics: no reference predictors")
	}
	A = opts.References[0].P.AlphabetSize()
	for _, r := range opts.References {
		if r.P.AlphabetSize() != A {
			return 0, 0, fmt.Errorf("dynamics: reference %s has alphabet %d, %s has %d", r.Name, r.P.AlphabetSize(), opts.References[0].Name, A)
		}
	}
	ex = excessIndex(opts.References, opts.Excess)
	if ex < 0 {
		return 0, 0, fmt.Errorf("dynamics: no reference named %q", opts.Excess)
	}
	for _, x := range opts.Windows {
		if err := predict.Check(x, A); err != nil {
			return 0, 0, fmt.Errorf("dynamics: probe window: %w", err)
		}
	}
	return A, ex, nil
}

// referenceDists returns every reference's predictive distributions on
// every probe window, computed once for all snapshots.
func referenceDists(ctx context.Context, opts Options) ([]refDists, error) {
	W := len(opts.Windows)
	refs := make([]refDists, len(opts.References))
	for r, ref := range opts.References {
		refs[r] = make(refDists, W)
		parallel.For(W, opts.Workers, func(w int) {
			if ctx.Err() == nil {
				refs[r][w] = distributions(ref.P, opts.Windows[w])
			}
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// measurer measures snapshots against the references' distributions on
// the probe windows (N symbols each, alphabet A).
type measurer struct {
	ctx      context.Context
	opts     Options
	refs     []refDists
	A, N, ex int         // ex: the excess reference's index
	hw, maxK int         // the head labels' windows and largest d and k
	ck       *checkpoint // nil without Options.Checkpoint
}

// snapshot returns the point of snapshot s: kept by the checkpoint for
// the same file content, else measured (and then kept, the file having
// been checked unchanged meanwhile).
func (ms *measurer) snapshot(s Snapshot, load func(Snapshot) (Model, error)) (Point, error) {
	var sum string
	if ms.ck != nil {
		var err error
		if sum, err = fsutil.FileSHA256(s.Path); err != nil {
			return Point{}, fmt.Errorf("dynamics: snapshot: %w", err)
		}
		if p, ok := ms.ck.lookup(s, sum); ok {
			return p, nil
		}
	}
	m, err := load(s)
	if err != nil {
		return Point{}, err
	}
	p, err := ms.measure(s, m)
	if err != nil {
		return Point{}, err
	}
	if ms.ck != nil {
		// the file measured is the file hashed
		if after, err := fsutil.FileSHA256(s.Path); err != nil || after != sum {
			return Point{}, fmt.Errorf("dynamics: snapshot %s changed while it was measured (%v)", s.Path, err)
		}
		if err := ms.ck.add(s, sum, p); err != nil {
			return Point{}, err
		}
	}
	return p, nil
}

// measure evaluates model m of snapshot s on the probe windows: its loss
// and excess loss, its divergence from every reference with the closest
// and those tied with it, and its head labels.
func (ms *measurer) measure(s Snapshot, m Model) (Point, error) {
	opts := ms.opts
	if m.AlphabetSize() != ms.A {
		return Point{}, fmt.Errorf("dynamics: snapshot %s has alphabet %d, the references %d", s.Path, m.AlphabetSize(), ms.A)
	}
	pw := ms.perWindow(m)
	if err := ms.ctx.Err(); err != nil {
		return Point{}, err
	}
	p := Point{Step: s.Step, Loss: stat(pw.loss), LossHalf: stat(pw.lossH), Excess: stat(pw.exc), ExcessHalf: stat(pw.excH)}
	if bad := math.IsNaN(p.Loss.Mean) || math.IsInf(p.Loss.Mean, 0); bad {
		return Point{}, fmt.Errorf("dynamics: snapshot of step %d (%s): its loss is %g: the model's probabilities are not finite", s.Step, s.Path, p.Loss.Mean)
	}
	best, bi := math.Inf(1), 0
	for r, ref := range opts.References {
		d := Divergence{Reference: ref.Name, Window: stat(pw.kl[r]), Half: stat(pw.klH[r])}
		if math.IsNaN(d.Window.Mean) || math.IsInf(d.Window.Mean, 0) {
			return Point{}, fmt.Errorf("dynamics: snapshot of step %d (%s): its divergence from %s is %g: the probabilities are not finite", s.Step, s.Path, ref.Name, d.Window.Mean)
		}
		p.KL = append(p.KL, d)
		if d.Window.Mean < best {
			best, bi, p.Closest = d.Window.Mean, r, ref.Name
		}
	}
	p.Tied = tied(pw.kl, bi, opts.References)
	if mp, ok := m.(attnmap.Mapper); ok && opts.HeadWindows >= 0 {
		heads, err := ms.heads(mp)
		if err != nil {
			return Point{}, err
		}
		p.Heads = heads
	}
	return p, nil
}

// windowStats are a model's per-window means on the probe windows, over
// the window and its second half (the …H), in nats per position: its
// loss, its excess loss over the excess reference, and its divergence
// from every reference ([reference][window]).
type windowStats struct {
	loss, lossH, exc, excH []float64
	kl, klH                [][]float64
}

// perWindow evaluates m on every probe window (in parallel; windows left
// out when the context is cancelled).
func (ms *measurer) perWindow(m Model) *windowStats {
	W, R := len(ms.opts.Windows), len(ms.refs)
	pw := &windowStats{loss: make([]float64, W), lossH: make([]float64, W), exc: make([]float64, W), excH: make([]float64, W),
		kl: make([][]float64, R), klH: make([][]float64, R)}
	for r := range R {
		pw.kl[r], pw.klH[r] = make([]float64, W), make([]float64, W)
	}
	parallel.For(W, ms.opts.Workers, func(w int) {
		if ms.ctx.Err() != nil {
			return
		}
		ms.window(pw, w, m)
	})
	return pw
}

// window fills window w's entries of pw: with q_t the model's and p_t a
// reference's distribution of x_{t+1} (q floored at minProb), the means
// over the positions of −ln q_t(x_{t+1}), of that minus the excess
// reference's −ln p_t(x_{t+1}), and of KL(p_t ‖ q_t) =
// Σ_{a: p_t(a) > 0} p_t(a) ln(p_t(a)/q_t(a)), over all N positions and
// over the second half (t ≥ ⌊N/2⌋).
func (ms *measurer) window(pw *windowStats, w int, m Model) {
	A, N, R, half := ms.A, ms.N, len(ms.refs), ms.N/2
	refs, ex := ms.refs, ms.ex
	x := ms.opts.Windows[w]
	pm := distributions(m, x)
	var sl, slH, se, seH float64
	skl, sklH := make([]float64, R), make([]float64, R)
	for t := range N {
		q := pm[t*A : (t+1)*A]
		lm := -math.Log(max(q[x[t]], minProb))
		lr := -math.Log(refs[ex][w][t*A+int(x[t])])
		sl += lm
		se += lm - lr
		if t >= half {
			slH += lm
			seH += lm - lr
		}
		for r := range R {
			p := refs[r][w][t*A : (t+1)*A]
			d := 0.0
			for a, pa := range p {
				if pa > 0 {
					d += pa * math.Log(pa/max(q[a], minProb))
				}
			}
			skl[r] += d
			if t >= half {
				sklH[r] += d
			}
		}
	}
	n, nh := float64(N), float64(N-half)
	pw.loss[w], pw.lossH[w], pw.exc[w], pw.excH[w] = sl/n, slH/nh, se/n, seH/nh
	for r := range R {
		pw.kl[r][w], pw.klH[r][w] = skl[r]/n, sklH[r]/nh
	}
}

// heads labels mp's attention heads on the first hw probe windows
// (attnmap.ScoreWindows with offsets and suffix lengths up to maxK).
func (ms *measurer) heads(mp attnmap.Mapper) ([]Head, error) {
	scores, err := attnmap.ScoreWindows(ms.opts.Windows[:ms.hw], func(w int) ([][][]float32, error) {
		if err := ms.ctx.Err(); err != nil {
			return nil, err
		}
		return mp.AttentionMaps(ms.opts.Windows[w])
	}, ms.maxK, ms.opts.Null)
	if err != nil {
		return nil, err
	}
	var heads []Head
	for _, h := range scores {
		hyp, _, _ := strings.Cut(h.Best.String(), ", mass ")
		heads = append(heads, Head{Layer: h.Layer, Head: h.Head, Labelled: h.Labelled, Hypothesis: hyp,
			Label: h.Label, Lift: h.Best.Lift(), PAdj: h.Best.PAdj})
	}
	return heads, nil
}

// TieLevel is the family-wise level of the tie rule (Point.Tied): the
// two-sided confidence of its Bonferroni intervals is 1 − TieLevel/(R−1).
// A reference is excluded only by an interval's lower bound, a one-sided
// test at TieLevel/(2(R−1)), so the reference truly closest to the model
// is wrongly excluded with probability at most TieLevel/2: the rule errs
// towards ties.
const TieLevel = 0.05

// tied lists the references other than best that cannot be told apart
// from the closest ones, in order of their mean divergence: the set of
// references not shown worse than any other (multiple comparisons with the
// best, after Hsu): r is in it unless for some j the paired difference
// kl[r][w] − kl[j][w] (by probe window) has a lower confidence bound above
// 0, the intervals two-sided at confidence 1 − TieLevel/(R−1) (Bonferroni
// over r's R−1 comparisons; Student-t across windows). The set does not
// depend on which reference has the least mean, and best (the least mean)
// is always in it.
func tied(kl [][]float64, best int, refs []Reference) []string {
	R, W := len(kl), len(kl[best])
	if R < 2 {
		return nil
	}
	conf := 1 - TieLevel/float64(R-1)
	means := make([]float64, R)
	for r := range R {
		means[r] = eval.MeanInterval(kl[r], conf).Mean
	}
	diff := make([]float64, W)
	worse := func(r, j int) bool { // r shown worse than j
		for w := range diff {
			diff[w] = kl[r][w] - kl[j][w]
		}
		return eval.MeanInterval(diff, conf).Lo > 0
	}
	var in []int
	for r := range R {
		if r == best {
			continue
		}
		keep := true
		for j := range R {
			if j != r && worse(r, j) {
				keep = false
				break
			}
		}
		if keep {
			in = append(in, r)
		}
	}
	sort.SliceStable(in, func(a, b int) bool { return means[in[a]] < means[in[b]] })
	var out []string
	for _, r := range in {
		out = append(out, refs[r].Name)
	}
	return out
}

// Phase is a run of consecutive snapshots with the same set of closest
// references (Point.Closest and Point.Tied).
type Phase struct {
	// Closest and Tied are those of the phase's last snapshot.
	Closest  string   `json:"closest"`
	Tied     []string `json:"tied_with,omitempty"`
	From, To int      `json:"-"` // steps of the first and last snapshot
	// FromStep and ToStep are From and To (JSON names).
	FromStep int `json:"from_step"`
	ToStep   int `json:"to_step"`
}

// Name is the phase's closest reference, followed by " ≈ " and each
// reference tied with it.
func (ph Phase) Name() string {
	return strings.Join(append([]string{ph.Closest}, ph.Tied...), " ≈ ")
}

// closestSet is p's closest and tied references as an order-free key.
func closestSet(p Point) string {
	s := append([]string{p.Closest}, p.Tied...)
	sort.Strings(s)
	return strings.Join(s, "\x00")
}

// Phases merges consecutive points with the same set of closest
// references (the closest and those tied with it, in any order).
func Phases(pts []Point) []Phase {
	var out []Phase
	key := ""
	for _, p := range pts {
		k := closestSet(p)
		if n := len(out); n > 0 && k == key {
			out[n-1].Closest, out[n-1].Tied = p.Closest, p.Tied
			out[n-1].To, out[n-1].ToStep = p.Step, p.Step
			continue
		}
		key = k
		out = append(out, Phase{Closest: p.Closest, Tied: p.Tied, From: p.Step, To: p.Step, FromStep: p.Step, ToStep: p.Step})
	}
	return out
}

// Emergence dates one head's final label: Step is the first snapshot from
// which the head is labelled, at every later snapshot, with the hypothesis
// it has at the last one (Label: that snapshot's whole label).
type Emergence struct {
	Layer      int    `json:"layer"`
	Head       int    `json:"head"`
	Hypothesis string `json:"hypothesis"`
	Label      string `json:"label"`
	Step       int    `json:"step"`
}

// Emergences lists the heads labelled at the last point, with the step
// their label emerged, in step order.
func Emergences(pts []Point) []Emergence {
	if len(pts) == 0 {
		return nil
	}
	last := pts[len(pts)-1]
	var out []Emergence
	for hi, h := range last.Heads {
		if !h.Labelled {
			continue
		}
		step := last.Step
		for i := len(pts) - 1; i >= 0; i-- {
			hs := pts[i].Heads
			if hi >= len(hs) || !hs[hi].Labelled || hs[hi].Hypothesis != h.Hypothesis {
				break
			}
			step = pts[i].Step
		}
		out = append(out, Emergence{h.Layer, h.Head, h.Hypothesis, h.Label, step})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Step < out[j].Step })
	return out
}
