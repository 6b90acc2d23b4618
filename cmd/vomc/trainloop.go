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

// loadResume checks that only the flags in allowed were given with
// --resume and reads the checkpoint of the run in dir and its data
// (trainrun.Load). A checkpoint without a checksum is refused unless
// allowUnverified.
func loadResume(fs *flag.FlagSet, allowed map[string]bool, dir, data, valDir string, allowUnverified bool) (c *transformer.Checkpoint, train, val transformer.Windows, err error) {
	var bad []string
	fs.Visit(func(f *flag.Flag) {
		if !allowed[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return nil, nil, nil, usagef("%s cannot be changed when resuming (the run's settings are in its checkpoint)", strings.Join(bad, ", "))
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
	err := trainrun.CheckDir(dir, force)
	var he *trainrun.HeldError
	if errors.As(err, &he) {
		return fmt.Errorf("%v: continue it with --resume, or start afresh with --force", err)
	}
	return err
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
	if err != nil {
		return nil, err
	}
	if tr.Done() {
		fmt.Printf("the run in %s had finished at step %d; writing its outputs again\n", opts.Dir, tr.Step)
	} else {
		fmt.Printf("resuming %s at step %d (epoch %d, window %d of %d)\n", opts.Dir, tr.Step, tr.Epoch+1, tr.Index, tr.Train.Windows())
	}
	return r, nil
}

// runTrainer runs r to its end, Ctrl-C cancelling it (the driver saves the
// checkpoint), and turns an interruption or a divergence into an error
// that says how to go on ('vomc cmd --out dir --resume', a lower --lr).
func runTrainer[A any, M transformer.Trainable[A]](r *trainrun.Run[A, M], cmd string) error {
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt)
	defer stop()
	err := r.Run(ctx)
	var ie *trainrun.InterruptedError
	var de *transformer.DivergedError
	switch {
	case errors.As(err, &ie):
		return fmt.Errorf("interrupted at step %d; checkpoint saved, continue with 'vomc %s --out %s --resume'", ie.Step, cmd, r.Dir)
	case errors.As(err, &de):
		// The checkpoint on disk is from before the divergence; it is
		// not overwritten.
		return fmt.Errorf("%v; lower --lr (now %g) and train afresh (--force); the last good checkpoint is %s (step %d)",
			strings.TrimPrefix(err.Error(), "transformer: "), r.Trainer.Cfg.LR, r.CheckpointPath(), r.LastCheckpoint)
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
