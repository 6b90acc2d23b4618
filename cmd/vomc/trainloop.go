package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/trainrun"
)

// What 'vomc train' and 'vomc synth' share: the flags of resuming and the
// messages of the run driver (package trainrun, which 'vomc reproduce'
// uses too).

// trainContext is the parent context of a training run (tests replace it
// to interrupt a run as Ctrl-C does).
var trainContext = context.Background

// trainStepHook, when set (by tests), is called after every training step.
var trainStepHook func(step int)

// checkResumeFlags refuses, with --resume, the flags not in allowed.
func checkResumeFlags(fs *flag.FlagSet, allowed map[string]bool) error {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !allowed[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usagef("%s cannot be changed when resuming (the run's settings are in its checkpoint)", strings.Join(bad, ", "))
	}
	return nil
}

// loadResume checks that only the flags in allowed were given with
// --resume and reads the checkpoint of the run in dir and its data
// (trainrun.Load). A checkpoint without a checksum is refused unless
// allowUnverified.
func loadResume(fs *flag.FlagSet, allowed map[string]bool, dir, data, valDir string, allowUnverified bool) (c *transformer.Checkpoint, train, val transformer.Windows, err error) {
	if err := checkResumeFlags(fs, allowed); err != nil {
		return nil, nil, nil, err
	}
	c, train, val, err = trainrun.Load(dir, data, valDir, allowUnverified)
	if errors.Is(err, transformer.ErrNoChecksum) {
		return nil, nil, nil, fmt.Errorf("%w; resume it anyway with --allow-unverified", err)
	}
	return c, train, val, err
}

// trainData is trainrun.Data with a bad window length as a usage error.
func trainData(meta map[string]string) (train, val transformer.Windows, A int, err error) {
	train, val, A, err = trainrun.Data(meta)
	if errors.Is(err, trainrun.ErrWindowLength) {
		return nil, nil, 0, usageError{err.Error()}
	}
	return train, val, A, err
}

// checkRunDir is trainrun.CheckDir, saying how to go on.
func checkRunDir(dir string, force bool) error {
	return runError(trainrun.CheckDir(dir, force), "", dir)
}

// runOptions are the driver's settings of a CLI run in dir: log and
// curve, a progress bar on stderr.
func runOptions(dir string, meta map[string]string, ckptEvery int) trainrun.Options {
	return trainrun.Options{Dir: dir, Meta: meta, CheckpointEvery: ckptEvery, Log: true, Progress: os.Stderr, Label: "steps",
		OnStep: func(step int) {
			if trainStepHook != nil {
				trainStepHook(step)
			}
		}}
}

// resumeRun continues the run in dir with tr (trainrun.Resume) and says
// where it continues.
func resumeRun[A any, M transformer.Trainable[A]](tr *transformer.TrainerOf[A, M], opts trainrun.Options) (*trainrun.Run[A, M], error) {
	r, err := trainrun.Resume(tr, opts)
	if err == nil {
		trainrun.SayResume(os.Stdout, opts.Dir, tr)
	}
	return r, err
}

// runTrainer runs r to its end, Ctrl-C cancelling it (the driver saves the
// checkpoint), with runError's advice.
func runTrainer[A any, M transformer.Trainable[A]](r *trainrun.Run[A, M], cmd string) error {
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt)
	defer stop()
	return runError(trainrun.RunToEnd(ctx, r), cmd, r.Dir)
}

// runError turns an interruption, a divergence or a held run directory
// into an error that says how to go on ('vomc cmd --out dir --resume', a
// lower --lr, --resume or --force).
func runError(err error, cmd, dir string) error {
	var ie *trainrun.InterruptedError
	var de *trainrun.DivergedError
	var he *trainrun.HeldError
	switch {
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

// stopReason says why a finished run ended.
func stopReason(stopped bool, patience int, maxSteps, step int) string {
	switch {
	case stopped:
		return fmt.Sprintf("early stopping (patience %d)", patience)
	case maxSteps > 0 && step >= maxSteps:
		return "--max-steps"
	}
	return "all epochs"
}
