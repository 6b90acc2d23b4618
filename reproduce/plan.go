package reproduce

import (
	"fmt"
	"io"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/trainrun"
)

// Options are the run's settings that are not part of the study's
// configuration.
type Options struct {
	// Out is the output directory: stages/ holds the cached stages, and
	// report.html, figures/ and results.json are written at its top.
	Out string
	// Version is the vomc version (in the report, and part of every stage
	// hash).
	Version string
	// CodeKey identifies the code (part of every stage hash, so that
	// stages cached by other code are computed again); empty means
	// pipeline.CodeKey(), from the binary's VCS information or its
	// SHA-256. Tests inject it.
	CodeKey string
	// Rerun names stages to compute again even when cached ("all": every
	// stage); stages depending on them are computed again where the rerun
	// changed their outputs.
	Rerun []string
	// Log receives progress lines (nil: discard).
	Log io.Writer
	// OnStep, if set, is called after every training step of every model
	// (tests use it to cancel a run mid-training).
	OnStep func(stage string, step int)
	// Lock configures the claims that keep concurrent runs sharing Out
	// (Slurm tasks, several machines) from computing the same stage.
	Lock pipeline.LockConfig
	// Engine is the training engine, made once by the caller
	// (trainrun.NewEngine) as Config.Engine names it: it trains the
	// transformers (on the Go engine or the torch engine), and its Go
	// backend (Engine.Backend) holds every model the study builds on the
	// Go engine — the TF 2-0 models, the models evaluated, attention maps,
	// dynamics (nil: the Go engine, each model making a CPU backend of its
	// own). The backend is not part of any stage hash: every backend
	// computes the same numbers.
	Engine *trainrun.Engine
}

// backend is the Go engine's compute backend (Options.Engine).
func (o Options) backend() backend.Backend { return o.Engine.Backend() }

// checkEngine refuses an Engine other than the one cfg names.
func (o Options) checkEngine(cfg Config) error {
	want := cfg.Engine
	if want == "" {
		want = trainrun.EngineGo
	}
	if got := o.Engine.Name(); got != want {
		return fmt.Errorf("reproduce: the configuration trains on the %s engine, Options.Engine is the %s engine", want, got)
	}
	return nil
}

// Stage names of the fixed stages.
const (
	StageTrainData = "data-train"
	StageTestData  = "data-test"
	StageBaselines = "eval-baselines"
	StageConstruct = "eval-construct"
	StageFig5      = "fig5-attention"
	StageSynth     = "fig8-synth"
	StageFigures   = "figures"
	StageReport    = "report"
)

// Plan returns the stages of the study in order: the training and test
// data, the baselines and the construction beside CTW, every transformer's
// training (per replicate) and evaluation, Fig. 5, Fig. 8's synthetic
// models and their evaluation, the figures and the report.
func Plan(cfg Config, opts Options) ([]pipeline.Stage, error) {
	if err := opts.checkEngine(cfg); err != nil {
		return nil, err
	}
	trainDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TrainTrees, NK: cfg.TrainNK, N: cfg.N, Fresh: false, Seed: cfg.Seed + 1_000_003}
	testDS := dataset.Config{Prior: cfg.Prior(), K: cfg.TestTrees, NK: cfg.N, N: cfg.N, Fresh: true, Seed: cfg.Seed}
	stages := []pipeline.Stage{
		dataStage(StageTrainData, trainDS, cfg.Workers),
		dataStage(StageTestData, testDS, cfg.Workers),
		baselinesStage(cfg),
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
			if cfg.dynamicsOf(r) != "" {
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

// defaults are the study's settings of the methods: CTW's depth, λ and α,
// and the order of KN and PPM.
func defaults(cfg Config) methods.Defaults {
	prior := cfg.Prior()
	return methods.Defaults{A: cfg.A, D: cfg.MaxDepth(), Lambda: cfg.Lambda, Alpha: cfg.Alpha, Prior: &prior}
}
