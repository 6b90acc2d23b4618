package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer/trainrun"
)

// The files of a synth run's directory besides those of a training run
// (model.safetensors, train.jsonl, checkpoint.safetensors, curve.*).
const (
	synthModel = trainModel
	synthLog   = trainLog
	synthInfo  = "synth.json"
)

// synthResumeFlags may be given together with --resume.
var synthResumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true}

func runSynth(args []string) error {
	fs := newFlags("synth", "--variant tf20|nocounts|totalcounts|allcounts --data DIR --out DIR [flags]", `
Trains a synthetic "TF 2-0" model of the paper's Section 4.5 (Fig. 8): the
two constructed layers (context extension and statistics collection,
computed exactly by counting: package synth) followed by a trainable
feed-forward layer with its residual, h = a + W1·σ(W2·a + b2) + b1, and the
output layer softmax(Wo·h + bo). The variants give the FF layer
  tf20         a^(2) = (s; g; g←; pos)                    "TF 2-0"
  nocounts     (s; g)                                     "TF 2-0 w/o counts"
  totalcounts  (s; g; i)                                  "TF 2-0 total counts only"
  allcounts    (s; g; n_{s_l}, l=0..D; i)                 "TF 2-0 w/ all counts"
Counts enter as ln(1+c) (--count-norm log1p) or c/N (scale). --encoding
chooses the representation of TF 2-0's position i and of the counts:
  paper   pos = (1, cos(iπ/P), sin(iπ/P)), counts by --count-norm (default)
  log     pos = (1, ln(1+j)), counts ln(1+c)   (j = i−D, symbols seen)
  linear  pos = (1, j/N), counts c/N
so that log and linear give TF 2-0 its position exactly as the other
variants get their total count (only TF 2-0's features change). Position t
predicts x_{t+1} (T−1 targets per window, as for 'vomc train'); losses are
mean cross-entropies in nats per symbol.

Training is the engine's, as for 'vomc train': AdamW, warm-up and cosine
decay, clipping, per-epoch shuffling, validation (--val DIR, or --val-frac
of the training trees) at every epoch end, early stopping after --patience
epochs without a better validation loss (the best parameters are kept),
checkpoints every --checkpoint-every steps and at epoch ends. A run that
was interrupted continues with 'vomc synth --out DIR --resume', with
exactly the losses and parameters it would have had (only --data, --val
and --checkpoint-every may be given then).

--out DIR receives model.safetensors, train.jsonl (one JSON line every
--log-every steps and at every epoch end, as 'vomc train' writes),
checkpoint.safetensors, curve.png/curve.svg and synth.json (configuration
and summary). Evaluate with 'vomc eval --methods ctw,synth:path=DIR'.`)
	variant := fs.String("variant", "tf20", "feature variant: tf20, nocounts, totalcounts or allcounts")
	data := fs.String("data", "", "training data set directory (from 'vomc data')")
	valDir := fs.String("val", "", "validation data set directory (default: --val-frac of the training trees)")
	valFrac := fs.Float64("val-frac", 0.05, "fraction of the training trees held out for validation when --val is not given (0: none)")
	maxWin := fs.Int("max-windows", 0, "use only the first this many training windows (0: all)")
	out := fs.String("out", "", "output directory")
	force := fs.Bool("force", false, "start afresh even if --out holds a run")
	resume := fs.Bool("resume", false, "continue the run in --out from its checkpoint")
	D := fs.Int("D", 0, "depth D of the constructed layers (0: the data set's largest tree depth)")
	embed := fs.Int("embed", 0, "width of an optional linear input embedding (0: none, the FF acts on the features)")
	hidden := fs.Int("hidden", 0, "FF hidden width (0: 4 × the stream width)")
	act := fs.String("act", synth.GELU, "FF activation: gelu or relu")
	norm := fs.String("count-norm", synth.Log1p, "count normalisation: log1p (ln(1+c)) or scale (c/N); --encoding log and linear imply log1p and scale")
	enc := fs.String("encoding", synth.Paper, "representation of TF 2-0's position and of the counts: paper, log or linear")
	tc := synth.DefaultTrainConfig()
	fs.IntVar(&tc.BatchSize, "batch", tc.BatchSize, "windows per step")
	fs.IntVar(&tc.Epochs, "epochs", tc.Epochs, "maximum number of epochs")
	fs.IntVar(&tc.MaxSteps, "max-steps", 0, "stop after this many steps (0: no limit); it is then the schedule's length")
	fs.Float64Var(&tc.LR, "lr", tc.LR, "peak learning rate")
	fs.Float64Var(&tc.MinLR, "min-lr", tc.MinLR, "learning rate at the end of the cosine decay")
	fs.IntVar(&tc.WarmupSteps, "warmup", tc.WarmupSteps, "linear warm-up steps")
	fs.Float64Var(&tc.WeightDecay, "wd", tc.WeightDecay, "AdamW weight decay")
	fs.Float64Var(&tc.ClipNorm, "clip", tc.ClipNorm, "gradient-norm clipping bound (0: none)")
	fs.IntVar(&tc.Patience, "patience", tc.Patience, "early stopping after this many epochs without a better validation loss (0: never)")
	fs.Uint64Var(&tc.Seed, "seed", tc.Seed, "random seed (initialisation, validation split, shuffling)")
	fs.IntVar(&tc.LogEvery, "log-every", tc.LogEvery, "write a log line every this many steps (0: only at epoch ends)")
	fs.Int("eval-every", 0, "removed: validation runs at every epoch end and --patience counts epochs (see --log-every)")
	ckptEvery := fs.Int("checkpoint-every", 100, "write the checkpoint every this many steps (and at every epoch end)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	evalEvery := false
	fs.Visit(func(f *flag.Flag) { evalEvery = evalEvery || f.Name == "eval-every" })
	if evalEvery {
		return usagef("--eval-every was removed: validation now runs at every epoch end, --patience counts epochs, and --log-every sets the interval of the training log")
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if *ckptEvery < 0 {
		return usagef("--checkpoint-every %d is negative", *ckptEvery)
	}
	var r *trainrun.Run[*synth.Activations, *synth.Model]
	var meta map[string]string
	if *resume {
		c, train, val, err := loadResume(fs, synthResumeFlags, *out, *data, *valDir, false)
		if err != nil {
			return err
		}
		meta = c.Meta
		tr, err := synth.Resume(nil, c, train, val)
		if err != nil {
			return err
		}
		if r, err = resumeRun(tr, runOptions(*out, meta, *ckptEvery)); err != nil {
			return err
		}
	} else {
		if *data == "" {
			return usagef("--data DIR and --out DIR are required")
		}
		v, err := synth.ParseVariant(*variant)
		if err != nil {
			return usageError{err.Error()}
		}
		if *valFrac < 0 || *valFrac >= 1 {
			return usagef("--val-frac %g outside [0, 1)", *valFrac)
		}
		if *maxWin < 0 {
			return usagef("--max-windows %d is negative", *maxWin)
		}
		encoding, err := synth.ParseEncoding(*enc)
		if err != nil {
			return usageError{err.Error()}
		}
		normSet := false
		fs.Visit(func(f *flag.Flag) { normSet = normSet || f.Name == "count-norm" })
		if encoding != synth.Paper && !normSet {
			*norm = "" // the encoding's
		}
		if err := checkRunDir(*out, *force); err != nil {
			return err
		}
		meta = map[string]string{"data": *data, "val": *valDir, "val_frac": strconv.FormatFloat(*valFrac, 'g', -1, 64),
			"N": "0", "split_seed": strconv.FormatUint(tc.Seed, 10), "max_windows": strconv.Itoa(*maxWin)}
		train, val, A, err := trainData(meta)
		if err != nil {
			return err
		}
		if *D == 0 {
			*D = max(trainrun.MaxDepth(train), 1)
		}
		cfg := synth.Config{Variant: v, A: A, D: *D, Embed: *embed, Hidden: *hidden, Activation: *act, CountNorm: *norm, Encoding: encoding}
		tr, err := synth.NewTrainer(nil, cfg, train, val, tc)
		if err != nil {
			return err
		}
		if r, err = trainrun.Start(tr, runOptions(*out, meta, *ckptEvery)); err != nil {
			return err
		}
		nv := 0
		if val != nil {
			nv = val.Windows()
		}
		fmt.Printf("%s: D=%d, %d features, %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
			synth.Label(v), *D, tr.Model.Config.Features(), tr.Model.NumParams(), train.Windows(), nv, len(train.Window(0)), tr.TotalSteps())
	}
	if err := runTrainer(r, "synth"); err != nil {
		return err
	}
	tr := r.Trainer
	m := synth.Finish(tr)
	if err := m.Save(filepath.Join(*out, synthModel)); err != nil {
		return err
	}
	c := m.Config
	info := synth.RunSummary(m, tr, meta["data"], meta["val"])
	ij, _ := json.MarshalIndent(info, "", "  ")
	if err := fsutil.WriteBytes(filepath.Join(*out, synthInfo), true, append(ij, '\n')); err != nil {
		return err
	}
	fmt.Printf("%s: %d parameters, %d steps, %d epochs (%s) in %s", m.Name(), c.NumParams(), tr.Step, tr.Epoch,
		stopReason(tr.Stopped, tr.Cfg.Patience, tr.Cfg.MaxSteps, tr.Step), tr.ElapsedTotal().Round(time.Second))
	if !math.IsNaN(m.Info.BestVal) {
		fmt.Printf("; best validation loss %.4f nats/symbol at step %d", m.Info.BestVal, m.Info.BestStep)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s,%s,%s,%s}\n", *out, synthModel, synthLog, synthInfo, trainCheckpoint, trainCurvePNG, trainCurveSVG)
	return nil
}
