package reproduce

import (
	"context"
	"math"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// constructStage runs the (D+2)-layer construction beside CTW on the
// First cfg.ConstructWindows test windows.
func constructStage(cfg study.Config) pipeline.Stage {
	return pipeline.Stage{
		Name:   results.StageConstruct,
		Inputs: map[string]any{"defaults": defaults(cfg), "windows": cfg.ConstructWindows},
		Deps:   []string{results.StageTestData},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			return runConstruct(ctx, cfg, sc)
		},
	}
}

// runConstruct is the construction stage's work: the evaluation beside
// CTW and construct.json (ConstructInfo).
func runConstruct(ctx context.Context, cfg study.Config, sc *pipeline.StageContext) ([]string, error) {
	test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
	if err != nil {
		return nil, err
	}
	ws := experiment.Windows(test)[:cfg.ConstructWindows]
	start := time.Now()
	res, built, err := experiment.Evaluate(ctx, ws, methods.MustParse("ctw,construct"), defaults(cfg), eval.Config{Workers: cfg.Workers, Events: events.Prefix(sc.Events, sc.Label)})
	if err != nil {
		return nil, err
	}
	info := results.ConstructInfo{Windows: len(ws), Layers: cfg.MaxDepth() + 2}
	A := cfg.A
	pc, pt := make([]float64, cfg.N*A), make([]float64, cfg.N*A)
	for _, x := range ws {
		if err := predict.Sequence(built[0].Predictor, x, pc); err != nil {
			return nil, err
		}
		if err := predict.Sequence(built[1].Predictor, x, pt); err != nil {
			return nil, err
		}
		for i := range pc {
			info.MaxProbDiff = math.Max(info.MaxProbDiff, math.Abs(pc[i]-pt[i]))
		}
	}
	info.Seconds = time.Since(start).Seconds()
	if err := results.SaveResult(sc.Dir, res); err != nil {
		return nil, err
	}
	return []string{results.ResultFile, "construct.json"}, results.WriteJSON(sc.Dir, "construct.json", info)
}
