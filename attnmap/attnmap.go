// Package attnmap analyses and draws the attention maps of a trained
// transformer, as in Section 4.3 ("Analysis of Attention Maps") and Fig. 5
// of the paper: heatmaps of every head (top of Fig. 5: off-diagonal
// stripes of heads that attend a fixed distance back, spotty
// content-dependent patterns in higher layers), and, for a query
// position, the positions whose context matches the query's suffix drawn
// against the head's attention weights (bottom of Fig. 5).
//
// An attention map of a window of T symbols is a T×T row-major matrix
// (transformer.Model.AttentionMaps): row i is the query position, column
// j ≤ i the key position, rows sum to 1. Positions are 0-based throughout;
// layers and heads are 0-based in slices and 1-based in labels, titles and
// JSON ("layer 1 head 1" is maps[0][0]).
//
// Each head is scored against two families of hypotheses, each the set
// S_i of positions a head would attend from query i:
//
//   - relative position d: S_i = {i−d} (d = 1 is a previous-token head,
//     the off-diagonal stripe of Fig. 5);
//   - suffix match (k, offset): S_i = SuffixMatches(x, i, k, offset), the
//     earlier positions whose length-k context equals the query's suffix
//     x_{i−k+1..i}. With offset 0 the position ends with the suffix; with
//     offset 1 it comes right after an occurrence of it, i.e. it holds the
//     symbol that followed the suffix there — where a head collecting
//     next-symbol statistics for the suffix reads (the paper's statistics
//     collection layer, Theorem 4, gathers exactly these counts).
//
// The paper's Fig. 5 draws "the positions in the data sequence that match
// their suffixes of length-3", which read literally is offset 0 (the
// positions ending with the same suffix); in a trained model, where an
// earlier layer has copied the preceding symbols into every position, a
// head can read either — the position ending with the suffix, or the one
// after it. Both are computed and the scores say which fits a head.
//
// Labels are chance-aware (ScoreWindows): a mass is compared with the mass
// a null hypothesis explains — for suffix matches, the attention of a
// window paired with the symbols of other windows (a permutation test over
// many windows, so skewed symbol frequencies, which make match sets large,
// raise the chance level instead of producing labels); for relative
// positions, a head with no preference among the keys. p-values are
// Bonferroni-corrected over heads × hypotheses, and a head is labelled only
// by a hypothesis that is significant and at least MinLift above chance.
// A uniform or content-blind head is never labelled suffix-match.
package attnmap

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vomc/vomc/internal/parallel"
)

// SuffixMatches returns, in increasing order, the positions j < query of
// x whose length-k context matches the query's suffix s = x[query−k+1 ..
// query] (0-based, inclusive):
//
//   - offset 0: x[j−k+1 .. j] = s (j ends with the same suffix; j ≥ k−1);
//   - offset 1: x[j−k .. j−1] = s (j comes right after an occurrence of s,
//     so x[j] is the symbol that followed it; j ≥ k).
//
// With k = 0 every j < query matches. It returns nil when the query has
// fewer than k symbols (query < k−1) or nothing matches. It panics when
// query is outside x, k < 0 or offset is neither 0 nor 1.
func SuffixMatches(x []byte, query, k, offset int) []int {
	if query < 0 || query >= len(x) || k < 0 || (offset != 0 && offset != 1) {
		panic(fmt.Sprintf("attnmap: SuffixMatches(query %d of %d symbols, k %d, offset %d)", query, len(x), k, offset))
	}
	if query < k-1 {
		return nil
	}
	s := x[query-k+1 : query+1]
	var out []int
	for j := max(0, k-1+offset); j < query; j++ {
		if string(x[j-offset-k+1:j-offset+1]) == string(s) {
			out = append(out, j)
		}
	}
	return out
}

// Kind names a family of attention hypotheses.
type Kind string

// The hypothesis families.
const (
	// SuffixMatch: the head attends the earlier positions whose length-k
	// context matches the query's suffix (see SuffixMatches).
	SuffixMatch Kind = "suffix-match"
	// Relative: the head attends the position d back, i−d.
	Relative Kind = "relative"
)

// Defaults of the null test (NullOptions).
const (
	// Alpha is the family-wise significance level: a hypothesis can label
	// a head only when its Bonferroni-corrected p-value is below Alpha.
	Alpha = 0.05
	// MinLift is the least excess of a hypothesis's mass over its chance
	// mass (Score.Mass − Score.Chance, a difference of attention
	// probabilities) that can label a head: significance alone would let
	// a negligible but consistent preference label a head.
	MinLift = 0.1
	// Specific is the share of the best suffix-match lift (over k ≥ 1)
	// that a longer suffix must keep to label a head: the label's k is
	// the largest whose lift ≥ Specific·best among the significant ones
	// (shorter suffixes select supersets of the longer ones' positions).
	Specific = 0.8
)

// Score is how well one hypothesis describes a head: the attention mass
// the head puts on the positions S_i the hypothesis selects, averaged over
// the windows and the query positions i that have a non-empty S_i, next to
// the mass expected under a null hypothesis and a p-value.
//
// Null hypotheses (see ScoreWindows):
//   - suffix match: the attention does not depend on the window's content.
//     The null distribution pairs window w's attention with the match sets
//     of window π(w) for uniformly random permutations π of the windows;
//     Chance is its exact mean, (1/W)·Σ_{w,w'} mass(w on w')/queries. A
//     content-blind head (uniform, positional, or random but independent
//     of the symbols) meets it whatever the symbol frequencies.
//   - relative position d: the head has no preference for position i−d
//     over the other keys j ≤ i. On the attention averaged over windows,
//     ā, each row i contributes a uniformly random entry of ā_{i,0..i};
//     Chance is its exact mean, mean_i Σ_j ā_ij/(i+1), and the p-value is
//     Hoeffding's bound exp(−2t²/Σ_i (max_j ā_ij − min_j ā_ij)²) for the
//     observed excess t of Σ_i ā_{i,i−d} over its null mean (a valid,
//     conservative p-value).
type Score struct {
	// Kind is the hypothesis family.
	Kind Kind `json:"kind"`
	// K and Offset are the suffix length and offset (SuffixMatch).
	K      int `json:"k"`
	Offset int `json:"offset"`
	// D is the distance back (Relative).
	D int `json:"d"`
	// Mass is the mean over windows and queries of Σ_{j∈S_i} a_ij.
	Mass float64 `json:"mass"`
	// Chance is the mean of Mass under the null hypothesis (see above).
	Chance float64 `json:"chance"`
	// Uniform is the mass of uniform causal attention, the mean of
	// |S_i|/(i+1) over the same windows and queries.
	Uniform float64 `json:"uniform"`
	// P is the p-value of the null test (Monte Carlo permutation p-value
	// (1+#{null ≥ observed})/(1+permutations) for suffix matches,
	// Hoeffding's bound for relative positions); 1 when untested (k = 0,
	// or a single window for suffix matches).
	P float64 `json:"p"`
	// PAdj is P Bonferroni-corrected over every head × tested hypothesis
	// (suffix k = 1..maxK × 2 offsets and relative d = 0..maxK per head),
	// capped at 1.
	PAdj float64 `json:"p_adj"`
	// Queries is the number of (window, query) pairs averaged over.
	Queries int `json:"queries"`
}

// Lift is Mass − Chance, the attention mass above what the null
// hypothesis explains.
func (s Score) Lift() float64 { return s.Mass - s.Chance }

// Significant reports whether the hypothesis may label its head: PAdj <
// alpha and Lift ≥ minLift.
func (s Score) Significant(alpha, minLift float64) bool {
	return s.Queries > 0 && s.PAdj < alpha && s.Lift() >= minLift
}

// PValue formats a p-value with two significant digits; one that
// underflowed to 0 in float64 (a Hoeffding bound of many queries) is
// "< 1e-300", not "0".
func PValue(p float64) string {
	if p == 0 {
		return "< 1e-300"
	}
	return fmt.Sprintf("%.2g", p)
}

// String describes the hypothesis, its mass, chance and corrected
// p-value, e.g. "suffix-match k=3 (offset 1), mass 0.91 vs chance 0.08,
// p_adj 0.002"; d = 1 is "previous-token", d = 0 "current-token", d ≥ 2
// "relative-position".
func (s Score) String() string {
	tail := fmt.Sprintf("mass %.2f vs chance %.2f, p_adj %s", s.Mass, s.Chance, PValue(s.PAdj))
	switch s.Kind {
	case SuffixMatch:
		return fmt.Sprintf("suffix-match k=%d (offset %d), %s", s.K, s.Offset, tail)
	case Relative:
		name := "relative-position"
		switch s.D {
		case 0:
			name = "current-token"
		case 1:
			name = "previous-token"
		}
		return fmt.Sprintf("%s d=%d, %s", name, s.D, tail)
	}
	return fmt.Sprintf("%s, %s", s.Kind, tail)
}

// HeadScore are the scores of one head and its label.
type HeadScore struct {
	// Layer and Head are 1-based.
	Layer int `json:"layer"`
	Head  int `json:"head"`
	// Suffix holds the suffix-match scores, index 2k+offset for k =
	// 0..maxK and offset 0, 1.
	Suffix []Score `json:"suffix"`
	// Relative holds the relative-position scores, index d = 0..maxK.
	Relative []Score `json:"relative"`
	// Best is the hypothesis of the label, or the one with the largest
	// lift when none is significant.
	Best Score `json:"best"`
	// Labelled is whether Best is significant (Score.Significant with the
	// options' Alpha and MinLift).
	Labelled bool `json:"labelled"`
	// Label describes the head: Best.String(), or "unlabelled (best: …)"
	// when no hypothesis is significant.
	Label string `json:"label"`
}

// SuffixScore returns the suffix-match score for (k, offset), or false if
// k is outside the scored range.
func (h HeadScore) SuffixScore(k, offset int) (Score, bool) {
	i := 2*k + offset
	if k < 0 || offset < 0 || offset > 1 || i >= len(h.Suffix) {
		return Score{}, false
	}
	return h.Suffix[i], true
}

// NullOptions configures the null test of ScoreWindows. Zero fields take
// the defaults.
type NullOptions struct {
	// Perms is the number of random window permutations of the suffix
	// test; default max(999, ⌈20·m/Alpha⌉) for m tests, so that the
	// smallest attainable corrected p-value is Alpha/20.
	Perms int
	// Seed seeds the permutations: the scores are a deterministic
	// function of the inputs and Seed.
	Seed uint64
	// Alpha is the family-wise level (default Alpha).
	Alpha float64
	// MinLift is the least lift that labels a head (default MinLift;
	// negative means 0).
	MinLift float64
	// Workers score heads in parallel (0: GOMAXPROCS); the scores do not
	// depend on it.
	Workers int
}

func (o NullOptions) withDefaults(tests int) NullOptions {
	if o.Alpha <= 0 {
		o.Alpha = Alpha
	}
	if o.MinLift == 0 {
		o.MinLift = MinLift
	} else if o.MinLift < 0 {
		o.MinLift = 0
	}
	if o.Perms <= 0 {
		o.Perms = max(999, int(math.Ceil(20*float64(tests)/o.Alpha)))
	}
	return o
}

// ScoreHeads scores the heads of one window x (maps[l][h] a
// len(x)×len(x) attention matrix, as returned by
// transformer.Model.AttentionMaps); it is ScoreWindows with that single
// window. With one window the suffix-match hypotheses cannot be tested
// (there is no other window to pair the attention with), so their P is 1
// and only relative positions can label a head: use ScoreWindows with
// many windows to label suffix-match heads.
func ScoreHeads(x []byte, maps [][][]float32, maxK int) []HeadScore {
	s, err := ScoreWindows([][]byte{x}, func(int) ([][][]float32, error) { return maps, nil }, maxK, NullOptions{})
	if err != nil {
		panic(err)
	}
	return s
}

// ScoreWindows scores every head of a model on W windows xs (all of the
// same length T; mapsOf(w) returns window w's attention maps, maps[l][h]
// a T×T row-major matrix whose row i is the query position) against the
// suffix-match hypotheses k = 0..maxK, offsets 0 and 1, and the
// relative-position hypotheses d = 0..maxK (use maxK = D+1 for a source
// of depth D), each with its chance mass and p-value under the null
// hypotheses described at Score. Queries are the positions i ≥ maxK (all
// positions when T ≤ maxK); a query whose S_i is empty does not count for
// that hypothesis. mapsOf is called once per window, in order, so the
// maps of all windows need not be held at once.
//
// Multiple testing: the p-values are Bonferroni-corrected over all heads ×
// the 3·maxK+1 tested hypotheses per head (PAdj = min(1, m·P)). A head is
// labelled only by a significant hypothesis (Score.Significant): the most
// specific significant suffix match (the largest k ≥ 1, with its better
// offset, whose lift reaches Specific times the best significant
// suffix-match lift) unless a significant relative position has a larger
// lift; otherwise it is "unlabelled". k = 0 is scored but never tested.
// The result depends only on the inputs and opt.Seed.
func ScoreWindows(xs [][]byte, mapsOf func(w int) ([][][]float32, error), maxK int, opt NullOptions) ([]HeadScore, error) {
	W := len(xs)
	if W == 0 {
		return nil, fmt.Errorf("attnmap: no windows")
	}
	if maxK < 0 {
		return nil, fmt.Errorf("attnmap: maxK %d < 0", maxK)
	}
	T := len(xs[0])
	for w, x := range xs {
		if len(x) != T {
			return nil, fmt.Errorf("attnmap: window %d has %d symbols, window 0 %d", w, len(x), T)
		}
	}
	ms := newMatchSets(xs, maxK)
	var heads []*headAcc
	for w := range W {
		maps, err := mapsOf(w)
		if err != nil {
			return nil, err
		}
		var jobs [][]float32 // jobs[n]: head n's map in this window
		if heads, jobs, err = ms.windowHeads(w, maps, heads); err != nil {
			return nil, err
		}
		// each head's accumulator is written by one worker only
		parallel.For(len(jobs), opt.Workers, func(n int) { heads[n].add(ms, w, jobs[n]) })
	}
	tests := len(heads) * (2*maxK + maxK + 1)
	opt = opt.withDefaults(tests)

	out := make([]HeadScore, len(heads))
	for n, acc := range heads {
		out[n] = HeadScore{Layer: acc.layer, Head: acc.head, Suffix: acc.suffixScores(ms), Relative: acc.relativeScores(ms)}
	}
	if W > 1 {
		ms.permutationTest(heads, out, opt)
	}
	for n := range out {
		out[n].conclude(tests, opt)
	}
	return out, nil
}

// matchSets are the suffix-match sets of W windows of T symbols for the
// hypotheses hyp = 2k + offset (k = 0..maxK, offset 0 or 1), at the query
// positions q0..T−1 (q0 = maxK, or 0 when T ≤ maxK).
type matchSets struct {
	W, T, maxK, q0 int
	nh             int         // the number of suffix hypotheses, 2(maxK+1)
	sets           [][][][]int // sets[w][hyp][i]: window w's S_i
	queries        [][]int     // queries[w][hyp]: the queries of window w with a non-empty S_i
}

// newMatchSets computes the match sets of every window, hypothesis and
// query (SuffixMatches).
func newMatchSets(xs [][]byte, maxK int) *matchSets {
	W, T := len(xs), len(xs[0])
	ms := &matchSets{W: W, T: T, maxK: maxK, q0: maxK, nh: 2 * (maxK + 1)}
	if ms.q0 >= T {
		ms.q0 = 0
	}
	ms.sets = make([][][][]int, W)
	ms.queries = make([][]int, W)
	for w, x := range xs {
		ms.sets[w] = make([][][]int, ms.nh)
		ms.queries[w] = make([]int, ms.nh)
		for k := 0; k <= maxK; k++ {
			for off := 0; off <= 1; off++ {
				ss := make([][]int, T)
				for i := ms.q0; i < T; i++ {
					ss[i] = SuffixMatches(x, i, k, off)
					if len(ss[i]) > 0 {
						ms.queries[w][2*k+off]++
					}
				}
				ms.sets[w][2*k+off] = ss
			}
		}
	}
	return ms
}

// headAcc accumulates one head's attention over the windows.
type headAcc struct {
	layer, head int         // 1-based
	cross       [][]float64 // cross[hyp][w*W+w']: mass of w's attention on w''s sets
	uniform     []float64   // uniform[hyp]: Σ |S_i|/(i+1) over windows
	mean        []float64   // ā, the attention averaged over windows
}

// windowHeads checks window w's maps (maps[l][h], T×T each) and returns
// them in order, one per head; window 0 creates the heads' accumulators,
// and every later window must have the same heads.
func (ms *matchSets) windowHeads(w int, maps [][][]float32, heads []*headAcc) ([]*headAcc, [][]float32, error) {
	T := ms.T
	n := 0
	var jobs [][]float32
	for l, hs := range maps {
		for h, a := range hs {
			if len(a) != T*T {
				return nil, nil, fmt.Errorf("attnmap: window %d layer %d head %d map has %d entries, want %d×%d", w, l+1, h+1, len(a), T, T)
			}
			if w == 0 {
				acc := &headAcc{layer: l + 1, head: h + 1, cross: make([][]float64, ms.nh), uniform: make([]float64, ms.nh), mean: make([]float64, T*T)}
				for i := range acc.cross {
					acc.cross[i] = make([]float64, ms.W*ms.W)
				}
				heads = append(heads, acc)
			} else if n >= len(heads) || heads[n].layer != l+1 || heads[n].head != h+1 {
				return nil, nil, fmt.Errorf("attnmap: window %d has a different set of heads than window 0", w)
			}
			jobs = append(jobs, a)
			n++
		}
	}
	if n != len(heads) {
		return nil, nil, fmt.Errorf("attnmap: window %d has a different set of heads than window 0", w)
	}
	return heads, jobs, nil
}

// add accumulates the head's map a in window w: a/W into ā, and for every
// suffix hypothesis the mass Σ_{i ≥ q0} Σ_{j ∈ S_i(w')} a_ij that w's
// attention puts on the sets of every window w' (only w' = w for k = 0,
// which is not tested), and Σ_i |S_i(w)|/(i+1), uniform attention's mass.
func (acc *headAcc) add(ms *matchSets, w int, a []float32) {
	W, T, q0 := ms.W, ms.T, ms.q0
	for i, v := range a {
		acc.mean[i] += float64(v) / float64(W)
	}
	for hyp := range ms.nh {
		for w2 := range W {
			if hyp < 2 && w2 != w {
				continue // k = 0 selects every earlier position: untested
			}
			m := 0.0
			for i := q0; i < T; i++ {
				row := a[i*T : i*T+T]
				for _, j := range ms.sets[w2][hyp][i] {
					m += float64(row[j])
				}
				if w2 == w {
					acc.uniform[hyp] += float64(len(ms.sets[w][hyp][i])) / float64(i+1)
				}
			}
			acc.cross[hyp][w*W+w2] = m
		}
	}
}

// suffixScores are the head's suffix-match scores, k = 0..maxK and
// offsets 0, 1 in order, before the permutation test (P = 1): Mass the
// mean over the queries of the mass on the window's own sets, Chance the
// mean over all pairings of windows (Score), Uniform uniform attention's;
// for k = 0 Chance is Uniform (every earlier position).
func (acc *headAcc) suffixScores(ms *matchSets) []Score {
	W := ms.W
	var out []Score
	for k := 0; k <= ms.maxK; k++ {
		for off := 0; off <= 1; off++ {
			hyp := 2*k + off
			s := Score{Kind: SuffixMatch, K: k, Offset: off, P: 1}
			for w := range W {
				s.Queries += ms.queries[w][hyp]
			}
			if s.Queries > 0 {
				obs, all := 0.0, 0.0
				for w := range W {
					obs += acc.cross[hyp][w*W+w]
					for w2 := range W {
						all += acc.cross[hyp][w*W+w2]
					}
				}
				q := float64(s.Queries)
				s.Mass, s.Uniform = obs/q, acc.uniform[hyp]/q
				s.Chance = all / float64(W) / q
				if k == 0 {
					s.Chance = s.Uniform // untested: every earlier position
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// relativeScores are the head's relative-position scores d = 0..maxK on
// the mean attention ā over the rows i ≥ max(q0, d): Mass the mean of
// ā_{i,i−d}, Chance that of Σ_{j≤i} ā_ij/(i+1), Uniform that of 1/(i+1),
// and P Hoeffding's bound exp(−2t²/Σ_i (max_j ā_ij − min_j ā_ij)²) for
// the excess t of Σ_i ā_{i,i−d} over its null mean (1 when t ≤ 0).
func (acc *headAcc) relativeScores(ms *matchSets) []Score {
	T := ms.T
	var out []Score
	for d := 0; d <= ms.maxK; d++ {
		s := Score{Kind: Relative, D: d, P: 1}
		obs, null, r2 := 0.0, 0.0, 0.0
		for i := max(ms.q0, d); i < T; i++ {
			row := acc.mean[i*T : i*T+i+1]
			lo, hi, sum := row[0], row[0], 0.0
			for _, v := range row {
				lo, hi, sum = min(lo, v), max(hi, v), sum+v
			}
			obs += row[i-d]
			null += sum / float64(i+1)
			r2 += (hi - lo) * (hi - lo)
			s.Uniform += 1 / float64(i+1)
			s.Queries++
		}
		if s.Queries > 0 {
			rows := float64(s.Queries)
			s.Mass, s.Chance, s.Uniform = obs/rows, null/rows, s.Uniform/rows
			if t := obs - null; t > 1e-9*rows {
				s.P = 0
				if r2 > 0 {
					s.P = math.Exp(-2 * t * t / r2)
				}
			}
			s.Queries *= ms.W
		}
		out = append(out, s)
	}
	return out
}

// permutationTest sets the p-values of the tested suffix matches (k ≥ 1)
// of out: (1 + #{permutations π with Σ_w mass(w on π(w)) ≥ the observed
// Σ_w mass(w on w)})/(1 + opt.Perms). The permutations are drawn from one
// stream seeded by opt.Seed and shared by every head and hypothesis, a
// block at a time; the heads of a block are counted in parallel.
func (ms *matchSets) permutationTest(heads []*headAcc, out []HeadScore, opt NullOptions) {
	W, nh := ms.W, ms.nh
	exceed := make([][]int, len(heads))
	obs := make([][]float64, len(heads))
	for n, acc := range heads {
		exceed[n] = make([]int, nh)
		obs[n] = make([]float64, nh)
		for hyp := 2; hyp < nh; hyp++ {
			for w := range W {
				obs[n][hyp] += acc.cross[hyp][w*W+w]
			}
		}
	}
	r := rand.New(rand.NewPCG(opt.Seed, 0x6174746e6d6170))
	const block = 256
	perms := make([][]int, block)
	for i := range perms {
		perms[i] = make([]int, W)
	}
	for p0 := 0; p0 < opt.Perms; p0 += block {
		nb := min(block, opt.Perms-p0)
		for _, perm := range perms[:nb] {
			for i := range perm {
				perm[i] = i
			}
			r.Shuffle(W, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		}
		parallel.For(len(heads), opt.Workers, func(n int) {
			acc := heads[n]
			for _, perm := range perms[:nb] {
				for hyp := 2; hyp < nh; hyp++ {
					c := acc.cross[hyp]
					v := 0.0
					for w, w2 := range perm {
						v += c[w*W+w2]
					}
					if v >= obs[n][hyp]-1e-9*(1+math.Abs(obs[n][hyp])) {
						exceed[n][hyp]++
					}
				}
			}
		})
	}
	for n := range heads {
		for hyp := 2; hyp < nh; hyp++ {
			if out[n].Suffix[hyp].Queries > 0 {
				out[n].Suffix[hyp].P = float64(1+exceed[n][hyp]) / float64(1+opt.Perms)
			}
		}
	}
}

// conclude Bonferroni-corrects the head's p-values over tests
// (PAdj = min(1, tests·P)) and labels it (label, Label).
func (hs *HeadScore) conclude(tests int, opt NullOptions) {
	for i := range hs.Suffix {
		hs.Suffix[i].PAdj = min(1, hs.Suffix[i].P*float64(tests))
	}
	for i := range hs.Relative {
		hs.Relative[i].PAdj = min(1, hs.Relative[i].P*float64(tests))
	}
	hs.Best, hs.Labelled = label(*hs, opt.Alpha, opt.MinLift)
	if hs.Labelled {
		hs.Label = hs.Best.String()
	} else {
		hs.Label = "unlabelled (best: " + hs.Best.String() + ")"
	}
}

// label picks a head's describing hypothesis (see ScoreWindows): the
// significant one, or else the hypothesis with the largest lift.
func label(h HeadScore, alpha, minLift float64) (Score, bool) {
	var rel, any Score
	relOK, anyOK := false, false
	consider := func(s Score) {
		if s.Queries > 0 && (!anyOK || s.Lift() > any.Lift()) {
			any, anyOK = s, true
		}
	}
	for _, s := range h.Relative {
		consider(s)
		if s.Significant(alpha, minLift) && (!relOK || s.Lift() > rel.Lift()) {
			rel, relOK = s, true
		}
	}
	// the better (larger-lift) significant offset of each k ≥ 1
	var sufs []Score
	top := 0.0
	for k := 1; 2*k+1 < len(h.Suffix); k++ {
		consider(h.Suffix[2*k])
		consider(h.Suffix[2*k+1])
		var s Score
		ok := false
		for _, c := range h.Suffix[2*k : 2*k+2] {
			if c.Significant(alpha, minLift) && (!ok || c.Lift() > s.Lift()) {
				s, ok = c, true
			}
		}
		if ok {
			sufs = append(sufs, s)
			top = max(top, s.Lift())
		}
	}
	var suf Score
	for _, s := range sufs {
		if s.Lift() >= Specific*top {
			suf = s
		}
	}
	switch {
	case len(sufs) > 0 && (!relOK || top >= rel.Lift()):
		return suf, true
	case relOK:
		return rel, true
	}
	return any, false
}

// SuffixPanel picks the head and offset of a suffix-match panel (the
// bottom of the paper's Fig. 5) for suffix length k: the (head, offset)
// with the largest lift (Score.Lift, mass above the null's chance mass),
// among the heads of layer.head when layer > 0 (head 1-based) and the
// offset given when offset is 0 or 1 (−1: either). It returns the index
// into scores, the offset, and false when nothing qualifies. Both `vomc
// attention` and `vomc reproduce` use it, so they draw the same head.
func SuffixPanel(scores []HeadScore, k, offset, layer, head int) (int, int, bool) {
	sel, off, best := -1, 0, math.Inf(-1)
	for i, s := range scores {
		if layer > 0 && (s.Layer != layer || s.Head != head) {
			continue
		}
		for o := 0; o <= 1; o++ {
			if offset >= 0 && o != offset {
				continue
			}
			if sc, ok := s.SuffixScore(k, o); ok && sc.Queries > 0 && sc.Lift() > best {
				sel, off, best = i, o, sc.Lift()
			}
		}
	}
	return sel, off, sel >= 0
}
