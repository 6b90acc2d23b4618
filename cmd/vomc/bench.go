package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/perf"
	"github.com/vomc/vomc/transformer/trainrun"
)

const benchUsage = `
'vomc bench train' measures transformer training throughput instead (see
'vomc bench train -h'); 'vomc bench compress FILE...' compression ratios and
speeds next to xz, zstd, bzip2 and 7z; 'vomc bench logits' prints a trained
model's logits for an input, to compare with another implementation.

Without a sub-command: measures CTW throughput on one core: the log marginal likelihood and the full
predictive distribution at every position, each also as a ratio to a
counts-only pass over the same data measured in the same run (the floor any
CTW implementation pays). Default: A=3, D=5, 1e6 symbols from a tree of the
paper's prior.`

func runBench(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "train":
			return runBenchTrain(args[1:])
		case "logits":
			return runBenchLogits(args[1:])
		case "compress":
			return runBenchCompress(args[1:])
		}
	}
	fs := newFlags("bench", "[train|compress|logits] [flags]", benchUsage)
	A := fs.Int("A", 3, "alphabet size")
	D := fs.Int("D", 5, "maximum depth")
	lambda := fs.Float64("lambda", 0.15, "stop probability λ")
	n := fs.Int("n", 1_000_000, "number of symbols")
	reps := fs.Int("reps", 5, "repetitions (the best is reported)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *n < 1 || *reps < 1 {
		return usagef("-n and -reps must be positive")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	r, err := perf.BenchCTW(*A, *D, *lambda, *n, *reps, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%s/%s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	r.Write(os.Stdout)
	return nil
}

const benchTrainUsage = `
Measures transformer training throughput in tokens per second (forward,
backward, gradient clipping and AdamW on float32 random windows) and the
memory used, for the configurations
  C1 = L=2, 4 heads, E=64,  N=256, batch 32
  C2 = L=4, 8 heads, E=128, N=512, batch 16
(full transformers: FF 4E, pre-LayerNorm, exact GELU, learned positions,
A=3), paper = L=4, 8 heads, E=128, N=1536, batch 512 (the paper's, for a
GPU), or custom ones written L=..:H=..:E=..:N=..:B=..[:A=..].
scripts/bench_train.sh runs the identical models in PyTorch and prints the
ratio.

--engine torch measures vomc's PyTorch engine instead (--device, --amp,
--compile as for 'vomc train'), and, in the same process and on the same
device, a plain eager float32 PyTorch loop of the same model (--plain=false:
not), printing both and their ratio.`

func runBenchTrain(args []string) error {
	fs := newFlags("bench train", "[flags]", benchTrainUsage)
	configs := fs.String("configs", "C1,C2", "comma-separated configurations")
	var o perf.EngineBenchOptions
	fs.IntVar(&o.Steps, "steps", 5, "timed steps per configuration")
	fs.IntVar(&o.Warmup, "warmup", 1, "untimed steps first")
	fs.IntVar(&o.Threads, "threads", runtime.GOMAXPROCS(0), "GOMAXPROCS (cores used)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed (initialisation and windows)")
	asJSON := fs.Bool("json", false, "print the reports as JSON instead of a table")
	engine := fs.String("engine", trainrun.EngineGo, "training engine: go or torch")
	tor := &trainrun.Torch{}
	torchFlags(fs, tor)
	fs.BoolVar(&o.Plain, "plain", true, "torch engine: also time a plain eager float32 PyTorch loop")
	if err := parse(fs, args); err != nil {
		return err
	}
	eng, err := trainrun.NewEngine(*engine, tor)
	if err != nil {
		return usageError{"--" + err.Error()}
	}
	if o.Steps < 1 || o.Warmup < 0 || o.Threads < 1 || o.Threads > 4096 {
		return usagef("--steps and --threads must be positive, --warmup non-negative")
	}
	bs, err := perf.ParseTrainBenches(*configs, eng)
	var ce *perf.ConfigError
	if errors.As(err, &ce) {
		return usageError{err.Error()}
	}
	if err != nil {
		return err
	}
	r, err := perf.BenchEngine(trainContext(), eng, bs, o)
	if err != nil {
		return err
	}
	return r.Write(os.Stdout, *asJSON)
}

const benchLogitsUsage = `
Runs a trained model (a 'vomc train' directory or a .safetensors file) on one
window and prints, as JSON, its config, the input and the (T, A) logits
(float32 values): {"config": …, "input": […], "logits": [[…], …]}. Used by
scripts/pytorch_bench.py to check that PyTorch computes the same function.`

func runBenchLogits(args []string) error {
	fs := newFlags("bench logits", "--model PATH --input SYMBOLS [--out FILE]", benchLogitsUsage)
	model := fs.String("model", "", "model directory or .safetensors file")
	input := fs.String("input", "", "comma-separated symbols (at most the model's N)")
	out := fs.String("out", "", "output file (default: standard output)")
	force := fs.Bool("force", false, "overwrite --out")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *model == "" || *input == "" {
		return usagef("--model and --input are required")
	}
	if err := checkOutputs(*force, *out); err != nil {
		return err
	}
	l, err := perf.ModelLogits(*model, *input)
	var ie *perf.InputError
	if errors.As(err, &ie) {
		return usageError{"--" + err.Error()}
	}
	if err != nil {
		return err
	}
	b, err := l.JSON()
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return fsutil.WriteBytes(*out, *force, b)
}
