package attnmap

import (
	"fmt"
	"io"
	"strings"
)

// Report is what Run writes to ScoresJSON.
type Report struct {
	Model  string `json:"model"`
	Source string `json:"source"`
	// Window is the data set window (−1 with a file); Start the file
	// offset of the window (0 with a data set).
	Window int `json:"window"`
	Start  int `json:"start"`
	T      int `json:"T"`
	D      int `json:"D"`
	MaxK   int `json:"max_k"`
	// Windows are the windows of the null test (data set indices, or
	// file offsets); Perms its permutations (0: the default), Seed their
	// seed; Alpha the family-wise level (Bonferroni over heads ×
	// hypotheses) and MinLift the least mass above chance that labels a
	// head.
	Windows []int       `json:"windows"`
	Perms   int         `json:"perms"`
	Seed    uint64      `json:"seed"`
	Alpha   float64     `json:"alpha"`
	MinLift float64     `json:"min_lift"`
	Heads   []HeadScore `json:"heads"`
	Figure  Figure      `json:"suffix_match_figure"`
}

// WriteTable writes every head's label and masses to w: relative
// positions d = 0..MaxK, then suffix matches k = 1..MaxK for offsets 0
// and 1.
func (rep *Report) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d windows of T=%d from %s; mass averaged over queries i ≥ %d; labels need Bonferroni p_adj < %.2g (heads × hypotheses) and mass ≥ chance + %.2g\n\n",
		rep.Model, len(rep.Windows), rep.T, rep.Source, rep.MaxK, rep.Alpha, rep.MinLift)
	fmt.Fprintf(&b, "%-5s %-84s |", "head", "label")
	for d := 0; d <= rep.MaxK; d++ {
		fmt.Fprintf(&b, " d=%-3d", d)
	}
	for o := 0; o <= 1; o++ {
		b.WriteString(" |")
		for k := 1; k <= rep.MaxK; k++ {
			fmt.Fprintf(&b, " %-5s", fmt.Sprintf("k%d/%d", k, o))
		}
	}
	b.WriteString("\n")
	for _, s := range rep.Heads {
		fmt.Fprintf(&b, "%-5s %-84s |", fmt.Sprintf("%d.%d", s.Layer, s.Head), s.Label)
		for _, r := range s.Relative {
			fmt.Fprintf(&b, " %5.2f", r.Mass)
		}
		for o := 0; o <= 1; o++ {
			b.WriteString(" |")
			for k := 1; k <= rep.MaxK; k++ {
				sc, _ := s.SuffixScore(k, o)
				fmt.Fprintf(&b, " %5.2f", sc.Mass)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n(d=: mass on position i−d; kK/O: mass on the suffix matches of length K, offset O; chances and p-values in scores.json)\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteText writes r to w as 'vomc attention' prints it: the table of the
// heads (Report.WriteTable), the suffix-match figure's head and score, the
// files written and the labelled heads that fail in part of the window.
func (r *RunResult) WriteText(w io.Writer) error {
	if err := r.Report.WriteTable(w); err != nil {
		return err
	}
	var b strings.Builder
	fig := r.Report.Figure
	fmt.Fprintf(&b, "\nsuffix_match: layer %d head %d, k=%d offset %d: mean mass %.2f (chance %.2f, p_adj %s) over %d queries of %d windows\n",
		fig.Layer, fig.Head, fig.K, fig.Offset, fig.Score.Mass, fig.Score.Chance, PValue(fig.Score.PAdj), fig.Score.Queries, len(r.Report.Windows))
	fmt.Fprintf(&b, "wrote %s/{%s,%s,%s,%s,%s}\n", r.Out, HeatmapsPNG, HeatmapsSVG, SuffixMatchPNG, SuffixMatchSVG, ScoresJSON)
	if r.Profile != "" {
		if r.Study.ProfileDrawn {
			fmt.Fprintf(&b, "wrote %s and %s (%d windows)\n", r.Profile, r.ProfileFigure, r.ProfileWindows)
		} else {
			fmt.Fprintf(&b, "wrote %s (%d windows); no head is labelled, so %s was not drawn\n", r.Profile, r.ProfileWindows, r.ProfileFigure)
		}
		for _, d := range r.Study.Drops {
			fmt.Fprintf(&b, "head %d.%d (%s) fails in part of the window: mass %.2f at positions %d..%d, %.2f in its best eighth\n",
				d.Layer, d.Head, d.Label, d.Worst, d.WorstFrom, d.WorstTo, d.Best)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
