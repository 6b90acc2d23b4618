package reproduce

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/transformer"
)

// Files of the Fig. 5 stage.
const (
	Fig5HeatmapFile = "fig5_heatmaps.png"
	Fig5SuffixFile  = "fig5_suffix_match.png"
	Fig5ProfileFile = "fig5_profile.png"
	fig5JSON        = "fig5.json"
)

// Fig5Info is what the Fig. 5 stage records: every head's scores and the
// head and queries of the suffix-match panel.
type Fig5Info struct {
	Model  string
	Scores []attnmap.HeadScore
	// Windows is the number of test windows of the null test
	// (attnmap.ScoreWindows); the figures show window 0.
	Windows int
	Layer   int // 1-based, of the suffix-match panel
	Head    int
	K       int
	Offset  int
	Mass    float64
	Chance  float64
	Queries []int
	// ProfileWindows is the number of test windows of the per-position
	// profile (attnmap.PositionProfile); Drops are the labelled heads
	// whose label mass falls below half its best in one eighth of the
	// window (attnmap.Profile.Drops).
	ProfileWindows int
	Drops          []attnmap.Drop
}

func fig5Stage(cfg Config) (Stage, bool) {
	if cfg.HeatmapModel == "" {
		return Stage{}, false
	}
	m, err := ParseModel(cfg.HeatmapModel)
	if err != nil {
		return Stage{}, false
	}
	return Stage{
		Name: StageFig5,
		Inputs: map[string]any{"model": m.Spec, "k": cfg.HeatmapSuffix, "maxK": cfg.MaxDepth() + 1, "null": fmt.Sprintf("windows=%d seed=%d", fig5Windows, cfg.Seed),
			"profile_windows": fig5ProfileWindows},
		Deps: []string{StageTestData, trainStageName(m, 0)},
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensors(filepath.Join(sc.Deps[trainStageName(m, 0)].Dir, modelFile))
			if err != nil {
				return nil, err
			}
			xs := make([][]byte, min(fig5Windows, test.Windows()))
			for w := range xs {
				xs[w] = test.Window(w)
			}
			x := xs[0]
			an, err := attnmap.Analyze(model, xs, cfg.MaxDepth()+1, attnmap.NullOptions{Seed: cfg.Seed})
			if err != nil {
				return nil, err
			}
			scores, maps := an.Scores, an.Maps
			info := Fig5Info{Model: m.Label(), Scores: scores, Windows: len(xs), K: cfg.HeatmapSuffix}
			if i, off, ok := attnmap.SuffixPanel(scores, cfg.HeatmapSuffix, -1, 0, 0); ok {
				s := scores[i]
				sc, _ := s.SuffixScore(cfg.HeatmapSuffix, off)
				info.Layer, info.Head, info.Offset, info.Mass, info.Chance = s.Layer, s.Head, off, sc.Mass, sc.Chance
			}
			title := fmt.Sprintf("Attention maps of %s on test window 0 (N=%d)", m.Label(), len(x))
			if err := attnmap.Heatmaps(filepath.Join(sc.Dir, Fig5HeatmapFile), maps, attnmap.Options{Title: title, Labels: an.Labels()}); err != nil {
				return nil, err
			}
			outs := []string{Fig5HeatmapFile, fig5JSON}
			if info.Layer > 0 {
				// Two queries late in the window that have matches.
				for q := len(x) * 7 / 10; q < len(x) && len(info.Queries) < 2; q++ {
					if len(attnmap.SuffixMatches(x, q, info.K, info.Offset)) >= 2 && (len(info.Queries) == 0 || q >= info.Queries[0]+len(x)/20) {
						info.Queries = append(info.Queries, q)
					}
				}
				if len(info.Queries) > 0 {
					att := maps[info.Layer-1][info.Head-1]
					if err := attnmap.SuffixMatchFigure(filepath.Join(sc.Dir, Fig5SuffixFile), x, att, len(x), info.Queries, info.K, info.Offset); err != nil {
						return nil, err
					}
					outs = append(outs, Fig5SuffixFile)
				}
			}
			// Every head by query position: does it do its job over the
			// whole window?
			pxs := make([][]byte, min(fig5ProfileWindows, test.Windows()))
			for w := range pxs {
				pxs[w] = test.Window(w)
			}
			pr, err := attnmap.PositionProfile(pxs, func(w int) ([][][]float32, error) { return model.AttentionMaps(pxs[w]) }, cfg.MaxDepth()+1)
			if err != nil {
				return nil, err
			}
			info.ProfileWindows = len(pxs)
			info.Drops = pr.Drops(scores, 8)
			ptitle := fmt.Sprintf("%s: each labelled head's mass on its label's positions, by position (%d test windows)", m.Label(), len(pxs))
			switch err := attnmap.ProfileFigure(filepath.Join(sc.Dir, Fig5ProfileFile), pr, scores, max(1, len(x)/50), ptitle); {
			case err == nil:
				outs = append(outs, Fig5ProfileFile)
			case !errors.Is(err, attnmap.ErrNoLabelled):
				return nil, err
			}
			return outs, writeJSON(sc.Dir, fig5JSON, info)
		},
	}, true
}

// fig5ProfileWindows is the number of test windows of the Fig. 5
// per-position profile.
const fig5ProfileWindows = 200

// fig5Windows is the number of test windows of the Fig. 5 null test.
const fig5Windows = 16

// fig5Section is the report's Fig. 5 finding and images.
func fig5Section(cfg Config, deps map[string]*Done) (Finding, []string, string) {
	f := Finding{Claim: "Two attention patterns emerge. Position-only heads, usually in the first or second layer, show off-diagonal stripes a few positions below the diagonal: " +
		"they copy the preceding symbols (the suffix) into the current position. Content-dependent heads in layer two or above show spotty patterns: " +
		"for a query they attend exactly the earlier positions that match its length-3 suffix, i.e. they collect the statistics of that suffix."}
	d, ok := deps[StageFig5]
	if !ok {
		return f, nil, "Not produced: no heatmap_model is configured."
	}
	var info Fig5Info
	if err := readJSON(d.Dir, fig5JSON, &info); err != nil {
		return f, nil, "Fig. 5 record unreadable: " + err.Error()
	}
	files := []string{filepath.Join(d.Dir, Fig5HeatmapFile)}
	var rel, suf []string
	for _, s := range info.Scores {
		name := fmt.Sprintf("layer %d head %d", s.Layer, s.Head)
		switch {
		case !s.Labelled:
		case s.Best.Kind == attnmap.Relative && s.Best.D >= 1:
			rel = append(rel, fmt.Sprintf("%s (d=%d, mass %.2f vs chance %.2f, p_adj %.2g)", name, s.Best.D, s.Best.Mass, s.Best.Chance, s.Best.PAdj))
		case s.Best.Kind == attnmap.SuffixMatch && s.Best.K >= 1:
			suf = append(suf, fmt.Sprintf("%s (k=%d, offset %d, mass %.2f vs chance %.2f, p_adj %.2g)", name, s.Best.K, s.Best.Offset, s.Best.Mass, s.Best.Chance, s.Best.PAdj))
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
			files = append(files, filepath.Join(d.Dir, Fig5SuffixFile))
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
	if slices.Contains(d.Outputs, Fig5ProfileFile) {
		files = append(files, filepath.Join(d.Dir, Fig5ProfileFile))
	}
	f.Agrees = len(rel) > 0 && len(suf) > 0
	if f.Agrees {
		f.Found += " Both patterns of the paper are present."
	} else {
		f.Found += " This differs from the paper: not both patterns (a relative-position head and a suffix-match head, each significant under the null test) were found in this model."
	}
	return f, files, ""
}

// labelShort names a hypothesis briefly: "d=1" or "k=3, offset 1".
func labelShort(s attnmap.Score) string {
	if s.Kind == attnmap.SuffixMatch {
		return fmt.Sprintf("k=%d, offset %d", s.K, s.Offset)
	}
	return fmt.Sprintf("d=%d", s.D)
}
