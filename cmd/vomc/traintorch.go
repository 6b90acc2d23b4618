package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vomc/vomc/transformer/trainrun"
)

// The PyTorch engine's side of 'vomc train' (and of 'vomc bench train'):
// its flags and the run.

// torchOnlyFlags are the flags that only the torch engine takes.
var torchOnlyFlags = []string{"device", "amp", "compile", "torch-threads", "hidden"}

// torchResumeFlags may be given with --resume on the torch engine: the Go
// engine's and the engine's device and speed flags.
var torchResumeFlags = func() map[string]bool {
	m := map[string]bool{"engine": true, "device": true, "amp": true, "compile": true, "torch-threads": true}
	for k := range resumeFlags {
		m[k] = true
	}
	return m
}()

// torchFlags defines the torch engine's flags on fs, into t.
func torchFlags(fs *flag.FlagSet, t *trainrun.Torch) {
	fs.StringVar(&t.Device, "device", "auto", "torch engine: auto (CUDA when available), cpu, cuda or cuda:N")
	fs.StringVar(&t.AMP, "amp", "auto", "torch engine: auto (bf16 autocast on CUDA), bf16 or off")
	fs.BoolVar(&t.Compile, "compile", false, "torch engine: torch.compile the model (torch ≥ 2)")
	fs.IntVar(&t.Threads, "torch-threads", 0, "torch engine: CPU threads (0: torch's default)")
}

// trainTorch trains the run in dir with the torch engine to its end (Ctrl-C
// or SIGTERM: the engine saves its checkpoint) and prints the outcome.
func trainTorch(t *trainrun.Torch, dir string, ckptEvery int, data, val string) error {
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := t.Train(ctx, dir, ckptEvery, data, val)
	var ie *trainrun.InterruptedError
	if errors.As(err, &ie) {
		return fmt.Errorf("interrupted at step %d; checkpoint saved, continue with 'vomc train --out %s --resume'", ie.Step, dir)
	}
	if err != nil {
		return err
	}
	s := c.State
	how := stopReason(s.Stopped, c.Train.Patience, c.Train.MaxSteps, s.Step)
	fmt.Printf("trained %d steps, %d epochs (%s) in %s with the torch engine", s.Step, s.Epoch, how, s.Elapsed.Round(time.Second))
	if !math.IsInf(s.BestVal, 1) {
		fmt.Printf("; best validation loss %.4f nats/symbol (%.4f bits), model has the best parameters", s.BestVal, s.BestVal/math.Ln2)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s,%s,%s,%s,%s}\n", dir, trainModel, trainConfigJSON, trainTrainConfig, trainLog, trainCheckpoint, trainCurvePNG, trainCurveSVG)
	return nil
}
