package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vomc/vomc/transformer/trainrun"
)

// The PyTorch engine's flags (vomc train, bench train, predict and
// reproduce) and 'vomc predict'.

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

const predictUsage = `
Runs a trained model — a vomc transformer or any model trained by the
PyTorch engine (e.g. --arch lstm) — on every window of a data set with the
PyTorch engine and writes its per-position predictive distributions as a
.npy array (windows × N × A, float32; row t is P(x_{t+1} | x_1..x_t), row 0
uniform): the layout of the npy:path= method, so that
'vomc eval --data DIR --methods ctw,npy:path=FILE.npy' compares it with CTW.`

func runPredict(args []string) error {
	fs := newFlags("predict", "--model DIR|FILE --data DIR --out FILE.npy", predictUsage)
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
	return tor.Predict(trainContext(), *model, *data, *out)
}
