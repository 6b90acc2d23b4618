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
//     collection layer, Theorem 3, gathers exactly these counts).
//
// The paper's Fig. 5 draws "the positions in the data sequence that match
// their suffixes of length-3", which read literally is offset 0 (the
// positions ending with the same suffix); in a trained model, where an
// earlier layer has copied the preceding symbols into every position, a
// head can read either — the position ending with the suffix, or the one
// after it. Both are computed and the scores say which fits a head.
package attnmap

import (
	"fmt"
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

// Threshold is the mass from which a hypothesis labels a head
// (HeadScore.Label).
const Threshold = 0.5

// Specific is the share of the best suffix-match mass (over k ≥ 1) that a
// longer suffix must keep to label a head: the label's k is the largest
// with mass ≥ max(Threshold, Specific·best). (Shorter suffixes select
// supersets, so their mass never falls below that of longer ones by
// much.)
const Specific = 0.8

// Score is how well one hypothesis describes a head: the attention mass the
// head puts on the positions S_i the hypothesis selects, averaged over the
// query positions i that have a non-empty S_i.
type Score struct {
	// Kind is the hypothesis family.
	Kind Kind `json:"kind"`
	// K and Offset are the suffix length and offset (SuffixMatch).
	K      int `json:"k"`
	Offset int `json:"offset"`
	// D is the distance back (Relative).
	D int `json:"d"`
	// Mass is the mean over queries of Σ_{j∈S_i} a_ij.
	Mass float64 `json:"mass"`
	// Chance is the same mean for uniform causal attention, Σ |S_i|/(i+1)
	// averaged over the same queries: the mass of a head that ignores
	// content and position.
	Chance float64 `json:"chance"`
	// Queries is the number of query positions averaged over.
	Queries int `json:"queries"`
}

// String describes the hypothesis and its mass, e.g. "suffix-match k=3
// (offset 1), mass 0.91", "previous-token d=1, mass 0.97" (d = 0 is
// "current-token", d ≥ 2 "relative-position").
func (s Score) String() string {
	switch s.Kind {
	case SuffixMatch:
		return fmt.Sprintf("suffix-match k=%d (offset %d), mass %.2f", s.K, s.Offset, s.Mass)
	case Relative:
		name := "relative-position"
		switch s.D {
		case 0:
			name = "current-token"
		case 1:
			name = "previous-token"
		}
		return fmt.Sprintf("%s d=%d, mass %.2f", name, s.D, s.Mass)
	}
	return fmt.Sprintf("%s, mass %.2f", s.Kind, s.Mass)
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
	// Best is the hypothesis of the label.
	Best Score `json:"best"`
	// Label describes the head: Best.String(), or "diffuse (best: …)"
	// when no hypothesis reaches Threshold.
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

// ScoreHeads scores every head of maps (maps[l][h] a len(x)×len(x)
// attention matrix of the window x, as returned by
// transformer.Model.AttentionMaps) against the suffix-match hypotheses k =
// 0..maxK, offsets 0 and 1, and the relative-position hypotheses d =
// 0..maxK (use maxK = D+1 for a source of depth D). Queries are the
// positions i ≥ maxK (all positions when the window is shorter), so that
// every hypothesis is judged on queries with a full context; a query whose
// S_i is empty does not count for that hypothesis.
//
// The label is the most specific suffix match (the largest k ≥ 1, with its
// better offset, whose mass reaches Threshold and Specific times the best
// suffix-match mass) unless the best relative position has more mass than
// every suffix match; else the best relative position if it reaches
// Threshold; else "diffuse" with the better of the best relative position
// and the k = 1 suffix match. (k = 0, every earlier
// position, is scored but never labels a head.) ScoreHeads panics when a
// matrix is not len(x)×len(x) or maxK < 0.
func ScoreHeads(x []byte, maps [][][]float32, maxK int) []HeadScore {
	T := len(x)
	if maxK < 0 {
		panic(fmt.Sprintf("attnmap: ScoreHeads with maxK %d", maxK))
	}
	q0 := maxK
	if q0 >= T {
		q0 = 0
	}
	// the selected positions of every hypothesis and query
	suffix := make([][][]int, 2*(maxK+1))
	for k := 0; k <= maxK; k++ {
		for off := 0; off <= 1; off++ {
			sets := make([][]int, T)
			for i := q0; i < T; i++ {
				sets[i] = SuffixMatches(x, i, k, off)
			}
			suffix[2*k+off] = sets
		}
	}
	var out []HeadScore
	for l, heads := range maps {
		for h, a := range heads {
			if len(a) != T*T {
				panic(fmt.Sprintf("attnmap: layer %d head %d map has %d entries, want %d×%d", l+1, h+1, len(a), T, T))
			}
			hs := HeadScore{Layer: l + 1, Head: h + 1}
			for k := 0; k <= maxK; k++ {
				for off := 0; off <= 1; off++ {
					s := Score{Kind: SuffixMatch, K: k, Offset: off}
					for i := q0; i < T; i++ {
						set := suffix[2*k+off][i]
						if len(set) == 0 {
							continue
						}
						m := 0.0
						for _, j := range set {
							m += float64(a[i*T+j])
						}
						s.Mass += m
						s.Chance += float64(len(set)) / float64(i+1)
						s.Queries++
					}
					hs.Suffix = append(hs.Suffix, s.mean())
				}
			}
			for d := 0; d <= maxK; d++ {
				s := Score{Kind: Relative, D: d}
				for i := max(q0, d); i < T; i++ {
					s.Mass += float64(a[i*T+i-d])
					s.Chance += 1 / float64(i+1)
					s.Queries++
				}
				hs.Relative = append(hs.Relative, s.mean())
			}
			hs.Best, hs.Label = label(hs)
			out = append(out, hs)
		}
	}
	return out
}

// mean turns the sums into means over the queries.
func (s Score) mean() Score {
	if s.Queries > 0 {
		s.Mass /= float64(s.Queries)
		s.Chance /= float64(s.Queries)
	}
	return s
}

// label picks a head's describing hypothesis (see ScoreHeads).
func label(h HeadScore) (Score, string) {
	var rel Score
	for i, s := range h.Relative {
		if i == 0 || s.Mass > rel.Mass {
			rel = s
		}
	}
	// the better offset of each k ≥ 1
	var sufs []Score
	top := 0.0
	for k := 1; 2*k+1 < len(h.Suffix); k++ {
		s := h.Suffix[2*k]
		if o := h.Suffix[2*k+1]; o.Mass > s.Mass {
			s = o
		}
		sufs = append(sufs, s)
		top = max(top, s.Mass)
	}
	var suf Score
	found := false
	for _, s := range sufs {
		if s.Queries > 0 && s.Mass >= Threshold && s.Mass >= Specific*top {
			suf, found = s, true
		}
	}
	switch {
	case found && top >= rel.Mass:
		return suf, suf.String()
	case len(h.Relative) > 0 && rel.Mass >= Threshold:
		return rel, rel.String()
	}
	best := rel
	if len(sufs) > 0 && sufs[0].Mass > rel.Mass {
		best = sufs[0]
	}
	return best, "diffuse (best: " + best.String() + ")"
}
