package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/transformer"
)

// The files of a training run's directory.
const (
	trainCheckpoint  = "checkpoint.safetensors"
	trainModel       = "model.safetensors"
	trainConfigJSON  = "config.json"
	trainTrainConfig = "train_config.json"
	trainLog         = "train.jsonl"
	trainCurvePNG    = "curve.png" // drawCurve writes curve.<format>
	trainCurveSVG    = "curve.svg"
)

// trainStepHook, when set (by tests), is called after every training step.
var trainStepHook func(step int)

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
	ckptPath := filepath.Join(*out, trainCheckpoint)

	var tr *transformer.Trainer
	var meta map[string]string
	if *resume {
		c, train, val, err := loadResume(fs, resumeFlags, *out, *data, *valDir, *allowUnverified)
		if err != nil {
			if errors.Is(err, transformer.ErrNoChecksum) {
				return fmt.Errorf("%w; resume it anyway with --allow-unverified", err)
			}
			return err
		}
		meta = c.Meta
		if err := checkTrainMemory(c.Config, c.Train.BatchSize, train); err != nil {
			return err
		}
		if tr, err = c.Resume(train, val); err != nil {
			return err
		}
		if err := resumed(*out, tr.History, tr.Done(), tr.Step, tr.Epoch, tr.Index, train.Windows()); err != nil {
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
		meta = map[string]string{"data": absData, "val": absVal, "val_frac": strconv.FormatFloat(*valFrac, 'g', -1, 64),
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
		if err := checkTrainMemory(cfg, tc.BatchSize, train); err != nil {
			return err
		}
		cj, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return err
		}
		tj, err := json.MarshalIndent(map[string]any{"train": tc, "data": meta}, "", "  ")
		if err != nil {
			return err
		}
		m, err := transformer.New(cfg, tc.Seed)
		if err != nil {
			return err
		}
		if tr, err = transformer.NewTrainer(m, tc, train, val); err != nil {
			return err
		}
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		for _, f := range []struct {
			name string
			b    []byte
		}{{trainConfigJSON, append(cj, '\n')}, {trainTrainConfig, append(tj, '\n')}, {trainLog, nil}} {
			if err := fsutil.WriteBytes(filepath.Join(*out, f.name), true, f.b); err != nil {
				return err
			}
		}
		if err := tr.SaveCheckpoint(ckptPath, meta); err != nil {
			return err
		}
		nv := 0
		if val != nil {
			nv = val.Windows()
		}
		fmt.Printf("%s: %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
			m.Name(), cfg.NumParams(), train.Windows(), nv, T, tr.TotalSteps())
		fmt.Printf("training memory ≈ %s\n", sysmem.GiB(cfg.TrainingBytes(min(tc.BatchSize, train.Windows()), T)))
	}

	if err := runTrainer(tr, *out, "train", meta, *ckptEvery); err != nil {
		return err
	}
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

// checkRunDir refuses a directory that holds (part of) a run unless force,
// in which case the run's files are removed.
func checkRunDir(dir string, force bool) error {
	files := []string{trainCheckpoint, trainModel, trainConfigJSON, trainTrainConfig, trainLog, trainCurvePNG, trainCurveSVG}
	for _, f := range files {
		p := filepath.Join(dir, f)
		if _, err := os.Lstat(p); err == nil {
			if !force {
				return fmt.Errorf("%s holds a training run (%s): continue it with --resume, or start afresh with --force", dir, f)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if force {
		for _, f := range files {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
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

// cutWindows cuts every window of W into per windows of n symbols.
type cutWindows struct {
	w      transformer.Windows
	n, per int
}

func (c cutWindows) Windows() int { return c.w.Windows() * c.per }

func (c cutWindows) Window(i int) []byte {
	off := (i % c.per) * c.n
	return c.w.Window(i / c.per)[off : off+c.n : off+c.n]
}

// trainData loads the training (and validation) windows described by
// meta (keys data, val, val_frac, N, split_seed), records the data sets'
// checksums in meta on the first call and checks them on later ones, and
// returns the alphabet size.
func trainData(meta map[string]string) (train, val transformer.Windows, A int, err error) {
	ds, err := dataset.Read(meta["data"])
	if err != nil {
		return nil, nil, 0, err
	}
	if err := checkSum(meta, "data_checksum", meta["data"], ds.Checksum()); err != nil {
		return nil, nil, 0, err
	}
	A = ds.Config().Prior.A
	frac, err := strconv.ParseFloat(meta["val_frac"], 64)
	if err != nil || !(frac >= 0 && frac < 1) {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: val_frac %q is not a number in [0, 1)", meta["val_frac"])
	}
	seed, err := strconv.ParseUint(meta["split_seed"], 10, 64)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: split_seed %q", meta["split_seed"])
	}
	n, err := strconv.Atoi(meta["N"])
	if err != nil || n < 0 {
		return nil, nil, 0, fmt.Errorf("checkpoint metadata: N %q is not a window length ≥ 0", meta["N"])
	}
	cut := func(w transformer.Windows, N int) (transformer.Windows, error) {
		if n == 0 || n == N {
			return w, nil
		}
		if n < 2 || n > N {
			return nil, fmt.Errorf("-N %d outside 2..%d (the data set's window length)", n, N)
		}
		return cutWindows{w, n, N / n}, nil
	}
	if meta["val"] != "" {
		vds, err := dataset.Read(meta["val"])
		if err != nil {
			return nil, nil, 0, err
		}
		if err := checkSum(meta, "val_checksum", meta["val"], vds.Checksum()); err != nil {
			return nil, nil, 0, err
		}
		if vds.Config().Prior.A != A || vds.Config().N != ds.Config().N {
			return nil, nil, 0, fmt.Errorf("validation set %s has A=%d, N=%d; the training set A=%d, N=%d",
				meta["val"], vds.Config().Prior.A, vds.Config().N, A, ds.Config().N)
		}
		train, val = transformer.Windows(ds), transformer.Windows(vds)
	} else if frac > 0 {
		tw, vw, err := transformer.SplitByTree(ds, frac, seed)
		if err != nil {
			return nil, nil, 0, err
		}
		if tw.Windows() == 0 {
			return nil, nil, 0, fmt.Errorf("--val-frac %g leaves no training trees", frac)
		}
		train, val = tw, vw
	} else {
		train = ds
	}
	if train, err = cut(train, ds.Config().N); err != nil {
		return nil, nil, 0, usageError{err.Error()}
	}
	if val != nil {
		if val, err = cut(val, ds.Config().N); err != nil {
			return nil, nil, 0, err
		}
	}
	return train, val, A, nil
}

func checkSum(meta map[string]string, key, dir, sum string) error {
	if old, ok := meta[key]; ok && old != sum {
		return fmt.Errorf("data set %s has checksum %s…, the run was trained on %s…", dir, sum[:12], old[:min(12, len(old))])
	}
	meta[key] = sum
	return nil
}

// writeLogLines writes entries as JSON lines.
func writeLogLines(w io.Writer, es []transformer.LogEntry) error {
	var b []byte
	for _, e := range es {
		j, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(append(b, j...), '\n')
	}
	_, err := w.Write(b)
	return err
}

// checkTrainMemory refuses a run whose estimated memory (parameters,
// gradients, AdamW moments, best parameters, checkpoint copies,
// activations; see transformer.Config.TrainingBytes) exceeds the memory
// available, stating the estimate.
func checkTrainMemory(cfg transformer.Config, batch int, train transformer.Windows) error {
	B, T := min(batch, train.Windows()), len(train.Window(0))
	return sysmem.Check(cfg.TrainingBytes(B, T), fmt.Sprintf("training L=%d, E=%d, N=%d (%.4g parameters) with batches of %d windows of %d symbols",
		cfg.Layers, cfg.Embed, cfg.Context, float64(cfg.NumParams()), B, T))
}

// drawCurve draws the training curve of the log: the training loss of every
// log interval and the validation loss at every epoch end, in nats per
// symbol against the step, to curve.png and curve.svg in dir.
func drawCurve(dir string, hist []transformer.LogEntry) error {
	if len(hist) == 0 {
		return nil
	}
	p := gplot.New()
	p.Title.Text = "Training curve"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "loss (nats/symbol)"
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{0xE0}, color.Gray{0xE0}
	p.Add(grid)
	var trainXY, valXY plotter.XYs
	for _, e := range hist {
		if !math.IsNaN(e.TrainLoss) {
			trainXY = append(trainXY, plotter.XY{X: float64(e.Step), Y: e.TrainLoss})
		}
		if e.EpochEnd && !math.IsNaN(e.ValLoss) {
			valXY = append(valXY, plotter.XY{X: float64(e.Step), Y: e.ValLoss})
		}
	}
	p.Legend.Top = true
	for i, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"train (per log interval)", trainXY}, {"validation (epoch end)", valXY}} {
		if len(s.xy) == 0 {
			continue
		}
		sty := plot.MethodStyle(i, false)
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.4), Dashes: sty.Dashes}
		pts.Shape = draw.CircleGlyph{}
		pts.Color = sty.Color
		pts.Radius = vg.Points(1.5)
		if i == 0 && len(s.xy) > 60 {
			pts.Radius = 0
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	for _, format := range []string{"png", "svg"} {
		wt, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, format)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return err
		}
		if err := plot.WriteFileAtomic(filepath.Join(dir, "curve."+format), buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
