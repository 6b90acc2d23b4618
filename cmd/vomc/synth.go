package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer/trainrun"
)

// The files of a synth run's directory besides those of a training run
// (model.safetensors, train.jsonl, checkpoint.safetensors, curve.*).
const (
	synthModel = trainrun.ModelFile
	synthLog   = trainrun.LogFile
	synthInfo  = synth.SummaryFile
)

// synthResumeFlags may be given together with --resume.
var synthResumeFlags = map[string]bool{"out": true, "resume": true, "data": true, "val": true, "checkpoint-every": true}

// synthHelp is the description of 'vomc synth -h'.
const synthHelp = `
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
and summary). Evaluate with 'vomc eval --methods ctw,synth:path=DIR'.`

// synthFlags are the flags of 'vomc synth': most go straight into the
// options of synth.TrainDir, the others are checked and converted by
// options.
type synthFlags struct {
	fs                *flag.FlagSet
	o                 synth.DirOptions
	variant, encoding string
	evalEvery         int
}

// newSynthFlags defines the flags of 'vomc synth'.
func newSynthFlags() *synthFlags {
	f := &synthFlags{o: synth.DirOptions{Train: synth.DefaultTrainConfig()}}
	fs := newFlags("synth", "--variant tf20|nocounts|totalcounts|allcounts --data DIR --out DIR [flags]", synthHelp)
	o, m, tc := &f.o, &f.o.Model, &f.o.Train
	fs.StringVar(&f.variant, "variant", "tf20", "feature variant: tf20, nocounts, totalcounts or allcounts")
	fs.StringVar(&o.Data.Data, "data", "", "training data set directory (from 'vomc data')")
	fs.StringVar(&o.Data.Val, "val", "", "validation data set directory (default: --val-frac of the training trees)")
	fs.Float64Var(&o.Data.ValFrac, "val-frac", 0.05, "fraction of the training trees held out for validation when --val is not given (0: none)")
	fs.IntVar(&o.Data.MaxWindows, "max-windows", 0, "use only the first this many training windows (0: all)")
	fs.StringVar(&o.Dir, "out", "", "output directory")
	fs.BoolVar(&o.Force, "force", false, "start afresh even if --out holds a run")
	fs.BoolVar(&o.Resume, "resume", false, "continue the run in --out from its checkpoint")
	fs.IntVar(&m.D, "D", 0, "depth D of the constructed layers (0: the data set's largest tree depth)")
	fs.IntVar(&m.Embed, "embed", 0, "width of an optional linear input embedding (0: none, the FF acts on the features)")
	fs.IntVar(&m.Hidden, "hidden", 0, "FF hidden width (0: 4 × the stream width)")
	fs.StringVar(&m.Activation, "act", synth.GELU, "FF activation: gelu or relu")
	fs.StringVar(&m.CountNorm, "count-norm", synth.Log1p, "count normalisation: log1p (ln(1+c)) or scale (c/N); --encoding log and linear imply log1p and scale")
	fs.StringVar(&f.encoding, "encoding", synth.Paper, "representation of TF 2-0's position and of the counts: paper, log or linear")
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
	fs.IntVar(&f.evalEvery, "eval-every", 0, "removed: validation runs at every epoch end and --patience counts epochs (see --log-every)")
	fs.IntVar(&o.CheckpointEvery, "checkpoint-every", 100, "write the checkpoint every this many steps (and at every epoch end)")
	f.fs = fs
	return f
}

// options checks the parsed flags and returns the options of
// synth.TrainDir.
func (f *synthFlags) options() (synth.DirOptions, error) {
	o, fs := f.o, f.fs
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	switch {
	case fs.NArg() != 0:
		return o, usagef("unexpected arguments %v", fs.Args())
	case given["eval-every"]:
		return o, usagef("--eval-every was removed: validation now runs at every epoch end, --patience counts epochs, and --log-every sets the interval of the training log")
	case o.Dir == "":
		return o, usagef("--out DIR is required")
	case o.CheckpointEvery < 0:
		return o, usagef("--checkpoint-every %d is negative", o.CheckpointEvery)
	case o.Resume:
		return o, checkResumeFlags(fs, synthResumeFlags)
	case o.Data.Data == "":
		return o, usagef("--data DIR and --out DIR are required")
	case o.Data.ValFrac < 0 || o.Data.ValFrac >= 1:
		return o, usagef("--val-frac %g outside [0, 1)", o.Data.ValFrac)
	case o.Data.MaxWindows < 0:
		return o, usagef("--max-windows %d is negative", o.Data.MaxWindows)
	}
	v, err := synth.ParseVariant(f.variant)
	if err != nil {
		return o, usageError{err.Error()}
	}
	enc, err := synth.ParseEncoding(f.encoding)
	if err != nil {
		return o, usageError{err.Error()}
	}
	o.Model.Variant, o.Model.Encoding = v, enc
	if enc != synth.Paper && !given["count-norm"] {
		o.Model.CountNorm = "" // the encoding's
	}
	o.Data.SplitSeed = o.Train.Seed
	return o, nil
}

// runSynth is 'vomc synth': it trains a synthetic TF 2-0 model in a run
// directory (synth.TrainDir) and prints the result.
func runSynth(args []string) error {
	f := newSynthFlags()
	if err := parse(f.fs, args); err != nil {
		return err
	}
	o, err := f.options()
	if err != nil {
		return err
	}
	o.Out, o.Progress = os.Stdout, os.Stderr
	o.OnStep = func(step int) {
		if trainStepHook != nil {
			trainStepHook(step)
		}
	}
	ctx, stop := signal.NotifyContext(trainContext(), os.Interrupt)
	defer stop()
	res, err := synth.TrainDir(ctx, o)
	if err != nil {
		return runError(err, "synth", o.Dir)
	}
	printSynthResult(res)
	return nil
}

// printSynthResult summarises the finished run and its files.
func printSynthResult(res *synth.DirResult) {
	m, tr := res.Model, res.Run.Trainer
	fmt.Printf("%s: %d parameters, %d steps, %d epochs (%s) in %s", m.Name(), m.Config.NumParams(), tr.Step, tr.Epoch,
		stopReason(tr.Stopped, tr.Cfg.Patience, tr.Cfg.MaxSteps, tr.Step), tr.ElapsedTotal().Round(time.Second))
	if !math.IsNaN(m.Info.BestVal) {
		fmt.Printf("; best validation loss %.4f nats/symbol at step %d", m.Info.BestVal, m.Info.BestStep)
	}
	fmt.Printf("\nwrote %s/{%s}\n", res.Run.Dir, strings.Join(res.Files, ","))
}
