package reproduce

import (
	"context"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// dynamicsStage measures the snapshots of replicate r of model m on the
// First DynamicsWindows test windows (KN tuned on the training windows).
func dynamicsStage(cfg study.Config, m study.Model, r int, opts Options) pipeline.Stage {
	train := results.TrainStageName(m, r)
	return pipeline.Stage{
		Name:   results.DynamicsStageName(m, r),
		Kind:   pipeline.KindEval,
		Inputs: map[string]any{"label": results.RepLabel(m, r), "windows": cfg.DynamicsWindows, "head_windows": cfg.HeadWindows(), "defaults": defaults(cfg)},
		Deps:   []string{results.StageTrainData, results.StageTestData, train},
		// resumable: the snapshots measured so far are kept in the stage's
		// directory (dynamics.Options.Checkpoint), so an interrupted stage
		// goes on from the last one
		Resumable: true,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test := filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir)
			nw := cfg.DynamicsWindows
			if nw == 0 {
				nw = min(200, cfg.TestTrees)
			}
			ck := filepath.Join(sc.Dir, dynamics.CheckpointFile)
			build, err := pipeline.CodeKey() // this binary's, even under a given code key
			if err != nil {
				return nil, err
			}
			res, err := dynamics.Run(ctx, dynamics.RunConfig{Run: sc.Deps[train].Dir, Data: test, Windows: nw, HeadWindows: cfg.HeadWindows(), Backend: opts.backend(),
				Train: filepath.Join(sc.Deps[results.StageTrainData].Dir, results.DataDir), Null: attnmap.NullOptions{Seed: cfg.Seed},
				Workers: cfg.Workers, Checkpoint: ck, Identity: build})
			if err != nil {
				return nil, err
			}
			res.Run = results.RepLabel(m, r) // a label, not the stage's path
			if err := res.Write(sc.Dir, "Training dynamics: "+results.RepLabel(m, r), true); err != nil {
				return nil, err
			}
			if err := dynamics.RemoveCheckpoint(ck); err != nil {
				return nil, err
			}
			f := dynamics.Files
			return []string{f.JSON, f.CSV, f.Phases, f.PNG, f.SVG}, nil
		},
	}
}
