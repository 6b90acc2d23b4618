package synth

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Trainer is the engine's trainer (transformer.TrainerOf) for a synth
// Model: AdamW with its moments on the model's backend, linear warm-up and
// cosine decay, gradient clipping, per-epoch shuffling PCG(Seed, epoch),
// validation at every epoch end, early stopping after Patience epochs
// without a better validation loss (the best parameters restored), and
// checkpoints from which a run resumes bit-identically (Resume).
type Trainer = transformer.TrainerOf[*Activations, *Model]

// DefaultTrainConfig is batch 64, ≤ 10 epochs, lr 2e-3 with 100 warm-up
// steps decaying to 1e-5, PyTorch's AdamW defaults (weight decay 0.01),
// clipping at 1, early stopping after 3 epochs without a better
// validation loss, a log line every 200 steps, seed 1.
func DefaultTrainConfig() transformer.TrainConfig {
	return transformer.TrainConfig{BatchSize: 64, Epochs: 10, LR: 2e-3, MinLR: 1e-5, WarmupSteps: 100,
		Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, ClipNorm: 1,
		Patience: 3, Seed: 1, LogEvery: 200}
}

// Eval is one line of a training run's history as stored in model files:
// a log entry of the engine's trainer. Losses are per-symbol means in nats
// (TrainLoss over the steps since the previous line); ValLoss is the
// validation loss at an epoch end, NaN (−1 in files) elsewhere.
type Eval struct {
	Step      int     `json:"step"`
	Epoch     float64 `json:"epoch"`
	TrainLoss float64 `json:"train_loss"`
	ValLoss   float64 `json:"val_loss"`
	LR        float64 `json:"lr"`
	ElapsedS  float64 `json:"elapsed_s"`
}

// TrainInfo summarises the run that produced a model's parameters. Files
// written before synth trained on the engine have the same fields (their
// train settings also held eval_every, and patience counted evaluations).
type TrainInfo struct {
	Train     transformer.TrainConfig `json:"train"`
	Steps     int                     `json:"steps"`
	BestStep  int                     `json:"best_step"`
	BestVal   float64                 `json:"best_val"` // nats/symbol; NaN without validation
	Stopped   bool                    `json:"early_stopped"`
	TrainWins int                     `json:"train_windows"`
	ValWins   int                     `json:"val_windows"`
	History   []Eval                  `json:"history"`
}

// InfoOf summarises the trainer's run (its history so far).
func InfoOf(t *Trainer) TrainInfo {
	info := TrainInfo{Train: t.Cfg, Steps: t.Step, BestVal: math.NaN(), Stopped: t.Stopped, TrainWins: t.Train.Windows()}
	if t.Val != nil {
		info.ValWins = t.Val.Windows()
	}
	for _, e := range t.History {
		v := math.NaN()
		if e.EpochEnd {
			v = e.ValLoss
		}
		info.History = append(info.History, Eval{Step: e.Step, Epoch: e.Epoch, TrainLoss: e.TrainLoss, ValLoss: v,
			LR: e.LR, ElapsedS: e.Elapsed.Seconds()})
		if e.EpochEnd && !math.IsNaN(v) && v == t.BestVal && math.IsNaN(info.BestVal) {
			info.BestStep, info.BestVal = e.Step, v
		}
	}
	if info.ValWins == 0 {
		info.BestStep = t.Step
	}
	return info
}

// Evaluate returns the mean per-symbol loss (nats) of m on the T−1
// targets of every window of ws (the transformer's convention).
func (m *Model) Evaluate(ws transformer.Windows) float64 {
	if ws == nil || ws.Windows() == 0 {
		return math.NaN()
	}
	T := len(ws.Window(0))
	B := max(1, min(ws.Windows(), 16384/T))
	return transformer.MeanLoss[*Activations](m, m.NewActivations(B, T, false), ws, B)
}

// NewTrainer returns the engine's trainer for a fresh model of
// architecture cfg (cfg.Context 0: the window length) initialised with
// New(cfg, tc.Seed) on the backend be (nil: the CPU backend), on the
// windows of train (all of one length 2 ≤ T ≤ Context, symbols < A) and
// val (nil: no validation, no early stopping).
func NewTrainer(be backend.Backend, cfg Config, train, val transformer.Windows, tc transformer.TrainConfig) (*Trainer, error) {
	if train == nil || train.Windows() == 0 {
		return nil, fmt.Errorf("synth: no training windows")
	}
	if cfg.Context == 0 {
		cfg.Context = len(train.Window(0))
	}
	m, err := NewOn(be, cfg, tc.Seed)
	if err != nil {
		return nil, err
	}
	return transformer.NewTrainerOf[*Activations](m, tc, train, val)
}

// Resume rebuilds the trainer of a checkpoint of a synth run (written by
// the trainer's SaveCheckpoint; model format FileFormat) on the same
// windows, on the backend be (nil: the CPU backend); its Run continues
// exactly where the checkpoint was taken.
func Resume(be backend.Backend, c *transformer.Checkpoint, train, val transformer.Windows) (*Trainer, error) {
	if c.ModelFormat != FileFormat {
		return nil, fmt.Errorf("synth: the checkpoint is of a model of format %q, not %s", c.ModelFormat, FileFormat)
	}
	cfg, err := parseFileConfig(c.ModelConfig)
	if err != nil {
		return nil, err
	}
	m, err := FromParamsOn(be, cfg, c.Params)
	if err != nil {
		return nil, err
	}
	return transformer.ResumeOf[*Activations](c, m, train, val)
}

// Train trains a model of architecture cfg on the backend be (chosen by
// the caller; nil: a CPU backend of the model's own) on train with the
// engine's trainer (see NewTrainer, Trainer) and returns it with the best
// parameters (lowest validation loss at an epoch end; without validation
// the last) and Info set. progress, if set, is called after every step
// with the step (1-based), the schedule's length and the step's mean loss
// in nats. The result depends only on the data, cfg and tc (tc.Seed seeds
// the initialisation and the shuffling). When ctx is done Train returns
// ctx's error and the model with the best parameters so far.
func Train(ctx context.Context, be backend.Backend, cfg Config, train, val transformer.Windows, tc transformer.TrainConfig, progress func(step, total int, loss float64)) (*Model, error) {
	t, err := NewTrainer(be, cfg, train, val, tc)
	if err != nil {
		return nil, err
	}
	if progress != nil {
		total := t.TotalSteps()
		t.OnStep = func(step int, loss float64) { progress(step, total, loss) }
	}
	_, err = t.Run(ctx)
	if err != nil && !errors.Is(err, ctx.Err()) {
		return nil, err
	}
	return Finish(t), err
}

// Finish returns the trainer's model with Info set and, when Run was
// interrupted, the best parameters so far restored (Run restores them
// itself when it completes).
func Finish(t *Trainer) *Model {
	if !t.Done() && t.BestParams != nil {
		t.Model.SetParams(t.BestParams)
	}
	t.Model.Info = InfoOf(t)
	return t.Model
}

// RunSummary is the summary of a finished run of 'vomc synth' (its
// synth.json): m's configuration and training record (m from Finish(t)),
// the data sets trained and validated on, the training settings and the
// training time over all resumptions. best_val is present only when there
// was validation.
func RunSummary(m *Model, t *Trainer, data, val string) map[string]any {
	c := m.Config
	info := map[string]any{"label": m.Name(), "variant": ShortName(c.Variant), "D": c.D, "features": c.Features(),
		"embed": c.Embed, "hidden": c.Hidden, "activation": c.Activation, "count_norm": c.CountNorm,
		"pos_period": c.PosN, "context": c.Context, "params": c.NumParams(), "data": data, "val": val,
		"steps": m.Info.Steps, "best_step": m.Info.BestStep, "early_stopped": m.Info.Stopped, "train": t.Cfg,
		"elapsed_s": t.ElapsedTotal().Seconds()}
	if !math.IsNaN(m.Info.BestVal) {
		info["best_val"] = m.Info.BestVal
	}
	if c.Encoding != Paper { // absent for Paper, as before the encodings
		info["encoding"] = c.Encoding
	}
	return info
}
