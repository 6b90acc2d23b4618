package reproduce

import (
	"context"
	"slices"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/report"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// Plan returns the stages of the study in order: the training and test
// data, the baselines and the construction beside CTW, every transformer's
// training (per replicate) and evaluation, Fig. 5, Fig. 8's synthetic
// models and their evaluation, the figures and the report.
func Plan(cfg study.Config, opts Options) ([]pipeline.Stage, error) {
	if err := opts.checkEngine(cfg); err != nil {
		return nil, err
	}
	trainDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TrainTrees, NK: cfg.TrainNK, N: cfg.N, Fresh: false, Seed: cfg.Seed + 1_000_003}
	testDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TestTrees, NK: cfg.N, N: cfg.N, Fresh: true, Seed: cfg.Seed}
	stages := []pipeline.Stage{
		dataStage(results.StageTrainData, trainDS, cfg.Workers),
		dataStage(results.StageTestData, testDS, cfg.Workers),
		baselinesStage(cfg, opts),
		constructStage(cfg),
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			if r >= cfg.SeedsOf(m) {
				continue
			}
			stages = append(stages, trainStage(cfg, m, r, opts))
		}
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			if r >= cfg.SeedsOf(m) {
				continue
			}
			stages = append(stages, evalModelStage(cfg, m, r, opts))
			if cfg.Ladder {
				stages = append(stages, profileStage(cfg, m, r, opts))
			}
			if cfg.DynamicsOf(r) != "" {
				stages = append(stages, dynamicsStage(cfg, m, r, opts))
			}
		}
	}
	f5, ok, err := fig5Stage(cfg, opts)
	if err != nil {
		return nil, err
	}
	if ok {
		stages = append(stages, f5)
	}
	ss, err := synthStages(cfg, opts)
	if err != nil {
		return nil, err
	}
	stages = append(stages, ss...)
	stages = append(stages, figuresStage(cfg, stages))
	return append(stages, reportStage(cfg, opts, stages)), nil
}

// figuresStage draws the figures from the results of every evaluation
// stage among stages (and writes the merged results and the across-seed
// statistics).
func figuresStage(cfg study.Config, stages []pipeline.Stage) pipeline.Stage {
	inputs := map[string]any{"fig3": cfg.Fig3Models, "fig4": cfg.Fig4Models, "synth": cfg.SynthVariants, "smooth": cfg.Smooth, "N": cfg.N}
	if cfg.NumSeeds() > 1 {
		inputs["seeds"] = cfg.NumSeeds()
	}
	if cfg.Normalized().SynthEncodings != nil {
		inputs["encodings"] = cfg.Encodings()
	}
	var evals []string
	for _, s := range stages {
		if s.Name == results.StageBaselines || s.Name == results.StageConstruct || s.Name == results.StageSynth || strings.HasPrefix(s.Name, "eval-tf-") {
			evals = append(evals, s.Name)
		}
	}
	if len(cfg.Fig4Models) > 0 { // the training curves of Fig. 4's models
		for _, m := range figures.Fig4CurveModels(cfg) {
			evals = append(evals, results.TrainStageName(m, 0))
		}
	}
	evals = append(evals, results.DynamicsStageNames(cfg)...) // the dynamics panels
	if cfg.Ladder {                                           // the ladder's training curves (replicate 0)
		for _, m := range cfg.Models() {
			if n := results.TrainStageName(m, 0); !slices.Contains(evals, n) {
				evals = append(evals, n)
			}
		}
	}
	return pipeline.Stage{
		Name:   results.StageFigures,
		Kind:   pipeline.KindFigures,
		Inputs: inputs,
		Deps:   evals,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			return figures.Write(cfg, sc)
		},
	}
}

// reportStage writes the report from every other stage of stages.
func reportStage(cfg study.Config, opts Options, stages []pipeline.Stage) pipeline.Stage {
	var all []string
	for _, s := range stages {
		all = append(all, s.Name)
	}
	return pipeline.Stage{
		Name:   results.StageReport,
		Kind:   pipeline.KindReport,
		Inputs: cfg.Normalized(),
		Deps:   all,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			return report.Write(cfg, report.Build{Version: opts.Version, CodeKey: opts.CodeKey}, sc)
		},
	}
}
