package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

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
