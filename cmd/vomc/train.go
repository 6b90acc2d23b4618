package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

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

// optionFlags names the flag of each trainrun.OptionError option (the
// run's settings and the TrainConfig fields by JSON name) that has one.
var optionFlags = map[string]string{"data": "--data", "layers": "--layers", "embed": "-E", "heads": "--heads", "val_frac": "--val-frac",
	"N": "-N", "arch": "--arch", "batch_size": "--batch", "epochs": "--epochs", "max_steps": "--max-steps", "lr": "--lr", "min_lr": "--min-lr",
	"warmup_steps": "--warmup", "weight_decay": "--wd", "clip_norm": "--clip", "patience": "--patience", "log_every": "--log-every"}

const trainUsage = `
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
with PyTorch's defaults) with 8 heads and E=128.`

// trainCmd is a parsed 'vomc train' command line: the run's options and
// the flags that choose and check them.
type trainCmd struct {
	fs                *flag.FlagSet
	o                 trainrun.TrainOptions
	tor               *trainrun.Torch
	engine, snapshots string
	snapEvery         int
	noFF              bool
	given             map[string]bool
}

// newTrainCmd defines the flags of 'vomc train'.
func newTrainCmd() *trainCmd {
	c := &trainCmd{fs: newFlags("train", "[flags] --data DIR --out DIR", trainUsage), tor: &trainrun.Torch{Stderr: os.Stderr}}
	fs, o, m := c.fs, &c.o, &c.o.Model
	o.Train = transformer.DefaultTrainConfig()
	tc := &o.Train
	fs.StringVar(&o.Data.Data, "data", "", "training data set directory (from 'vomc data')")
	fs.StringVar(&o.Data.Val, "val", "", "validation data set directory (default: --val-frac of the training trees)")
	fs.Float64Var(&o.Data.ValFrac, "val-frac", 0.05, "fraction of the training trees held out for validation when --val is not given (0: no validation)")
	fs.IntVar(&o.Data.N, "N", 0, "window length: cut every window of the data set into windows of N symbols (0: the data set's N)")
	fs.StringVar(&o.Dir, "out", "", "output directory (the model directory)")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run in --out from its checkpoint")
	fs.BoolVar(&o.Force, "force", false, "start afresh even if --out holds a run")
	fs.IntVar(&m.Layers, "layers", 2, "number of layers L")
	fs.StringVar(&m.Heads, "heads", "8", "attention heads: one number for every layer, or one per layer (e.g. 2,1)")
	fs.IntVar(&m.Embed, "E", 128, "embedding dimension E")
	fs.BoolVar(&m.FeedForward, "ff", true, "feed-forward sub-layers (hidden width 4E)")
	fs.BoolVar(&c.noFF, "no-ff", false, "attention-only network (same as --ff=false)")
	fs.BoolVar(&m.LayerNorm, "layernorm", true, "pre-LayerNorms (before attention, feed-forward and the output head)")
	fs.StringVar(&m.Activation, "act", transformer.GELU, "feed-forward activation: relu or gelu (exact erf GELU)")
	fs.StringVar(&m.Positional, "pos", transformer.Learned, "positional embedding: learned or sinusoidal")
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
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 100, "write the checkpoint every this many steps (and at every epoch end)")
	fs.BoolVar(&o.AllowUnverified, "allow-unverified", false, "with --resume: accept a checkpoint without a checksum (written by an earlier vomc)")
	fs.StringVar(&c.engine, "engine", trainrun.EngineGo, "training engine: go (vomc's CPU engine) or torch (PyTorch, CPU or CUDA)")
	torchFlags(fs, c.tor)
	fs.StringVar(&c.snapshots, "snapshots", "", "keep the model at these steps in DIR/snapshots/ for 'vomc dynamics': log:K (K log-spaced steps), every:S, or a list 10,100,1000")
	fs.IntVar(&c.snapEvery, "snapshot-every", 0, "keep the model every S steps (same as --snapshots every:S)")
	fs.StringVar(&m.Arch, "arch", trainrun.ArchTransformer, "model: transformer, or lstm (torch engine; -E is its embedding, --hidden its width, --layers its depth)")
	fs.IntVar(&m.Hidden, "hidden", 0, "LSTM width (default: E)")
	return c
}

func runTrain(args []string) error {
	c := newTrainCmd()
	if err := parse(c.fs, args); err != nil {
		return err
	}
	eng, err := c.check()
	if err != nil {
		return err
	}
	sigs := []os.Signal{os.Interrupt}
	if eng.EngineName() == trainrun.EngineTorch {
		sigs = append(sigs, syscall.SIGTERM)
	}
	ctx, stop := signal.NotifyContext(trainContext(), sigs...)
	defer stop()
	c.o.Out, c.o.Progress = os.Stdout, os.Stderr
	c.o.OnStep = func(step int) {
		if trainStepHook != nil {
			trainStepHook(step)
		}
	}
	s, err := trainrun.Train(ctx, eng, c.o)
	if err != nil {
		return trainError(err, c.o.Dir)
	}
	how := stopReason(s.Stopped, s.Patience, s.MaxSteps, s.Step)
	fmt.Printf("trained %d steps, %d epochs (%s) in %s", s.Step, s.Epoch, how, s.Elapsed.Round(time.Second))
	if s.Engine == trainrun.EngineTorch {
		fmt.Print(" with the torch engine")
	}
	if s.HasValidation() {
		fmt.Printf("; best validation loss %.4f nats/symbol (%.4f bits), model has the best parameters", s.BestVal, s.BestVal/math.Ln2)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s,%s,%s,%s,%s}\n", c.o.Dir, trainModel, trainConfigJSON, trainTrainConfig, trainLog, trainCheckpoint, trainCurvePNG, trainCurveSVG)
	return nil
}

// check checks the flags that the run's options do not (their
// combinations, the engine's) and chooses the engine, once: a resumed run
// keeps its own unless --engine is given.
func (c *trainCmd) check() (trainrun.Engine, error) {
	o := &c.o
	if o.Dir == "" {
		return nil, usagef("--out DIR is required")
	}
	if c.fs.NArg() != 0 {
		return nil, usagef("unexpected arguments %v", c.fs.Args())
	}
	if o.CheckpointEvery < 0 {
		return nil, usagef("--checkpoint-every %d is negative", o.CheckpointEvery)
	}
	o.Model.FeedForward = o.Model.FeedForward && !c.noFF
	c.given = map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { c.given[f.Name] = true })
	if o.Resume && !c.given["engine"] {
		c.engine = trainrun.RunEngine(o.Dir)
	}
	eng, err := trainrun.NewEngine(c.engine, c.tor)
	if err != nil {
		return nil, usageError{"--" + err.Error()}
	}
	if err := c.checkEngine(); err != nil {
		return nil, err
	}
	if err := c.checkModel(); err != nil {
		return nil, err
	}
	return eng, nil
}

// checkEngine checks the engine's flags and, for the torch engine, its
// settings, then Python, torch, numpy and the device, before anything is
// written.
func (c *trainCmd) checkEngine() error {
	if c.engine != trainrun.EngineTorch {
		for _, f := range torchOnlyFlags {
			if c.given[f] {
				return usagef("--%s needs --engine torch", f)
			}
		}
		return nil
	}
	if err := c.tor.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if c.given["allow-unverified"] {
		return usagef("--allow-unverified: the torch engine resumes verified checkpoints only")
	}
	if c.given["hidden"] && c.o.Model.Arch != trainrun.ArchLSTM {
		return usagef("--hidden is the width of --arch lstm")
	}
	_, err := c.tor.Check()
	return err
}

// checkModel checks the snapshot, architecture and resume flags.
func (c *trainCmd) checkModel() error {
	o, m := &c.o, c.o.Model
	if c.snapEvery < 0 || c.snapEvery > 0 && c.snapshots != "" {
		return usagef("--snapshot-every %d: want S ≥ 1, and not with --snapshots", c.snapEvery)
	}
	if o.Snapshots = c.snapshots; c.snapEvery > 0 {
		o.Snapshots = fmt.Sprintf("every:%d", c.snapEvery)
	}
	if _, err := trainrun.SnapshotSteps(o.Snapshots, 1); err != nil {
		return usageError{"--" + err.Error()}
	}
	if m.Arch != trainrun.ArchTransformer && (m.Arch != trainrun.ArchLSTM || c.engine != trainrun.EngineTorch) {
		return usagef("--arch %q: want transformer, or lstm with --engine torch", m.Arch)
	}
	if o.Resume {
		allowed := resumeFlags
		if c.engine == trainrun.EngineTorch {
			allowed = torchResumeFlags
		}
		return checkResumeFlags(c.fs, allowed)
	}
	if h := cmp.Or(m.Hidden, m.Embed); m.Arch == trainrun.ArchLSTM && (h < 1 || m.Layers < 1) {
		return usagef("--arch lstm needs --layers ≥ 1 and --hidden ≥ 1 (got %d, %d)", m.Layers, h)
	}
	return nil
}

// trainError adds to an error of trainrun.Train the flags that name the
// problem or say how to go on.
func trainError(err error, dir string) error {
	var oe *trainrun.OptionError
	var fe *trainrun.ModelFormatError
	switch {
	case errors.As(err, &oe) && oe.Option == "":
		return usageError{oe.Msg}
	case errors.As(err, &oe) && optionFlags[oe.Option] != "":
		return usageError{optionFlags[oe.Option] + oe.Msg}
	case errors.As(err, &oe) && oe.Err != nil:
		return oe.Err
	case errors.Is(err, transformer.ErrNoChecksum):
		return fmt.Errorf("%w; resume it anyway with --allow-unverified", err)
	case errors.As(err, &fe):
		return fmt.Errorf("the run in %s trains a %s model (%s): resume it with --engine torch", fe.Dir, fe.Format, fe.Config)
	}
	return runError(err, "train", dir)
}
