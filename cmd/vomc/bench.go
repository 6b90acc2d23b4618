package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/compress/toolbench"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/perf"
	"github.com/vomc/vomc/trainrun"
)

// benchCommands are the sub-commands of 'vomc bench'.
var benchCommands = map[string]func(args []string) error{"train": runBenchTrain, "logits": runBenchLogits, "compress": runBenchCompress}

func runBench(args []string) error {
	if len(args) > 0 && benchCommands[args[0]] != nil {
		return benchCommands[args[0]](args[1:])
	}
	fs := newFlags("bench")
	A := fs.Int("A", 3, "alphabet size")
	D := fs.Int("D", 5, "maximum depth")
	lambda := fs.Float64("lambda", 0.15, "stop probability λ")
	n := fs.Int("n", 1_000_000, "number of symbols")
	reps := fs.Int("reps", 5, "repetitions (the best is reported)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parseArgs(fs, args, 0, ""); err != nil {
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
	fs := newFlags("bench train")
	configs := fs.String("configs", "C1,C2", "comma-separated configurations")
	var o perf.EngineBenchOptions
	fs.IntVar(&o.Steps, "steps", 5, "timed steps per configuration")
	fs.IntVar(&o.Warmup, "warmup", 1, "untimed steps first")
	fs.IntVar(&o.Threads, "threads", runtime.GOMAXPROCS(0), "GOMAXPROCS (cores used)")
	fs.Uint64Var(&o.Seed, "seed", 1, "random seed (initialisation and windows)")
	asJSON := fs.Bool("json", false, "print the reports as JSON instead of a table")
	spec := trainrun.Spec{CPU: compute(), Torch: &trainrun.Torch{}}
	spec.AddFlags(fs)
	fs.BoolVar(&o.Plain, "plain", true, "with --engine torch: also time a plain eager float32 PyTorch loop")
	fs.BoolVar(&o.Profile, "profile", false, "with --engine go: time every backend op, at 1 thread and at --threads, and print a per-op table")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if o.Steps < 1 || o.Warmup < 0 || o.Threads < 1 || o.Threads > 4096 {
		return usagef("--steps and --threads must be positive, --warmup non-negative")
	}
	eng, err := trainrun.NewEngine(spec)
	if err != nil {
		return trainError(err, "bench train", "")
	}
	defer eng.Close()
	bs, err := perf.ParseTrainBenches(*configs, eng)
	if err != nil {
		return flagError(err)
	}
	r, err := perf.BenchEngine(trainContext(), eng, bs, o)
	if err != nil {
		return err
	}
	return r.Write(os.Stdout, *asJSON)
}

func runBenchLogits(args []string) error {
	fs := newFlags("bench logits")
	model := fs.String("model", "", "model directory or .safetensors file")
	input := fs.String("input", "", "comma-separated symbols (at most the model's N)")
	out := fs.String("out", "", "output file (default: standard output)")
	force := fs.Bool("force", false, "overwrite --out")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if *model == "" || *input == "" {
		return usagef("--model and --input are required")
	}
	if err := fsutil.CheckOutputs(os.Stderr, *force, *out); err != nil {
		return err
	}
	l, err := perf.ModelLogits(compute(), *model, *input)
	if err != nil {
		return flagError(err)
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

func runCompress(args []string) error {
	fs := newFlags("compress")
	var mf compress.ModelSpec
	mf.AddFlags(fs)
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	quiet := fs.Bool("q", false, "do not print the summary line")
	if err := parseArgs(fs, args, 2, "IN and OUT"); err != nil {
		return err
	}
	m, err := mf.Build()
	if err != nil {
		return asUsage(err)
	}
	if err := checkMemory(fmt.Sprintf("the %s model's tables (--mem %d)", mf.Model, mf.MemMB), int64(mf.MemMB)<<20+sysmem.Base); err != nil {
		return err
	}
	t0 := time.Now()
	st, err := compress.CompressFile(fs.Arg(0), fs.Arg(1), m, *force, newSink(os.Stdout))
	if err != nil || *quiet {
		return err
	}
	fmt.Printf("%s: %d → %d bytes, %.4f bits/byte, %s, %.2f MB/s\n",
		fs.Arg(0), st.In, st.Out, st.BitsPerByte(), m.Name(), float64(st.In)/1e6/max(time.Since(t0).Seconds(), 1e-9))
	return nil
}

func runDecompress(args []string) error {
	fs := newFlags("decompress")
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	quiet := fs.Bool("q", false, "do not print the summary line")
	// the model memory accepted from an untrusted header without being asked
	maxMem := fs.Int("max-mem", 1024, "refuse a file whose model needs more than this many MiB of memory (the header is untrusted; compress's --mem is at most 4096)")
	if err := parseArgs(fs, args, 2, "IN and OUT"); err != nil {
		return err
	}
	if *maxMem < 1 {
		return usagef("--max-mem %d must be ≥ 1 MiB", *maxMem)
	}
	if avail := memAvailable() >> 20; avail > 0 && int64(*maxMem) > avail {
		*maxMem = int(avail)
	}
	t0 := time.Now()
	h, err := compress.DecompressFile(fs.Arg(0), fs.Arg(1), *maxMem, *force, newSink(os.Stdout))
	if err != nil || *quiet {
		return err
	}
	fmt.Printf("%s: %d bytes restored, %s, %.2f MB/s\n", fs.Arg(0), h.Size, h.ModelName(), float64(h.Size)/1e6/max(time.Since(t0).Seconds(), 1e-9))
	return nil
}

func runBenchCompress(args []string) error {
	fs := newFlags("bench compress")
	var mf compress.ModelSpec
	mf.AddFlags(fs)
	models := fs.String("models", "", "comma-separated models to compare, e.g. mix,ppm,ctw (default: --model)")
	tools := fs.Bool("tools", true, "also run the external compressors that are installed")
	runs := fs.Int("runs", 1, "timing runs per file and model (speeds are the best run)")
	if err := parseArgs(fs, args, -1, "at least one FILE"); err != nil {
		return err
	}
	ms, err := mf.BuildModels(*models)
	if err != nil {
		return asUsage(err)
	}
	var ext []toolbench.Tool
	if *tools {
		ext = toolbench.Available()
	}
	return toolbench.Report(os.Stdout, fs.Args(), ms, ext, *runs)
}
