package reproduce

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
)

// fig5Stage draws the attention maps of cfg.HeatmapModel (replicate 0)
// and scores its heads (Fig. 5); ok is false when no heatmap_model is
// configured.
func fig5Stage(cfg study.Config, opts Options) (pipeline.Stage, bool, error) {
	if cfg.HeatmapModel == "" {
		return pipeline.Stage{}, false, nil
	}
	m, err := study.ParseModel(cfg.HeatmapModel)
	if err != nil {
		return pipeline.Stage{}, false, fmt.Errorf("reproduce: heatmap_model: %w", err)
	}
	return pipeline.Stage{
		Name: results.StageFig5,
		Inputs: map[string]any{"model": m.Spec, "k": cfg.HeatmapSuffix, "maxK": cfg.MaxDepth() + 1, "null": fmt.Sprintf("windows=%d seed=%d", fig5Windows, cfg.Seed),
			"profile_windows": fig5ProfileWindows},
		Deps: []string{results.StageTestData, results.TrainStageName(m, 0)},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensorsOn(opts.backend(), filepath.Join(sc.Deps[results.TrainStageName(m, 0)].Dir, results.ModelFile))
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
				Heatmaps:       []string{filepath.Join(sc.Dir, results.Fig5HeatmapFile)},
				HeatmapOptions: attnmap.Options{Title: fmt.Sprintf("Attention maps of %s on test window 0 (N=%d)", m.Label(), T)},
				SuffixMatch:    []string{filepath.Join(sc.Dir, results.Fig5SuffixFile)},
				// Every head by query position: does it do its job over
				// the whole window?
				ProfileWindows: pxs, ProfileFigure: filepath.Join(sc.Dir, results.Fig5ProfileFile),
				ProfileTitle: fmt.Sprintf("%s: each labelled head's mass on its label's positions, by position (%d test windows)", m.Label(), len(pxs))})
			if err != nil {
				return nil, err
			}
			info := results.Fig5Info{Model: m.Label(), Scores: r.Scores, Windows: len(xs), K: cfg.HeatmapSuffix,
				ProfileWindows: len(pxs), Drops: r.Drops}
			if r.Suffix {
				f := r.Figure
				info.Layer, info.Head, info.Offset, info.Mass, info.Chance = f.Layer, f.Head, f.Offset, f.Score.Mass, f.Score.Chance
				for _, q := range f.Queries {
					info.Queries = append(info.Queries, q.Position)
				}
			}
			outs := []string{results.Fig5HeatmapFile, results.Fig5JSON}
			if r.SuffixDrawn {
				outs = append(outs, results.Fig5SuffixFile)
			}
			if r.ProfileDrawn {
				outs = append(outs, results.Fig5ProfileFile)
			}
			return outs, results.WriteJSON(sc.Dir, results.Fig5JSON, info)
		},
	}, true, nil
}

// fig5ProfileWindows is the number of test windows of the Fig. 5
// per-position profile.
const fig5ProfileWindows = 200

// fig5Windows is the number of test windows of the Fig. 5 null test.
const fig5Windows = 16
