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

// profileStage computes replicate r of model m's attention profile by query
// position on the first LadderProfileWindows test windows (attnmap's
// study: head labels with the null test on 16 windows, heatmaps with zoom
// panels, the profile figure) and keeps layer 1's previous-key weights.
func profileStage(cfg study.Config, m study.Model, r int, opts Options) pipeline.Stage {
	train := results.TrainStageName(m, r)
	return pipeline.Stage{
		Name:   results.ProfileStageName(m, r),
		Kind:   pipeline.KindEval,
		Inputs: map[string]any{"model": m.Spec, "replicate": r, "windows": results.LadderProfileWindows, "null": fmt.Sprintf("windows=%d seed=%d", fig5Windows, cfg.Seed)},
		Deps:   []string{results.StageTestData, train},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensorsOn(opts.backend(), filepath.Join(sc.Deps[train].Dir, results.ModelFile))
			if err != nil {
				return nil, err
			}
			pxs := make([][]byte, min(results.LadderProfileWindows, test.Windows()))
			for w := range pxs {
				pxs[w] = test.Window(w)
			}
			xs := pxs[:min(fig5Windows, len(pxs))]
			label := results.RepLabel(m, r)
			res, err := attnmap.RunStudy(attnmap.Study{Model: model, Windows: xs, MaxK: cfg.MaxDepth() + 1, Null: attnmap.NullOptions{Seed: cfg.Seed},
				K: cfg.HeatmapSuffix, Offset: -1,
				Heatmaps:       []string{filepath.Join(sc.Dir, results.LadderHeatmapFile)},
				HeatmapOptions: attnmap.Options{Title: fmt.Sprintf("Attention maps of %s on test window 0", label)},
				ProfileWindows: pxs, ProfileFigure: filepath.Join(sc.Dir, results.LadderProfileFile),
				ProfileTitle: fmt.Sprintf("%s: each labelled head's mass on its label's positions, by position (%d test windows)", label, len(pxs))})
			if err != nil {
				return nil, err
			}
			lp := results.LadderProfile{Model: label, Windows: len(pxs), Scores: res.Scores}
			if p := res.Profile; p != nil && len(p.Rel) > 0 {
				for _, head := range p.Rel[0] {
					prev := make([]float64, len(head))
					for q := 1; q < len(head); q++ {
						prev[q] = head[q][1]
					}
					lp.Prev = append(lp.Prev, prev)
				}
			}
			outs := []string{results.LadderProfileJSON, results.LadderHeatmapFile}
			if res.ProfileDrawn {
				outs = append(outs, results.LadderProfileFile)
			}
			return outs, results.WriteJSON(sc.Dir, results.LadderProfileJSON, lp)
		},
	}
}
