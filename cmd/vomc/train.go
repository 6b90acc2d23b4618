package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/trainrun"
)

// The files of a training run's directory (see trainrun).
const (
	trainCheckpoint  = trainrun.CheckpointFile
	trainModel       = trainrun.ModelFile
	trainConfigJSON  = trainrun.ConfigFile
	trainTrainConfig = trainrun.TrainConfigFile
	trainLog         = trainrun.LogFile
	trainCurvePNG    = trainrun.CurvePNG
	trainCurveSVG    = trainrun.CurveSVG
)

// flags that may be given together with --resume (the others are taken
// from the checkpoint).
var resumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true, "allow-unverified": true, "engine": true}

// trainFlagOf names the flag of each TrainConfig field (JSON name) that
// has one.
var trainFlagOf = map[string]string{"batch_size": "--batch", "epochs": "--epochs", "max_steps": "--max-steps",
	"lr": "--lr", "min_lr": "--min-lr", "warmup_steps": "--warmup", "weight_decay": "--wd", "clip_norm": "--clip",
	"patience": "--patience", "log_every": "--log-every"}

// checkTrainConfig validates tc, naming the flag of a bad value.
func checkTrainConfig(tc transformer.TrainConfig) error {
	err := tc.Validate()
	var fe *transformer.TrainConfigError
	if errors.As(err, &fe) {
		if f, ok := trainFlagOf[fe.Field]; ok {
			return usagef("%s: %s", f, fe.Msg)
		}
	}
	return err
}

func runTrain(args []string) error {
	fs := newFlags("train", "[flags] --data DIR --out DIR", `
Trains a decoder-only transformer on a data set made by 'vomc data' (its
windows, or each window cut into windows of -N symbols) with AdamW, a linear
warm-up and cosine decay, gradient clipping, per-epoch shuffling, and early
stopping on a validation set (--val DIR, or a fraction --val-frac of the
training trees, so that no tree has windows on both sides). Losses are mean
next-symbol cross-entropies in nats per symbol.

--out DIR receives config.json (the model's architecture), train_config.json,
train.jsonl (one JSON line every --log-every steps and at every epoch end:
step, epoch, train_loss, val_loss, lr, grad_norm, tokens_per_s, elapsed_s),
checkpoint.safetensors (everything needed to continue, written atomically
every --checkpoint-every steps and at every epoch end), and at the end
model.safetensors (the best parameters; config in its metadata) and
curve.png/curve.svg (the training curve). 'vomc eval --methods tf:path=DIR'
evaluates the trained model.

A run that was interrupted (Ctrl-C, a crash, a kill) continues with
'vomc train --out DIR --resume' from its last checkpoint, with exactly the
losses and parameters it would have had without the interruption. With
--resume only --data, --val and --checkpoint-every may be given (the data
is checked against the checksums stored in the checkpoint).

--engine torch trains with vomc's PyTorch engine (python/vomc_torch, carried
in this binary; the interpreter is $VOMC_PYTHON, else python3 or
/usr/bin/python3 with torch and numpy) on --device auto|cpu|cuda, with the
same flags, windows, shuffles, initial parameters and files; on CUDA it uses
bf16 autocast (--amp), fused attention and AdamW, TF32, and --compile. Its
checkpoints are vomc's, so a run resumes on either engine (--resume takes
the engine the run was started with unless --engine is given). --arch lstm
trains an LSTM instead (torch engine only; evaluate it with 'vomc predict'
and the npy:path= method). --snapshots log:K keeps the model at K
log-spaced steps in DIR/snapshots/ for 'vomc dynamics'.

The defaults are the paper's (batch 512, ≤ 100 epochs, patience 15, AdamW
with PyTorch's defaults) with 8 heads and E=128.`)
	data := fs.String("data", "", "training data set directory (from 'vomc data')")
	valDir := fs.String("val", "", "validation data set directory (default: --val-frac of the training trees)")
	valFrac := fs.Float64("val-frac", 0.05, "fraction of the training trees held out for validation when --val is not given (0: no validation)")
	N := fs.Int("N", 0, "window length: cut every window of the data set into windows of N symbols (0: the data set's N)")
	out := fs.String("out", "", "output directory (the model directory)")
	resume := fs.Bool("resume", false, "continue the run in --out from its checkpoint")
	force := fs.Bool("force", false, "start afresh even if --out holds a run")
	layers := fs.Int("layers", 2, "number of layers L")
	heads := fs.String("heads", "8", "attention heads: one number for every layer, or one per layer (e.g. 2,1)")
	E := fs.Int("E", 128, "embedding dimension E")
	ff := fs.Bool("ff", true, "feed-forward sub-layers (hidden width 4E)")
	noFF := fs.Bool("no-ff", false, "attention-only network (same as --ff=false)")
	ln := fs.Bool("layernorm", true, "pre-LayerNorms (before attention, feed-forward and the output head)")
	act := fs.String("act", transformer.GELU, "feed-forward activation: relu or gelu (exact erf GELU)")
	pos := fs.String("pos", transformer.Learned, "positional embedding: learned or sinusoidal")
	tc := transformer.DefaultTrainConfig()
	fs.IntVar(&tc.BatchSize, "batch", tc.BatchSize, "windows per step")
	fs.IntVar(&tc.Epochs, "epochs", tc.Epochs, "maximum number of epochs")
	fs.IntVar(&tc.MaxSteps, "max-steps", 0, "stop after this many steps (0: no limit); it is then the schedule's length")
	fs.IntVar(&tc.Patience, "patience", tc.Patience, "early stopping after this many epochs without a better validation loss (0: never)")
	fs.Float64Var(&tc.LR, "lr", tc.LR, "peak learning rate")
	fs.Float64Var(&tc.MinLR, "min-lr", tc.MinLR, "learning rate at the end of the cosine decay")
	fs.IntVar(&tc.WarmupSteps, "warmup", tc.WarmupSteps, "linear warm-up steps")
	fs.Float64Var(&tc.ClipNorm, "clip", tc.ClipNorm, "gradient-norm clipping bound (0: none)")
	fs.Float64Var(&tc.WeightDecay, "wd", tc.WeightDecay, "AdamW weight decay")
	fs.BoolVar(&tc.SumOverWindow, "sum-loss", false, "gradient of the window-summed loss (the paper's) instead of the per-symbol mean")
	fs.Uint64Var(&tc.Seed, "seed", 1, "random seed (initialisation, validation split, shuffling)")
	fs.IntVar(&tc.LogEvery, "log-every", 10, "write a log line every this many steps (0: only at epoch ends)")
	ckptEvery := fs.Int("checkpoint-every", 100, "write the checkpoint every this many steps (and at every epoch end)")
	allowUnverified := fs.Bool("allow-unverified", false, "with --resume: accept a checkpoint without a checksum (written by an earlier vomc)")
	engine := fs.String("engine", trainrun.EngineGo, "training engine: go (vomc's CPU engine) or torch (PyTorch, CPU or CUDA)")
	tor := &trainrun.Torch{Stderr: os.Stderr}
	torchFlags(fs, tor)
	snapshots := fs.String("snapshots", "", "keep the model at these steps in DIR/snapshots/ for 'vomc dynamics': log:K (K log-spaced steps), every:S, or a list 10,100,1000")
	snapEvery := fs.Int("snapshot-every", 0, "keep the model every S steps (same as --snapshots every:S)")
	arch := fs.String("arch", "transformer", "model: transformer, or lstm (torch engine; -E is its embedding, --hidden its width, --layers its depth)")
	hidden := fs.Int("hidden", 0, "LSTM width (default: E)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	if *ckptEvery < 0 {
		return usagef("--checkpoint-every %d is negative", *ckptEvery)
	}
	// The engine is chosen here, once: a resumed run keeps its own unless
	// --engine is given.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *resume && !given["engine"] {
		*engine = trainrun.RunEngine(*out)
	}
	if err := trainrun.CheckEngine(*engine); err != nil {
		return usageError{"--" + err.Error()}
	}
	if *engine == trainrun.EngineTorch {
		// before anything is written: the settings, then Python, torch,
		// numpy and the device
		if err := tor.Validate(); err != nil {
			return usageError{err.Error()}
		}
		if given["allow-unverified"] {
			return usagef("--allow-unverified: the torch engine resumes verified checkpoints only")
		}
		if given["hidden"] && *arch != "lstm" {
			return usagef("--hidden is the width of --arch lstm")
		}
		if _, err := tor.Check(); err != nil {
			return err
		}
	} else {
		for _, f := range torchOnlyFlags {
			if given[f] {
				return usagef("--%s needs --engine torch", f)
			}
		}
	}
	if *snapEvery < 0 || *snapEvery > 0 && *snapshots != "" {
		return usagef("--snapshot-every %d: want S ≥ 1, and not with --snapshots", *snapEvery)
	}
	if *snapEvery > 0 {
		*snapshots = fmt.Sprintf("every:%d", *snapEvery)
	}
	if _, err := trainrun.SnapshotSteps(*snapshots, 1); err != nil {
		return usageError{"--" + err.Error()}
	}
	if *arch != "transformer" && (*arch != "lstm" || *engine != trainrun.EngineTorch) {
		return usagef("--arch %q: want transformer, or lstm with --engine torch", *arch)
	}
	if *resume {
		allowed := resumeFlags
		if *engine == trainrun.EngineTorch {
			allowed = torchResumeFlags
		}
		c, train, val, err := loadResume(fs, allowed, *out, *data, *valDir, *allowUnverified)
		if err != nil {
			return err
		}
		snaps, err := trainrun.SnapshotSteps(c.Meta[trainrun.MetaSnapshots], transformer.TotalSteps(c.Train, c.TrainWindows))
		if err != nil {
			return err
		}
		if *engine == trainrun.EngineTorch {
			return trainTorch(tor, trainrun.TorchRun{Dir: *out, CheckpointEvery: *ckptEvery, Data: *data, Val: *valDir, Snapshots: snaps})
		}
		if c.ModelFormat != "" {
			return fmt.Errorf("the run in %s trains a %s model (%s): resume it with --engine torch", *out, c.ModelFormat, c.ModelConfig)
		}
		if err := trainrun.CheckMemory(c.Config, c.Train.BatchSize, train); err != nil {
			return err
		}
		tr, err := c.Resume(train, val)
		if err != nil {
			return err
		}
		opts := runOptions(*out, c.Meta, *ckptEvery)
		opts.Snapshots = snaps
		r, err := resumeRun(tr, opts)
		if err != nil {
			return err
		}
		return trainGo(r, *out)
	}
	spec, err := newTrainSpec(trainFlags{data: *data, valDir: *valDir, valFrac: *valFrac, N: *N, out: *out, force: *force,
		layers: *layers, heads: *heads, E: *E, ff: *ff && !*noFF, ln: *ln, act: *act, pos: *pos, tc: tc})
	if err != nil {
		return err
	}
	if *snapshots != "" {
		spec.meta[trainrun.MetaSnapshots] = *snapshots
	}
	snaps, _ := trainrun.SnapshotSteps(*snapshots, transformer.TotalSteps(tc, spec.train.Windows()))
	if *engine == trainrun.EngineTorch {
		if *arch == "lstm" {
			h := *hidden
			if h == 0 {
				h = *E
			}
			if h < 1 || *layers < 1 {
				return usagef("--arch lstm needs --layers ≥ 1 and --hidden ≥ 1 (got %d, %d)", *layers, h)
			}
			conf := map[string]any{"arch": "lstm", "alphabet": spec.cfg.Alphabet, "context": spec.cfg.Context,
				"embed": *E, "hidden": h, "layers": *layers}
			if err := trainrun.StartTorchModule(*out, conf, tc, spec.meta); err != nil {
				return err
			}
		} else if err := trainrun.StartTorch(*out, spec.cfg, tc, tc.Seed, spec.meta, spec.train, spec.val); err != nil {
			return err
		}
		return trainTorch(tor, trainrun.TorchRun{Dir: *out, CheckpointEvery: *ckptEvery, Snapshots: snaps})
	}
	if err := trainrun.CheckMemory(spec.cfg, tc.BatchSize, spec.train); err != nil {
		return err
	}
	files, err := trainrun.ConfigFiles(spec.cfg, tc, spec.meta, trainrun.EngineGo)
	if err != nil {
		return err
	}
	tr, err := trainrun.NewTrainer(spec.cfg, tc, tc.Seed, spec.train, spec.val)
	if err != nil {
		return err
	}
	opts := runOptions(*out, spec.meta, *ckptEvery)
	opts.Snapshots = snaps
	r, err := trainrun.Start(tr, opts, files...)
	if err != nil {
		return err
	}
	nv := 0
	if spec.val != nil {
		nv = spec.val.Windows()
	}
	fmt.Printf("%s: %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
		tr.Model.Name(), spec.cfg.NumParams(), spec.train.Windows(), nv, spec.cfg.Context, tr.TotalSteps())
	fmt.Printf("training memory ≈ %s\n", sysmem.GiB(trainrun.MemoryBytes(spec.cfg, tc.BatchSize, spec.train)))
	return trainGo(r, *out)
}

// trainGo runs r (the Go engine) to its end and writes the model.
func trainGo(r *trainrun.Run[*transformer.Activations, *transformer.Model], out string) error {
	if err := runTrainer(r, "train"); err != nil {
		return err
	}
	tr := r.Trainer
	if err := fsutil.WriteFile(filepath.Join(out, trainModel), true, tr.Model.WriteSafetensors); err != nil {
		return err
	}
	how := stopReason(tr.Stopped, tr.Cfg.Patience, tr.Cfg.MaxSteps, tr.Step)
	fmt.Printf("trained %d steps, %d epochs (%s) in %s", tr.Step, tr.Epoch, how, tr.ElapsedTotal().Round(time.Second))
	if !math.IsInf(tr.BestVal, 1) {
		fmt.Printf("; best validation loss %.4f nats/symbol (%.4f bits), model has the best parameters", tr.BestVal, tr.BestVal/math.Ln2)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s,%s,%s,%s,%s}\n", out, trainModel, trainConfigJSON, trainTrainConfig, trainLog, trainCheckpoint, trainCurvePNG, trainCurveSVG)
	return nil
}

// trainFlags are the flags of a new training run.
type trainFlags struct {
	data, valDir, out, heads, act, pos string
	valFrac                            float64
	N, layers, E                       int
	force, ff, ln                      bool
	tc                                 transformer.TrainConfig
}

// trainSpec is a new run, checked: the model, the data's metadata and
// windows.
type trainSpec struct {
	cfg        transformer.Config
	meta       map[string]string
	train, val transformer.Windows
}

// newTrainSpec checks the flags of a new run and reads its data; only when
// all is well does --force clear an old run in the output directory.
func newTrainSpec(f trainFlags) (*trainSpec, error) {
	if f.data == "" {
		return nil, usagef("--data DIR is required")
	}
	if err := checkTrainConfig(f.tc); err != nil {
		return nil, err
	}
	if f.layers < 0 || f.layers > transformer.MaxLayers {
		return nil, usagef("--layers %d outside 0..%d", f.layers, transformer.MaxLayers)
	}
	if f.E < 1 || f.E > transformer.MaxEmbed {
		return nil, usagef("-E %d outside 1..%d", f.E, transformer.MaxEmbed)
	}
	if err := trainrun.CheckDir(f.out, false); err != nil && !f.force {
		return nil, checkRunDir(f.out, false) // refused early, with the advice
	}
	hs, err := parseHeads(f.heads, f.layers)
	if err != nil {
		return nil, err
	}
	if !(f.valFrac >= 0 && f.valFrac < 1) {
		return nil, usagef("--val-frac %g outside [0, 1)", f.valFrac)
	}
	if f.N < 0 {
		return nil, usagef("-N %d is negative", f.N)
	}
	spec := trainrun.DataSpec{Data: f.data, Val: f.valDir, ValFrac: f.valFrac, N: f.N, SplitSeed: f.tc.Seed}
	train, val, A, meta, err := spec.Load()
	if errors.Is(err, trainrun.ErrWindowLength) {
		return nil, usageError{err.Error()}
	}
	if err != nil {
		return nil, err
	}
	cfg := transformer.Config{Layers: f.layers, Heads: hs, Embed: f.E, Context: len(train.Window(0)), Alphabet: A,
		FeedForward: f.ff, LayerNorm: f.ln, Activation: f.act, Positional: f.pos}
	if err := cfg.Validate(); err != nil {
		return nil, usageError{err.Error()}
	}
	if err := checkRunDir(f.out, f.force); err != nil { // every check passed: --force may clear the old run
		return nil, err
	}
	return &trainSpec{cfg: cfg, meta: meta, train: train, val: val}, nil
}

// parseHeads reads "8" (every layer) or "2,1" (one per layer).
func parseHeads(s string, L int) ([]int, error) {
	parts := strings.Split(s, ",")
	var hs []int
	for _, p := range parts {
		h, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || h < 1 {
			return nil, usagef("--heads %q: want positive integers", s)
		}
		hs = append(hs, h)
	}
	if len(hs) == 1 {
		for len(hs) < L {
			hs = append(hs, hs[0])
		}
		hs = hs[:L]
	}
	if len(hs) != L {
		return nil, usagef("--heads %q gives %d head counts for %d layers", s, len(hs), L)
	}
	return hs, nil
}
