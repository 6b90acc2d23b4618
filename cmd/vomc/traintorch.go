package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vomc/vomc/perf"
	"github.com/vomc/vomc/transformer"
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

// trainTorch trains the run r with the torch engine to its end (Ctrl-C or
// SIGTERM: the engine saves its checkpoint) and prints the outcome.
func trainTorch(t *trainrun.Torch, r trainrun.TorchRun) error {
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir := r.Dir
	c, err := t.Train(ctx, r)
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

// benchTrainTorch times the torch engine (and a plain eager float32 loop)
// on each configuration and prints the reports.
func benchTrainTorch(t *trainrun.Torch, bs []perf.TrainBench, steps, warmup int, plain, asJSON bool) error {
	env, err := t.Check()
	if err != nil {
		return err
	}
	type row struct {
		Config  string                `json:"config"`
		Model   transformer.Config    `json:"model"`
		Reports []trainrun.TorchBench `json:"reports"`
	}
	var rows []row
	for _, b := range bs {
		reps, err := t.Bench(trainContext(), b.Model, b.Batch, steps, warmup, plain)
		if err != nil {
			return err
		}
		rows = append(rows, row{b.Name, b.Model, reps})
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	dev := env.Device
	if env.GPU != "" {
		dev += " (" + env.GPU + ")"
	}
	fmt.Printf("torch engine: Python %s, torch %s, device %s\n", env.PythonVersion, env.Torch, dev)
	fmt.Printf("training throughput (forward + backward + clipping + AdamW), random windows\n")
	fmt.Printf("%-6s %-34s %5s %9s %-7s %11s %12s  %s\n", "config", "model", "batch", "params", "mode", "step (mean)", "tokens/s", "features")
	for _, r := range rows {
		c := r.Model
		model := fmt.Sprintf("L=%d H=%v E=%d N=%d A=%d", c.Layers, c.Heads, c.Embed, c.Context, c.Alphabet)
		for _, rep := range r.Reports {
			fmt.Printf("%-6s %-34s %5d %9d %-7s %11s %12.0f  %s\n", r.Config, model, rep.Batch, rep.Params, rep.Mode,
				time.Duration(rep.MeanStep*float64(time.Second)).Round(time.Millisecond), rep.TokensPerSec, features(rep.Features))
		}
		if len(r.Reports) == 2 && r.Reports[1].TokensPerSec > 0 {
			fmt.Printf("%-6s engine / plain eager float32: %.2f×\n", r.Config, r.Reports[0].TokensPerSec/r.Reports[1].TokensPerSec)
		}
	}
	return nil
}

// features lists the speed features a report used.
func features(f map[string]any) string {
	var on []string
	for _, k := range []string{"amp", "sdpa", "tf32", "fused_adamw", "compile", "pinned_batches"} {
		switch v := f[k].(type) {
		case bool:
			if v {
				on = append(on, k)
			}
		case string:
			if v != "" && v != "off" {
				on = append(on, k+"="+v)
			}
		}
	}
	if len(on) == 0 {
		return "none (float32, explicit attention)"
	}
	return strings.Join(on, ",")
}

func runPredict(args []string) error {
	fs := newFlags("predict", "--model DIR|FILE --data DIR --out FILE.npy", `
Runs a trained model — a vomc transformer or any model trained by the
PyTorch engine (e.g. --arch lstm) — on every window of a data set with the
PyTorch engine and writes its per-position predictive distributions as a
.npy array (windows × N × A, float32; row t is P(x_{t+1} | x_1..x_t), row 0
uniform): the layout of the npy:path= method, so that
'vomc eval --data DIR --methods ctw,npy:path=FILE.npy' compares it with CTW.`)
	model := fs.String("model", "", "model.safetensors, or its run directory")
	data := fs.String("data", "", "data set directory (from 'vomc data')")
	out := fs.String("out", "", "output .npy file")
	force := fs.Bool("force", false, "replace --out if it exists")
	tor := &trainrun.Torch{Stderr: os.Stderr}
	torchFlags(fs, tor)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *model == "" || *data == "" || *out == "" || fs.NArg() != 0 {
		return usagef("--model, --data and --out are required (and nothing else)")
	}
	if _, err := os.Stat(*out); err == nil && !*force {
		return fmt.Errorf("%s exists: use --force to replace it", *out)
	}
	if _, err := tor.Check(); err != nil {
		return err
	}
	return tor.Predict(trainContext(), *model, *data, *out)
}
