package main

import (
	"errors"
	"fmt"
	"math"
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
var resumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true, "allow-unverified": true}

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
	var r *trainrun.Run[*transformer.Activations, *transformer.Model]
	if *resume {
		c, train, val, err := loadResume(fs, resumeFlags, *out, *data, *valDir, *allowUnverified)
		if err != nil {
			return err
		}
		if err := trainrun.CheckMemory(c.Config, c.Train.BatchSize, train); err != nil {
			return err
		}
		tr, err := c.Resume(train, val)
		if err != nil {
			return err
		}
		if r, err = resumeRun(tr, runOptions(*out, c.Meta, *ckptEvery)); err != nil {
			return err
		}
	} else {
		if *data == "" {
			return usagef("--data DIR is required")
		}
		if err := checkTrainConfig(tc); err != nil {
			return err
		}
		if *layers < 0 || *layers > transformer.MaxLayers {
			return usagef("--layers %d outside 0..%d", *layers, transformer.MaxLayers)
		}
		if *E < 1 || *E > transformer.MaxEmbed {
			return usagef("-E %d outside 1..%d", *E, transformer.MaxEmbed)
		}
		if err := checkRunDir(*out, *force); err != nil {
			return err
		}
		hs, err := parseHeads(*heads, *layers)
		if err != nil {
			return err
		}
		if !(*valFrac >= 0 && *valFrac < 1) {
			return usagef("--val-frac %g outside [0, 1)", *valFrac)
		}
		if *N < 0 {
			return usagef("-N %d is negative", *N)
		}
		absData, err := filepath.Abs(*data)
		if err != nil {
			return err
		}
		absVal := ""
		if *valDir != "" {
			if absVal, err = filepath.Abs(*valDir); err != nil {
				return err
			}
		}
		meta := map[string]string{"data": absData, "val": absVal, "val_frac": strconv.FormatFloat(*valFrac, 'g', -1, 64),
			"N": strconv.Itoa(*N), "split_seed": strconv.FormatUint(tc.Seed, 10)}
		train, val, A, err := trainData(meta)
		if err != nil {
			return err
		}
		T := len(train.Window(0))
		cfg := transformer.Config{Layers: *layers, Heads: hs, Embed: *E, Context: T, Alphabet: A,
			FeedForward: *ff && !*noFF, LayerNorm: *ln, Activation: *act, Positional: *pos}
		if err := cfg.Validate(); err != nil {
			return usageError{err.Error()}
		}
		if err := trainrun.CheckMemory(cfg, tc.BatchSize, train); err != nil {
			return err
		}
		files, err := trainrun.ConfigFiles(cfg, tc, meta)
		if err != nil {
			return err
		}
		tr, err := trainrun.NewTrainer(cfg, tc, tc.Seed, train, val)
		if err != nil {
			return err
		}
		if r, err = trainrun.Start(tr, runOptions(*out, meta, *ckptEvery), files...); err != nil {
			return err
		}
		nv := 0
		if val != nil {
			nv = val.Windows()
		}
		fmt.Printf("%s: %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
			tr.Model.Name(), cfg.NumParams(), train.Windows(), nv, T, tr.TotalSteps())
		fmt.Printf("training memory ≈ %s\n", sysmem.GiB(trainrun.MemoryBytes(cfg, tc.BatchSize, train)))
	}

	if err := runTrainer(r, "train"); err != nil {
		return err
	}
	tr := r.Trainer
	if err := fsutil.WriteFile(filepath.Join(*out, trainModel), true, tr.Model.WriteSafetensors); err != nil {
		return err
	}
	how := stopReason(tr.Stopped, tr.Cfg.Patience, tr.Cfg.MaxSteps, tr.Step)
	fmt.Printf("trained %d steps, %d epochs (%s) in %s", tr.Step, tr.Epoch, how, tr.ElapsedTotal().Round(time.Second))
	if !math.IsInf(tr.BestVal, 1) {
		fmt.Printf("; best validation loss %.4f nats/symbol (%.4f bits), model has the best parameters", tr.BestVal, tr.BestVal/math.Ln2)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s,%s,%s,%s,%s}\n", *out, trainModel, trainConfigJSON, trainTrainConfig, trainLog, trainCheckpoint, trainCurvePNG, trainCurveSVG)
	return nil
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
