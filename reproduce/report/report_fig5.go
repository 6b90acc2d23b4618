package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// fig5Section is the report's Fig. 5 finding and images. Its checks ask
// what the paper's Fig. 5 shows: a layer-1 head at a fixed offset d ≥ 1,
// a head above layer 1 that matches suffixes of length k ≥ 2 (a k = 1
// "suffix" head is what a bigram model has), in a model of two or more
// layers that tracks the reference (better than the best fixed order,
// chosen on validation windows). Heads count when labelled by attnmap's
// null test (Bonferroni-corrected p_adj < attnmap.Alpha, mass ≥ chance +
// attnmap.MinLift).
func fig5Section(cfg study.Config, mg *results.Merged, deps map[string]*pipeline.Done) (Finding, []string, string) {
	f := Finding{Claim: "Two attention patterns emerge. Position-only heads, usually in the first or second layer, show off-diagonal stripes a few positions below the diagonal: " +
		"they copy the preceding symbols (the suffix) into the current position. Content-dependent heads in layer two or above show spotty patterns: " +
		"for a query they attend exactly the earlier positions that match its length-3 suffix, i.e. they collect the statistics of that suffix."}
	d, ok := deps[results.StageFig5]
	if !ok {
		return f, nil, "Not produced: no heatmap_model is configured."
	}
	var info results.Fig5Info
	if err := results.ReadJSON(d.Dir, results.Fig5JSON, &info); err != nil {
		return f, nil, "Fig. 5 record unreadable: " + err.Error()
	}
	files := []string{filepath.Join(d.Dir, results.Fig5HeatmapFile)}
	var rel, suf []string
	for _, s := range info.Scores {
		name := fmt.Sprintf("layer %d head %d", s.Layer, s.Head)
		switch {
		case !s.Labelled:
		case s.Best.Kind == attnmap.Relative && s.Best.D >= 1:
			rel = append(rel, fmt.Sprintf("%s (d=%d, mass %.2f vs chance %.2f, p_adj %s)", name, s.Best.D, s.Best.Mass, s.Best.Chance, attnmap.PValue(s.Best.PAdj)))
		case s.Best.Kind == attnmap.SuffixMatch && s.Best.K >= 1:
			suf = append(suf, fmt.Sprintf("%s (k=%d, offset %d, mass %.2f vs chance %.2f, p_adj %s)", name, s.Best.K, s.Best.Offset, s.Best.Mass, s.Best.Chance, attnmap.PValue(s.Best.PAdj)))
		}
	}
	f.Found = fmt.Sprintf("In %s, scored on %d test windows with a null test per head and hypothesis (suffix matches: the attention paired with other windows' symbols, %s; relative positions: no preference among keys, Hoeffding bound; p-values Bonferroni-corrected over heads × hypotheses, a label needs p_adj < %.2g and mass ≥ chance + %.2g), %d of %d heads are relative-position heads",
		info.Model, info.Windows, "random window permutations", attnmap.Alpha, attnmap.MinLift, len(rel), len(info.Scores))
	if len(rel) > 0 {
		f.Found += ": " + strings.Join(rel, ", ")
	}
	f.Found += fmt.Sprintf("; %d are suffix-match heads", len(suf))
	if len(suf) > 0 {
		f.Found += ": " + strings.Join(suf, ", ")
	}
	f.Found += "."
	if info.Layer > 0 {
		f.Found += fmt.Sprintf(" The suffix panel (test window 0) shows layer %d head %d, the head whose attention mass on the positions matching the query's length-%d suffix (offset %d) most exceeds chance (attnmap.SuffixPanel, as in vomc attention): %.2f vs %.2f.",
			info.Layer, info.Head, info.K, info.Offset, info.Mass, info.Chance)
		if len(info.Queries) > 0 {
			files = append(files, filepath.Join(d.Dir, results.Fig5SuffixFile))
		}
	}
	if info.ProfileWindows > 0 {
		if len(info.Drops) == 0 {
			f.Found += fmt.Sprintf(" By query position (%d test windows; the last figure), every labelled head keeps at least half of its best mass on its label's positions in every eighth of the window.", info.ProfileWindows)
		} else {
			var ds []string
			for _, d := range info.Drops {
				ds = append(ds, fmt.Sprintf("layer %d head %d (%s) %.2f at positions %d–%d vs %.2f in its best eighth", d.Layer, d.Head, labelShort(d.Label), d.Worst, d.WorstFrom, d.WorstTo, d.Best))
			}
			f.Found += fmt.Sprintf(" By query position (%d test windows; the last figure), some labelled heads fail in part of the window (mass on the label's positions below half of their best eighth): %s. Where such a head fails, the model loses what it provides (e.g. the copied previous symbols), which shows as excess loss at those positions.", info.ProfileWindows, strings.Join(ds, "; "))
		}
	}
	if slices.Contains(d.Outputs, results.Fig5ProfileFile) {
		files = append(files, filepath.Join(d.Dir, results.Fig5ProfileFile))
	}
	fig5Checks(&f, info, cfg, mg)
	return f, files, ""
}

// labelShort names a hypothesis briefly: "d=1" or "k=3, offset 1".
func labelShort(s attnmap.Score) string {
	if s.Kind == attnmap.SuffixMatch {
		return fmt.Sprintf("k=%d, offset %d", s.K, s.Offset)
	}
	return fmt.Sprintf("d=%d", s.D)
}

// fig5Checks adds Fig. 5's checks (see fig5Section) to f and settles it.
func fig5Checks(f *Finding, info results.Fig5Info, cfg study.Config, mg *results.Merged) {
	var offset, suffix []string
	for _, s := range info.Scores {
		if !s.Labelled {
			continue
		}
		name := fmt.Sprintf("layer %d head %d", s.Layer, s.Head)
		switch {
		case s.Layer == 1 && s.Best.Kind == attnmap.Relative && s.Best.D >= 1:
			offset = append(offset, fmt.Sprintf("%s (d=%d, p_adj %s)", name, s.Best.D, attnmap.PValue(s.Best.PAdj)))
		case s.Layer >= 2 && s.Best.Kind == attnmap.SuffixMatch && s.Best.K >= 2:
			suffix = append(suffix, fmt.Sprintf("%s (k=%d, p_adj %s)", name, s.Best.K, attnmap.PValue(s.Best.PAdj)))
		}
	}
	found := func(xs []string, none string) (verdict, string) {
		if len(xs) == 0 {
			return fails, none
		}
		return holds, strings.Join(xs, ", ")
	}
	v, n := found(offset, "no labelled layer-1 head at a fixed offset d ≥ 1")
	f.check("A layer-1 head attends a fixed earlier position (offset d ≥ 1): it copies a preceding symbol.", v, n)
	v, n = found(suffix, "no labelled head above layer 1 matching suffixes of length k ≥ 2")
	f.check("A head above layer 1 attends the positions whose length-k suffix (k ≥ 2) matches the query's: it collects a suffix's statistics.", v, n)
	m, err := study.ParseModel(cfg.HeatmapModel)
	layers := len(m.Heads)
	switch {
	case err != nil:
	case layers < 2:
		f.check("The model shown has two or more layers.", fails, fmt.Sprintf("%s has %d layer", m.Label(), layers))
	default:
		r, best := mg.Res.Method(m.Label()), results.SelectedFixedOrder(mg)
		switch {
		case r != nil && best != nil:
			f.test(fmt.Sprintf("The model shown, %s, tracks %s better than the best fixed-order estimator, %s.", r.Name, results.RefShort(mg.Res), best.Name), worse(best, r))
		case r != nil && len(results.MethodNames(mg.Res, "Markov")) > 0:
			f.check(fmt.Sprintf("The model shown, %s, tracks %s better than the best fixed-order estimator.", r.Name, results.RefShort(mg.Res)), undecided, noSelection)
		}
	}
	f.settleChecked()
	tracks := false
	for _, c := range f.Checks {
		tracks = tracks || strings.Contains(c.Claim, "tracks") && c.Verdict == holds.String()
	}
	switch {
	case f.Agrees && tracks:
		f.Found += " Both patterns of the paper are present, in a model that tracks the reference."
	case f.Agrees:
		f.Found += " Both patterns of the paper are present (whether the model tracks the reference was not tested: no fixed-order estimators were evaluated)."
	default:
		f.Found += " This differs from the paper in the checks that do not hold below."
	}
}
