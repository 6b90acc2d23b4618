package reproduce

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/pipeline"
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

// fig5Stage draws the attention maps of cfg.HeatmapModel (replicate 0)
// and scores its heads (Fig. 5); ok is false when no heatmap_model is
// configured.
func fig5Stage(cfg Config) (pipeline.Stage, bool, error) {
	if cfg.HeatmapModel == "" {
		return pipeline.Stage{}, false, nil
	}
	m, err := ParseModel(cfg.HeatmapModel)
	if err != nil {
		return pipeline.Stage{}, false, fmt.Errorf("reproduce: heatmap_model: %w", err)
	}
	return pipeline.Stage{
		Name: StageFig5,
		Inputs: map[string]any{"model": m.Spec, "k": cfg.HeatmapSuffix, "maxK": cfg.MaxDepth() + 1, "null": fmt.Sprintf("windows=%d seed=%d", fig5Windows, cfg.Seed),
			"profile_windows": fig5ProfileWindows},
		Deps: []string{StageTestData, trainStageName(m, 0)},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
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
				ss, _ := s.SuffixScore(cfg.HeatmapSuffix, off)
				info.Layer, info.Head, info.Offset, info.Mass, info.Chance = s.Layer, s.Head, off, ss.Mass, ss.Chance
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
	}, true, nil
}

// fig5ProfileWindows is the number of test windows of the Fig. 5
// per-position profile.
const fig5ProfileWindows = 200

// fig5Windows is the number of test windows of the Fig. 5 null test.
const fig5Windows = 16
