package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/transformer"
)

// What 'vomc train' and 'vomc synth' share: the run directory's checkpoint
// and log, resuming, and the training loop with its interrupt handling.
// Both train with the engine's trainer (transformer.TrainerOf), so one
// generic loop serves both.

// trainContext is the parent context of a training run (tests replace it
// to interrupt a run as Ctrl-C does).
var trainContext = context.Background

// loadResume checks that only the flags in allowed were given with
// --resume, reads the checkpoint of the run in dir and its data (the
// data set paths of the checkpoint's metadata, or the --data and --val
// given now, made absolute; trainData checks the checksums). A checkpoint
// without a checksum is refused unless allowUnverified.
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
	ckptPath := filepath.Join(dir, trainCheckpoint)
	if c, err = transformer.LoadCheckpointWith(ckptPath, allowUnverified); err != nil {
		if errors.Is(err, transformer.ErrNoChecksum) {
			return nil, nil, nil, fmt.Errorf("%w; resume it anyway with --allow-unverified", err)
		}
		return nil, nil, nil, err
	}
	if c.Meta == nil {
		c.Meta = map[string]string{}
	}
	if data != "" {
		if c.Meta["data"], err = filepath.Abs(data); err != nil {
			return nil, nil, nil, err
		}
	}
	if valDir != "" {
		if c.Meta["val"], err = filepath.Abs(valDir); err != nil {
			return nil, nil, nil, err
		}
	}
	if train, val, _, err = trainData(c.Meta); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", ckptPath, err)
	}
	return c, train, val, nil
}

// resumed finishes resuming the run in dir: it removes the temporary files
// an interrupted checkpoint write may have left, rewrites the log from the
// checkpoint's history (the log may have lines written after the
// checkpoint) and says where the run continues.
func resumed(dir string, hist []transformer.LogEntry, done bool, step, epoch, index, windows int) error {
	if err := transformer.RemoveStaleTemp(filepath.Join(dir, trainCheckpoint)); err != nil {
		return err
	}
	if err := fsutil.WriteFile(filepath.Join(dir, trainLog), true, func(w io.Writer) error { return writeLogLines(w, hist) }); err != nil {
		return err
	}
	if done {
		fmt.Printf("the run in %s had finished at step %d; writing its outputs again\n", dir, step)
	} else {
		fmt.Printf("resuming %s at step %d (epoch %d, window %d of %d)\n", dir, step, epoch+1, index, windows)
	}
	return nil
}

// runTrainer runs tr to its end: log lines appended to dir/train.jsonl
// (and the training curve redrawn at epoch ends, at most every 30 s), the
// checkpoint dir/checkpoint.safetensors (with meta) written every
// ckptEvery steps and at every epoch end, a progress bar with the rate in
// tokens per second, and Ctrl-C saving the checkpoint and returning an
// error that says how to continue ('vomc cmd --out dir --resume').
func runTrainer[A any, M transformer.Trainable[A]](tr *transformer.TrainerOf[A, M], dir, cmd string, meta map[string]string, ckptEvery int) error {
	ckptPath := filepath.Join(dir, trainCheckpoint)
	logFile, err := os.OpenFile(filepath.Join(dir, trainLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	var logErr error
	lastCurve := time.Now()
	tr.OnLog = func(e transformer.LogEntry) {
		if logErr == nil {
			logErr = writeLogLines(logFile, []transformer.LogEntry{e})
		}
		if e.EpochEnd && time.Since(lastCurve) > 30*time.Second {
			lastCurve = time.Now()
			drawCurve(dir, tr.History) // best effort while training
		}
	}
	tr.CheckpointEvery = ckptEvery
	lastCkpt := tr.Step // the step of the checkpoint on disk
	tr.OnCheckpoint = func() error {
		if logErr != nil {
			return logErr
		}
		if err := tr.SaveCheckpoint(ckptPath, meta); err != nil {
			return err
		}
		lastCkpt = tr.Step
		return nil
	}
	first := tr.Step
	bar := progress.New(os.Stderr, "steps", max(tr.TotalSteps()-first, 0)).DelayStart(2 * time.Second)
	start := time.Now()
	B := min(tr.Cfg.BatchSize, tr.Train.Windows())
	tokensPerStep := float64(B * len(tr.Train.Window(0)))
	tr.OnStep = func(step int, loss float64) {
		val := ""
		if !math.IsInf(tr.BestVal, 1) {
			val = fmt.Sprintf(" best val %.4f", tr.BestVal)
		}
		rate := tokensPerStep * float64(step-first) / time.Since(start).Seconds()
		bar.SetExtra(fmt.Sprintf("step %d epoch %d loss %.4f%s %.0f tok/s", step, tr.Epoch+1, loss, val, rate))
		bar.Set(step - first)
		if trainStepHook != nil {
			trainStepHook(step)
		}
	}
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt)
	defer stop()
	_, err = tr.Run(ctx)
	bar.Done()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			if serr := tr.SaveCheckpoint(ckptPath, meta); serr != nil {
				return serr
			}
			return fmt.Errorf("interrupted at step %d; checkpoint saved, continue with 'vomc %s --out %s --resume'", tr.Step, cmd, dir)
		}
		var de *transformer.DivergedError
		if errors.As(err, &de) {
			// The checkpoint on disk is from before the divergence; it is
			// not overwritten.
			return fmt.Errorf("%v; lower --lr (now %g) and train afresh (--force); the last good checkpoint is %s (step %d)",
				strings.TrimPrefix(err.Error(), "transformer: "), tr.Cfg.LR, ckptPath, lastCkpt)
		}
		return err
	}
	if logErr != nil {
		return logErr
	}
	return drawCurve(dir, tr.History)
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
