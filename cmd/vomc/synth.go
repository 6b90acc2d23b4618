package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/fsutil"
	"github.com/vomc/vomc/progress"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
)

// The files of a synth run's directory.
const (
	synthModel = "model.safetensors"
	synthLog   = "train.jsonl"
	synthInfo  = "synth.json"
)

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
Counts enter as ln(1+c) (--count-norm log1p) or c/N (scale). Position t
predicts x_{t+1} (T−1 targets per window, as for 'vomc train'); losses are
mean cross-entropies in nats per symbol. Validation (--val DIR, or
--val-frac of the training trees) runs every --eval-every steps, with early
stopping after --patience evaluations without improvement; the best
parameters are kept.

--out DIR receives model.safetensors, train.jsonl (one line per
evaluation) and synth.json (configuration and summary). Evaluate with
'vomc eval --methods ctw,synth:path=DIR'.`)
	variant := fs.String("variant", "tf20", "feature variant: tf20, nocounts, totalcounts or allcounts")
	data := fs.String("data", "", "training data set directory (from 'vomc data')")
	valDir := fs.String("val", "", "validation data set directory (default: --val-frac of the training trees)")
	valFrac := fs.Float64("val-frac", 0.05, "fraction of the training trees held out for validation when --val is not given (0: none)")
	maxWin := fs.Int("max-windows", 0, "use only the first this many training windows (0: all)")
	out := fs.String("out", "", "output directory")
	force := fs.Bool("force", false, "overwrite a model in --out")
	D := fs.Int("D", 0, "depth D of the constructed layers (0: the data set's largest tree depth)")
	embed := fs.Int("embed", 0, "width of an optional linear input embedding (0: none, the FF acts on the features)")
	hidden := fs.Int("hidden", 0, "FF hidden width (0: 4 × the stream width)")
	act := fs.String("act", synth.GELU, "FF activation: gelu or relu")
	norm := fs.String("count-norm", synth.Log1p, "count normalisation: log1p (ln(1+c)) or scale (c/N)")
	tc := synth.DefaultTrainConfig()
	fs.IntVar(&tc.BatchSize, "batch", tc.BatchSize, "windows per step")
	fs.IntVar(&tc.Epochs, "epochs", tc.Epochs, "maximum number of epochs")
	fs.IntVar(&tc.MaxSteps, "max-steps", 0, "stop after this many steps (0: no limit); it is then the schedule's length")
	fs.Float64Var(&tc.LR, "lr", tc.LR, "peak learning rate")
	fs.Float64Var(&tc.MinLR, "min-lr", tc.MinLR, "learning rate at the end of the cosine decay")
	fs.IntVar(&tc.WarmupSteps, "warmup", tc.WarmupSteps, "linear warm-up steps")
	fs.Float64Var(&tc.WeightDecay, "wd", tc.WeightDecay, "AdamW weight decay")
	fs.Float64Var(&tc.ClipNorm, "clip", tc.ClipNorm, "gradient-norm clipping bound (0: none)")
	fs.IntVar(&tc.EvalEvery, "eval-every", tc.EvalEvery, "validate every this many steps (0: every epoch)")
	fs.IntVar(&tc.Patience, "patience", tc.Patience, "early stopping after this many evaluations without improvement (0: never)")
	fs.Uint64Var(&tc.Seed, "seed", tc.Seed, "random seed (initialisation, validation split, shuffling)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	if *data == "" || *out == "" {
		return usagef("--data DIR and --out DIR are required")
	}
	v, err := synth.ParseVariant(*variant)
	if err != nil {
		return usageError{err.Error()}
	}
	if *valFrac < 0 || *valFrac >= 1 {
		return usagef("--val-frac %g outside [0, 1)", *valFrac)
	}
	modelPath := filepath.Join(*out, synthModel)
	if _, err := os.Stat(modelPath); err == nil && !*force {
		return fmt.Errorf("%s exists (use --force to overwrite)", modelPath)
	}
	ds, err := dataset.Read(*data)
	if err != nil {
		return err
	}
	pr := ds.Config().Prior
	if *D == 0 {
		for _, d := range pr.Depths {
			*D = max(*D, d)
		}
		*D = max(*D, 1)
	}
	var train, val transformer.Windows = ds, nil
	if *valDir != "" {
		vds, err := dataset.Read(*valDir)
		if err != nil {
			return err
		}
		if vds.Config().Prior.A != pr.A || vds.Config().N != ds.Config().N {
			return fmt.Errorf("validation set %s has A=%d, N=%d; the training set A=%d, N=%d", *valDir, vds.Config().Prior.A, vds.Config().N, pr.A, ds.Config().N)
		}
		val = vds
	} else if *valFrac > 0 {
		tw, vw, err := transformer.SplitByTree(ds, *valFrac, tc.Seed)
		if err != nil {
			return err
		}
		train, val = tw, vw
	}
	if *maxWin > 0 && *maxWin < train.Windows() {
		idx := make([]int, *maxWin)
		for i := range idx {
			idx[i] = i
		}
		train = transformer.Subset{W: train, Idx: idx}
	}
	cfg := synth.Config{Variant: v, A: pr.A, D: *D, Embed: *embed, Hidden: *hidden, Activation: *act, CountNorm: *norm}
	nv := 0
	if val != nil {
		nv = val.Windows()
	}
	T := len(train.Window(0))
	fmt.Printf("%s: D=%d, %d features; %d training and %d validation windows of %d symbols\n",
		synth.Label(v), *D, synth.Dim(pr.A, *D, v), train.Windows(), nv, T)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	per := (train.Windows() + tc.BatchSize - 1) / tc.BatchSize
	total := per * tc.Epochs
	if tc.MaxSteps > 0 {
		total = min(total, tc.MaxSteps)
	}
	bar := progress.New(os.Stderr, "steps", total).DelayStart(2 * time.Second)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	m, err := synth.Train(ctx, cfg, train, val, tc, func(step, total int, loss float64) {
		bar.SetExtra(fmt.Sprintf("loss %.4f", loss))
		bar.Set(step)
	})
	bar.Done()
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if m == nil {
		return err
	}
	if err := m.Save(modelPath); err != nil {
		return err
	}
	if werr := fsutil.WriteFile(filepath.Join(*out, synthLog), true, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, e := range m.Info.History {
			if math.IsNaN(e.ValLoss) {
				e.ValLoss = -1
			}
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}); werr != nil {
		return werr
	}
	info := map[string]any{"label": m.Name(), "variant": synth.ShortName(v), "D": m.Config.D, "features": m.Config.Features(),
		"embed": m.Config.Embed, "hidden": m.Config.Hidden, "activation": m.Config.Activation, "count_norm": m.Config.CountNorm,
		"pos_period": m.Config.PosN, "context": m.Config.Context, "params": m.Config.NumParams(), "data": *data, "val": *valDir,
		"steps": m.Info.Steps, "best_step": m.Info.BestStep, "early_stopped": m.Info.Stopped, "train": tc,
		"elapsed_s": time.Since(start).Seconds()}
	if !math.IsNaN(m.Info.BestVal) {
		info["best_val"] = m.Info.BestVal
	}
	ij, _ := json.MarshalIndent(info, "", "  ")
	if err := fsutil.WriteBytes(filepath.Join(*out, synthInfo), true, append(ij, '\n')); err != nil {
		return err
	}
	fmt.Printf("%s: %d parameters, %d steps in %s", m.Name(), m.Config.NumParams(), m.Info.Steps, time.Since(start).Round(time.Second))
	if !math.IsNaN(m.Info.BestVal) {
		fmt.Printf("; best validation loss %.4f nats/symbol at step %d", m.Info.BestVal, m.Info.BestStep)
	}
	fmt.Printf("\nwrote %s/{%s,%s,%s}\n", *out, synthModel, synthLog, synthInfo)
	if err != nil {
		return fmt.Errorf("interrupted at step %d; the best parameters so far were saved", m.Info.Steps)
	}
	return nil
}
