package reproduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/pipeline"
)

// The training-dynamics stages (Config.Dynamics): one per trained model,
// measuring its snapshots with package dynamics.

// dynamicsStageName names replicate r's dynamics stage of model m.
func dynamicsStageName(m Model, r int) string { return "dynamics-tf-" + m.Slug() + repSuffix(r) }

// dynamicsStage measures the snapshots of replicate r of model m on the
// first DynamicsWindows test windows (KN tuned on the training windows).
func dynamicsStage(cfg Config, m Model, r int, opts Options) pipeline.Stage {
	train := trainStageName(m, r)
	return pipeline.Stage{
		Name:   dynamicsStageName(m, r),
		Kind:   pipeline.KindEval,
		Inputs: map[string]any{"label": RepLabel(m, r), "windows": cfg.DynamicsWindows, "head_windows": cfg.headWindows(), "defaults": defaults(cfg)},
		Deps:   []string{StageTrainData, StageTestData, train},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test := filepath.Join(sc.Deps[StageTestData].Dir, dataDir)
			nw := cfg.DynamicsWindows
			if nw == 0 {
				nw = min(200, cfg.TestTrees)
			}
			res, err := dynamics.Run(dynamics.RunConfig{Run: sc.Deps[train].Dir, Data: test, Windows: nw, HeadWindows: cfg.headWindows(), Backend: opts.Backend,
				Train: filepath.Join(sc.Deps[StageTrainData].Dir, dataDir), Null: attnmap.NullOptions{Seed: cfg.Seed},
				Workers: cfg.Workers})
			if err != nil {
				return nil, err
			}
			res.Run = RepLabel(m, r) // a label, not the stage's path
			if err := res.Write(sc.Dir, "Training dynamics: "+RepLabel(m, r), true); err != nil {
				return nil, err
			}
			f := dynamics.Files
			return []string{f.JSON, f.CSV, f.Phases, f.PNG, f.SVG}, nil
		},
	}
}

// headWindows is DynamicsHeadWindows or its default, 50.
func (c Config) headWindows() int {
	if c.DynamicsHeadWindows > 0 {
		return c.DynamicsHeadWindows
	}
	return 50
}

// dynamicsSection is the report's "Training dynamics" section: every
// model's figure and its phases (nil when the study has none).
func dynamicsSection(cfg Config, deps map[string]*pipeline.Done) (files []string, found string, err error) {
	if cfg.Dynamics == "" {
		return nil, "", nil
	}
	var texts []string
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			d, ok := deps[dynamicsStageName(m, r)]
			if !ok {
				continue
			}
			files = append(files, filepath.Join(d.Dir, dynamics.Files.PNG))
			b, err := os.ReadFile(filepath.Join(d.Dir, dynamics.Files.Phases))
			if err != nil {
				return nil, "", err
			}
			texts = append(texts, strings.TrimSpace(string(b)))
		}
	}
	return files, strings.Join(texts, "\n\n"), nil
}
