package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/perf"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/kernels"
	"github.com/vomc/vomc/transformer/trainrun"
)

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
	fs := newFlags("bench", "[train|compress|logits] [flags]", `
'vomc bench train' measures transformer training throughput instead (see
'vomc bench train -h'); 'vomc bench compress FILE...' compression ratios and
speeds next to xz, zstd, bzip2 and 7z; 'vomc bench logits' prints a trained
model's logits for an input, to compare with another implementation.

Without a sub-command: measures CTW throughput on one core: the log marginal likelihood and the full
predictive distribution at every position, each also as a ratio to a
counts-only pass over the same data measured in the same run (the floor any
CTW implementation pays). Default: A=3, D=5, 1e6 symbols from a tree of the
paper's prior.`)
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

func runBenchTrain(args []string) error {
	fs := newFlags("bench train", "[flags]", `
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
not), printing both and their ratio.`)
	configs := fs.String("configs", "C1,C2", "comma-separated configurations")
	steps := fs.Int("steps", 5, "timed steps per configuration")
	warmup := fs.Int("warmup", 1, "untimed steps first")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "GOMAXPROCS (cores used)")
	seed := fs.Uint64("seed", 1, "random seed (initialisation and windows)")
	asJSON := fs.Bool("json", false, "print the reports as JSON instead of a table")
	engine := fs.String("engine", trainrun.EngineGo, "training engine: go or torch")
	tor := &trainrun.Torch{}
	torchFlags(fs, tor)
	plain := fs.Bool("plain", true, "torch engine: also time a plain eager float32 PyTorch loop")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := trainrun.CheckEngine(*engine); err != nil {
		return usageError{"--" + err.Error()}
	}
	if *steps < 1 || *warmup < 0 || *threads < 1 || *threads > 4096 {
		return usagef("--steps and --threads must be positive, --warmup non-negative")
	}
	var bs []perf.TrainBench
	for _, c := range strings.Split(*configs, ",") {
		b, err := perf.ParseTrainBench(strings.TrimSpace(c))
		if err != nil {
			return usageError{err.Error()}
		}
		if b.Batch > transformer.MaxBatch {
			return usagef("configuration %q: batch %d above %d", c, b.Batch, transformer.MaxBatch)
		}
		if *engine == trainrun.EngineTorch {
			bs = append(bs, b)
			continue
		}
		if err := sysmem.Check(b.Model.TrainingBytes(b.Batch, b.Model.Context), fmt.Sprintf("configuration %q", c)); err != nil {
			return err
		}
		bs = append(bs, b)
	}
	if *engine == trainrun.EngineTorch {
		return benchTrainTorch(tor, bs, *steps, *warmup, *plain, *asJSON)
	}
	prev := runtime.GOMAXPROCS(*threads)
	defer runtime.GOMAXPROCS(prev)
	var rs []*perf.TrainReport
	for _, b := range bs {
		r, err := perf.BenchTrain(b, *steps, *warmup, *seed)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rs)
	}
	fmt.Printf("%s/%s, %s, %d CPUs, kernel set %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.NumCPU(), kernels.Active())
	perf.WriteTrainReports(os.Stdout, rs)
	return nil
}

func runBenchLogits(args []string) error {
	fs := newFlags("bench logits", "--model PATH --input SYMBOLS [--out FILE]", `
Runs a trained model (a 'vomc train' directory or a .safetensors file) on one
window and prints, as JSON, its config, the input and the (T, A) logits
(float32 values): {"config": …, "input": […], "logits": [[…], …]}. Used by
scripts/pytorch_bench.py to check that PyTorch computes the same function.`)
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
	path := *model
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, trainModel)
	}
	m, err := transformer.LoadSafetensors(path)
	if err != nil {
		return err
	}
	var x []byte
	for _, f := range strings.Split(*input, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 || v >= m.Config.Alphabet {
			return usagef("--input: %q is not a symbol of 0..%d", f, m.Config.Alphabet-1)
		}
		x = append(x, byte(v))
	}
	T, A := len(x), m.Config.Alphabet
	if T > m.Config.Context {
		return usagef("--input has %d symbols, the model's context is N=%d", T, m.Config.Context)
	}
	acts := m.NewActivations(1, T, false)
	m.Forward(acts, x, 1, T)
	lg := acts.Logits()
	rows := make([][]float32, T)
	for t := range rows {
		rows[t] = lg[t*A : (t+1)*A]
	}
	in := make([]int, T)
	for i, v := range x {
		in[i] = int(v)
	}
	b, err := json.Marshal(map[string]any{"config": m.Config, "input": in, "logits": rows})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return fsutil.WriteBytes(*out, *force, b)
}
