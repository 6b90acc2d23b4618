package reproduce

import (
	"context"
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
func fig5Stage(cfg Config, opts Options) (pipeline.Stage, bool, error) {
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
			model, err := transformer.LoadSafetensorsOn(opts.backend(), filepath.Join(sc.Deps[trainStageName(m, 0)].Dir, modelFile))
			if err != nil {
				return nil, err
			}
			xs := make([][]byte, min(fig5Windows, test.Windows()))
			for w := range xs {
				xs[w] = test.Window(w)
			}
			pxs := make([][]byte, min(fig5ProfileWindows, test.Windows()))
			for w := range pxs {
				pxs[w] = test.Window(w)
			}
			T := len(xs[0])
			r, err := attnmap.RunStudy(attnmap.Study{Model: model, Windows: xs, MaxK: cfg.MaxDepth() + 1, Null: attnmap.NullOptions{Seed: cfg.Seed},
				K: cfg.HeatmapSuffix, Offset: -1,
				Heatmaps:       []string{filepath.Join(sc.Dir, Fig5HeatmapFile)},
				HeatmapOptions: attnmap.Options{Title: fmt.Sprintf("Attention maps of %s on test window 0 (N=%d)", m.Label(), T)},
				SuffixMatch:    []string{filepath.Join(sc.Dir, Fig5SuffixFile)},
				// Every head by query position: does it do its job over
				// the whole window?
				ProfileWindows: pxs, ProfileFigure: filepath.Join(sc.Dir, Fig5ProfileFile),
				ProfileTitle: fmt.Sprintf("%s: each labelled head's mass on its label's positions, by position (%d test windows)", m.Label(), len(pxs))})
			if err != nil {
				return nil, err
			}
			info := Fig5Info{Model: m.Label(), Scores: r.Scores, Windows: len(xs), K: cfg.HeatmapSuffix,
				ProfileWindows: len(pxs), Drops: r.Drops}
			if r.Suffix {
				f := r.Figure
				info.Layer, info.Head, info.Offset, info.Mass, info.Chance = f.Layer, f.Head, f.Offset, f.Score.Mass, f.Score.Chance
				for _, q := range f.Queries {
					info.Queries = append(info.Queries, q.Position)
				}
			}
			outs := []string{Fig5HeatmapFile, fig5JSON}
			if r.SuffixDrawn {
				outs = append(outs, Fig5SuffixFile)
			}
			if r.ProfileDrawn {
				outs = append(outs, Fig5ProfileFile)
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
