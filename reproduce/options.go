package reproduce

import (
	"fmt"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend"
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
	// Events receives the run's progress lines (the stages started,
	// cached, finished, as log lines), each stage's progress (a task per
	// stage, named by its label) and warnings (nil: discard).
	Events events.Sink
	// OnStep, if set, is called after every training step of every model
	// (tests use it to cancel a run mid-training).
	OnStep func(stage string, step int)
	// Jobs is the most stages computed at once (≤ 1: one at a time, in
	// this process). With Jobs > 1 every stage that is not cached is
	// computed by `Vomc reproduce --stage NAME` in a process of its own as
	// soon as its inputs are done, the Threads cores divided among the
	// stages running (pipeline.Runner.RunParallel); the outputs are those
	// of Jobs = 1, since no stage's numbers depend on its thread count.
	// OnStep is not called then.
	Jobs int
	// Threads are the cores divided among the stages of a run with
	// Jobs > 1 (≤ 0: GOMAXPROCS).
	Threads int
	// Vomc is the vomc binary that computes the stages of a run with
	// Jobs > 1 (the command passes its own); it must be of Version, whose
	// stage hashes it computes.
	Vomc string
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
	// Torch is the PyTorch engine that the study's torch: methods
	// (ExtraMethods: models of 'vomc train --engine torch') run on, made
	// once by the caller (nil: Engine's torch engine, if it is one; else a
	// torch method is refused). It is not part of any stage hash.
	Torch *trainrun.Torch
}

// torch is the PyTorch engine of torch methods: Torch, else Engine's.
func (o Options) torch() *trainrun.Torch {
	if o.Torch != nil {
		return o.Torch
	}
	return o.Engine.Torch()
}

// backend is the Go engine's compute backend (Options.Engine).
func (o Options) backend() backend.Backend { return o.Engine.Backend() }

// checkEngine refuses an Engine other than the one cfg names.
func (o Options) checkEngine(cfg study.Config) error {
	want := cfg.Engine
	if want == "" {
		want = trainrun.EngineGo
	}
	if got := o.Engine.Name(); got != want {
		return fmt.Errorf("reproduce: the configuration trains on the %s engine, Options.Engine is the %s engine", want, got)
	}
	return nil
}

// defaults are the study's settings of the methods: CTW's depth, λ and α,
// and the order of KN and PPM.
func defaults(cfg study.Config) methods.Defaults {
	prior := cfg.Prior()
	return methods.Defaults{A: cfg.A, D: cfg.MaxDepth(), Lambda: cfg.Lambda, Alpha: cfg.Alpha, Prior: &prior}
}
