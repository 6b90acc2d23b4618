package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// flags that may be given together with --resume (the others are taken
// from the checkpoint).
var resumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true, "allow-unverified": true, "engine": true, "backend": true,
	"max-steps": true, "epochs": true, "snapshots": true, "snapshot-every": true}

// optionFlags names the flag of each trainrun.OptionError option that is
// not a declared training option (transformer.Options, whose flags
// trainrun.OptionFlag gives): the model's, the data's and the engine's.
var optionFlags = map[string]string{"data": "--data", "val": "--val", "layers": "--layers", "embed": "-E", "heads": "--heads", "val_frac": "--val-frac",
	"N": "-N", "arch": "--arch", "hidden": "--hidden", "engine": "--engine", "backend": "--backend", "device": "--device",
	"allow_unverified": "--allow-unverified"}

// flagOf is the flag of a trainrun.OptionError option ("": none).
func flagOf(option string) string {
	if f := trainrun.OptionFlag(option); f != "" {
		return f
	}
	return optionFlags[option]
}

// trainCmd is a parsed 'vomc train' command line: the run's job and model,
// the engine's specification and the flags that only the command line has.
type trainCmd struct {
	fs        *flag.FlagSet
	o         trainrun.Job
	model     trainrun.ModelOptions
	spec      trainrun.Spec
	snapEvery int
	noFF      bool
	resume    bool
	given     map[string]bool
}

// newTrainCmd defines the flags of 'vomc train': the training options'
// from their declaration (trainrun.AddFlags), the model's, the engine's.
func newTrainCmd() *trainCmd {
	c := &trainCmd{fs: newFlags("train"), spec: trainrun.Spec{CPU: compute(), Torch: &trainrun.Torch{Stderr: os.Stderr}}}
	fs, o, m := c.fs, &c.o, &c.model
	o.Train, o.CheckpointEvery = transformer.OptionDefaults(), trainrun.DefaultCheckpointEvery()
	trainrun.AddRunFlags(fs, &o.Dir, &c.resume, &o.Force, &o.Data, "output directory (the model directory)", "no validation")
	trainrun.AddFlags(fs, &o.Train, &o.CheckpointEvery, &o.Snapshots, false)
	fs.IntVar(&o.Data.N, "N", 0, "window length: cut every window of the data set into windows of N symbols (0: the data set's N)")
	m.AddFlags(fs, &c.noFF)
	fs.BoolVar(&o.AllowUnverified, "allow-unverified", false, "with --resume: accept a checkpoint without a checksum (written by an earlier vomc)")
	c.spec.AddFlags(fs)
	fs.IntVar(&c.snapEvery, "snapshot-every", 0, "keep the model every S steps (same as --snapshots every:S)")
	return c
}

func runTrain(args []string) error {
	c := newTrainCmd()
	if err := parseArgs(c.fs, args, 0, ""); err != nil {
		return err
	}
	spec, err := c.check()
	if err != nil {
		return err
	}
	eng, err := trainrun.NewEngine(spec)
	if err != nil {
		return trainError(err, "train", c.o.Dir)
	}
	defer eng.Close()
	sigs := []os.Signal{os.Interrupt}
	if eng.Name() == trainrun.EngineTorch {
		sigs = append(sigs, syscall.SIGTERM)
	}
	ctx, stop := signal.NotifyContext(trainContext(), sigs...)
	defer stop()
	ev := newSink(os.Stdout)
	defer ev.Close()
	c.o.Events, c.o.OnStep = ev, onStep
	s, err := eng.Train(ctx, c.o)
	if err != nil {
		return trainError(err, "train", c.o.Dir)
	}
	return s.Report(os.Stdout, c.o.Dir)
}

// check checks what only the command line has — its arguments, which
// flags go together, the snapshot flags — and returns the engine's
// specification: a resumed run keeps its own engine unless --engine is
// given (trainrun.Spec.ForRun). The engine's and the run's settings are
// checked by trainrun (NewEngine, Train), before anything is written.
func (c *trainCmd) check() (trainrun.Spec, error) {
	o, spec := &c.o, c.spec
	if o.Dir == "" {
		return spec, usagef("--out DIR is required")
	}
	c.model.FeedForward = c.model.FeedForward && !c.noFF
	c.given = givenFlags(c.fs)
	o.Mode, o.Model, o.Budget, o.Data.SplitSeed = trainrun.ModeOf(c.resume), c.model, trainrun.BudgetOf(c.given["epochs"]), o.Train.Seed
	if c.resume && !c.given["engine"] {
		spec.Name = "" // the run's
		spec = spec.ForRun(o.Dir)
	}
	if spec.Name != trainrun.EngineTorch {
		if err := torchOnly(c.given, "--%s needs --engine torch"); err != nil {
			return spec, err
		}
	}
	if c.snapEvery < 0 || c.snapEvery > 0 && o.Snapshots != "" {
		return spec, usagef("--snapshot-every %d: want S ≥ 1, and not with --snapshots", c.snapEvery)
	}
	if c.snapEvery > 0 {
		o.Snapshots = fmt.Sprintf("every:%d", c.snapEvery)
	}
	if _, err := trainrun.SnapshotSteps(o.Snapshots, 1); err != nil {
		return spec, usageError{Msg: "--" + err.Error()}
	}
	if c.resume {
		if c.given["max-steps"] {
			o.Extend.MaxSteps = max(o.Train.MaxSteps, 1)
		}
		if c.given["epochs"] {
			o.Extend.Epochs = max(o.Train.Epochs, 1)
		}
		allowed := maps.Clone(resumeFlags)
		maps.Copy(allowed, trainrun.EngineResumeFlags[spec.Name])
		return spec, trainError(trainrun.OnlyFlags(c.fs, allowed, "--max-steps, --epochs and --snapshots"), "train", o.Dir)
	}
	return spec, nil
}

// trainError adds to an error of trainrun (NewEngine, Engine.Train) of
// 'vomc cmd' the flags that name the problem or say how to go on.
func trainError(err error, cmd, dir string) error {
	var oe *trainrun.OptionError
	var fe *trainrun.ModelFormatError
	var be *trainrun.BackendError
	switch {
	case errors.As(err, &oe) && (oe.Option == "" || flagOf(oe.Option) != ""):
		return usageError{Msg: oe.Text(flagOf)}
	case errors.As(err, &oe) && oe.Err != nil:
		return oe.Err
	case errors.Is(err, transformer.ErrNoChecksum):
		return fmt.Errorf("%w; resume it anyway with --allow-unverified", err)
	case errors.As(err, &fe):
		return fmt.Errorf("the run in %s trains a %s model (%s): resume it with --engine torch", fe.Dir, fe.Format, fe.Config)
	case errors.As(err, &be):
		return fmt.Errorf("--backend %s: %w", be.Name, be.Err)
	}
	return runError(err, cmd, dir)
}

// What 'vomc train' and 'vomc synth' share: the flags of resuming and the
// messages of the run driver (package trainrun, which 'vomc reproduce'
// uses too).

// trainContext is the parent context of a training run (tests replace it
// to interrupt a run as Ctrl-C does).
var trainContext = context.Background

// trainStepHook, when set (by tests), is called after every training step.
var trainStepHook func(step int)

// onStep is the OnStep of a training run: it calls trainStepHook.
func onStep(step int) {
	if trainStepHook != nil {
		trainStepHook(step)
	}
}

// runError turns an interruption, a divergence or a held run directory
// into an error that says how to go on ('vomc cmd --out dir --resume', a
// lower --lr, --resume or --force).
func runError(err error, cmd, dir string) error {
	var ie *trainrun.InterruptedError
	var de *trainrun.DivergedError
	var he *trainrun.HeldError
	var nr *trainrun.NoRunError
	var ns *trainrun.NoSpaceError
	switch {
	case errors.As(err, &nr) && nr.DataSet:
		return usagef("%v: give the run's directory with --out (and the data set with --data)", err)
	case errors.As(err, &nr):
		return usagef("%v: start one without --resume", err)
	case errors.As(err, &ns):
		return fmt.Errorf("%v; the checkpoint %s of step %d is intact: free some space and continue with 'vomc %s --out %s --resume'",
			ns.Err, ns.Checkpoint, ns.Step, cmd, dir)
	case errors.As(err, &ie):
		return fmt.Errorf("interrupted at step %d; checkpoint saved, continue with 'vomc %s --out %s --resume'", ie.Step, cmd, dir)
	case errors.As(err, &de):
		return fmt.Errorf("%v; lower --lr (now %g) and train afresh (--force); the last good checkpoint is %s (step %d)",
			strings.TrimPrefix(de.Err.Error(), "transformer: "), de.LR, de.Checkpoint, de.Step)
	case errors.As(err, &he):
		return fmt.Errorf("%v: continue it with --resume, or start afresh with --force", err)
	}
	return err
}

// torchOnly refuses a flag that only the torch engine takes
// (trainrun.TorchOnlyFlags) if given, by format (a verb for its name).
func torchOnly(given map[string]bool, format string) error {
	if f := trainrun.TorchOnlyFlag(given); f != "" {
		return usagef(format, f)
	}
	return nil
}

func runPredict(args []string) error {
	fs := newFlags("predict")
	model := fs.String("model", "", "model.safetensors, or its run directory")
	data := fs.String("data", "", "data set directory (from 'vomc data')")
	out := fs.String("out", "", "output .npy file")
	force := fs.Bool("force", false, "replace --out if it exists")
	tor := &trainrun.Torch{Stderr: os.Stderr}
	tor.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if *model == "" || *data == "" || *out == "" {
		return usagef("--model, --data and --out are required")
	}
	if err := fsutil.CheckOutputs(os.Stderr, *force, *out); err != nil {
		return err
	}
	return tor.Predict(trainContext(), *model, *data, *out)
}

// runSynth is 'vomc synth': it trains a synthetic TF 2-0 model in a run
// directory (synth.TrainDir, on the Go engine) and prints the result.
func runSynth(args []string) error {
	fs := newFlags("synth")
	f := synth.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	o, err := f.DirOptions()
	if err != nil {
		return trainError(asUsage(err), "synth", o.Dir)
	}
	eng, err := trainrun.NewEngine(trainrun.Spec{CPU: compute()})
	if err != nil {
		return err
	}
	ev := newSink(os.Stdout)
	defer ev.Close()
	o.Events, o.OnStep = ev, onStep
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt)
	defer stop()
	res, err := synth.TrainDir(ctx, eng, o)
	if err != nil {
		return trainError(err, "synth", o.Dir)
	}
	res.Report(os.Stdout)
	return nil
}
