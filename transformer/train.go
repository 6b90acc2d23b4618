package transformer

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/vomc/vomc/dataset"
)

// Windows is a collection of equal-length training windows
// (*dataset.Dataset is one).
type Windows interface {
	Windows() int
	Window(i int) []byte
}

// Subset is the windows of W at the given indices, in that order.
type Subset struct {
	W   Windows
	Idx []int
}

// Windows is len(Idx).
func (s Subset) Windows() int { return len(s.Idx) }

// Window is W.Window(Idx[i]).
func (s Subset) Window(i int) []byte { return s.W.Window(s.Idx[i]) }

// SplitByTree splits a data set into training and validation windows so
// that no source tree has windows on both sides: a fraction valFraction of
// the trees (at least one when valFraction > 0), drawn with seed, goes to
// validation.
func SplitByTree(ds *dataset.Dataset, valFraction float64, seed uint64) (train, val Subset) {
	K := len(ds.Trees)
	if K == 0 {
		for _, t := range ds.TreeOf {
			K = max(K, int(t)+1)
		}
	}
	nv := int(math.Round(valFraction * float64(K)))
	if valFraction > 0 && nv == 0 {
		nv = 1
	}
	isVal := make([]bool, K)
	for _, t := range rand.New(rand.NewPCG(seed, 0x73706c6974)).Perm(K)[:nv] {
		isVal[t] = true
	}
	train.W, val.W = ds, ds
	for w, t := range ds.TreeOf {
		if isVal[t] {
			val.Idx = append(val.Idx, w)
		} else {
			train.Idx = append(train.Idx, w)
		}
	}
	return train, val
}

// TrainConfig are the optimisation settings. DefaultTrainConfig gives the
// paper's (AdamW with PyTorch defaults, batch 512, ≤ 100 epochs, patience
// 15) plus warm-up/cosine schedule and clipping at 1.
type TrainConfig struct {
	// BatchSize is the number of windows per step (the last batch of an
	// epoch may be smaller).
	BatchSize int `json:"batch_size"`
	// Epochs is the maximum number of passes over the training windows.
	Epochs int `json:"epochs"`
	// MaxSteps, if > 0, stops after that many steps (and is then the
	// schedule's length).
	MaxSteps int `json:"max_steps,omitempty"`
	// LR is the peak learning rate, MinLR the floor of the cosine decay,
	// WarmupSteps the length of the linear warm-up.
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	WarmupSteps int     `json:"warmup_steps"`
	// AdamW hyper-parameters.
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	// ClipNorm is the global gradient-norm bound (≤ 0: no clipping).
	ClipNorm float64 `json:"clip_norm"`
	// Patience stops training after that many epochs without a new best
	// validation loss (0: never); the best parameters are restored.
	Patience int `json:"patience"`
	// SumOverWindow selects the gradient of the paper's loss (cross-entropy
	// summed over the window's T−1 targets, averaged over the batch)
	// instead of the per-symbol mean; reported losses are per-symbol means
	// either way. With Adam the two differ mainly in ε and clipping.
	SumOverWindow bool `json:"sum_over_window"`
	// Seed drives the shuffling (epoch e uses the permutation drawn from
	// PCG(Seed, e)); the model's initialisation has its own seed (New).
	Seed uint64 `json:"seed"`
}

// DefaultTrainConfig returns the paper's settings with lr 1e-3 (PyTorch's
// AdamW default), warm-up 100 steps, cosine decay to 1e-5, clip norm 1.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{BatchSize: 512, Epochs: 100, LR: 1e-3, MinLR: 1e-5, WarmupSteps: 100,
		Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, ClipNorm: 1, Patience: 15}
}

// EpochStats is reported after every epoch. Losses are per-symbol means in
// nats over all targets of the epoch.
type EpochStats struct {
	Epoch, Steps    int
	TrainLoss       float64
	ValLoss         float64 // NaN without validation windows
	BestValLoss     float64
	LR, GradNorm    float64 // at the last step
	TokensPerSecond float64 // training tokens (B·T per step) per wall second
	Elapsed         time.Duration
}

// Trainer trains a Model on windows. Everything is deterministic given the
// model's initial parameters and TrainConfig.Seed (the kernels sum in a
// fixed order whatever the number of goroutines).
type Trainer struct {
	Model      *Model
	Cfg        TrainConfig
	Train, Val Windows
	// Log, if set, is called after every epoch.
	Log func(EpochStats)

	Opt   *AdamW
	Grads []float32
	// Step counts optimiser steps, Epoch completed epochs.
	Step, Epoch int
	// BestVal is the best validation loss so far; BestParams a copy of the
	// parameters that achieved it.
	BestVal    float64
	BestParams []float32

	acts, evalActs *Activations
	T              int
}

// NewTrainer checks the windows (all of one length T ≤ N, symbols < A) and
// allocates the optimiser, gradients and activations.
func NewTrainer(m *Model, cfg TrainConfig, train, val Windows) (*Trainer, error) {
	if train == nil || train.Windows() == 0 {
		return nil, fmt.Errorf("transformer: no training windows")
	}
	if cfg.BatchSize < 1 {
		return nil, fmt.Errorf("transformer: batch size %d", cfg.BatchSize)
	}
	T := len(train.Window(0))
	if T < 2 || T > m.Config.Context {
		return nil, fmt.Errorf("transformer: windows of %d symbols, need 2..N = %d", T, m.Config.Context)
	}
	for _, ws := range []Windows{train, val} {
		if ws == nil {
			continue
		}
		for i := 0; i < ws.Windows(); i++ {
			w := ws.Window(i)
			if len(w) != T {
				return nil, fmt.Errorf("transformer: window %d has %d symbols, window 0 has %d", i, len(w), T)
			}
			for _, s := range w {
				if int(s) >= m.Config.Alphabet {
					return nil, fmt.Errorf("transformer: symbol %d in window %d outside the alphabet", s, i)
				}
			}
		}
	}
	opt := NewAdamW(len(m.Params))
	opt.Beta1, opt.Beta2, opt.Eps, opt.WeightDecay = cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay
	B := min(cfg.BatchSize, train.Windows())
	return &Trainer{Model: m, Cfg: cfg, Train: train, Val: val, Opt: opt,
		Grads: make([]float32, len(m.Params)), BestVal: math.Inf(1),
		acts: m.NewActivations(B, T, true), T: T}, nil
}

// TotalSteps is the schedule length: MaxSteps if set, else Epochs times
// the number of batches per epoch.
func (t *Trainer) TotalSteps() int {
	per := (t.Train.Windows() + t.Cfg.BatchSize - 1) / t.Cfg.BatchSize
	total := t.Cfg.Epochs * per
	if t.Cfg.MaxSteps > 0 && t.Cfg.MaxSteps < total {
		total = t.Cfg.MaxSteps
	}
	return total
}

// TrainStep does one optimisation step on the windows inputs (B·T symbols)
// and returns the mean per-symbol loss (nats) and the gradient norm before
// clipping.
func (t *Trainer) TrainStep(inputs []byte, B int) (loss, gnorm float64) {
	m, T := t.Model, t.T
	sum := m.Forward(t.acts, inputs, B, T)
	clear(t.Grads)
	scale := 1 / float64(B*(T-1))
	if t.Cfg.SumOverWindow {
		scale = 1 / float64(B)
	}
	m.Backward(t.acts, t.Grads, float32(scale))
	gnorm = ClipGradNorm(t.Grads, t.Cfg.ClipNorm)
	lr := LearningRate(t.Step, t.Cfg.WarmupSteps, t.TotalSteps(), t.Cfg.LR, t.Cfg.MinLR)
	t.Opt.Step(m.Params, t.Grads, lr)
	t.Step++
	return sum / float64(B*(T-1)), gnorm
}

// Run trains until Epochs, MaxSteps, early stopping or ctx is done, then
// (with validation windows) restores the best parameters. It returns the
// stats of the last epoch. It may be called again to continue after more
// epochs are allowed.
func (t *Trainer) Run(ctx context.Context) (EpochStats, error) {
	var last EpochStats
	n, B, T := t.Train.Windows(), min(t.Cfg.BatchSize, t.Train.Windows()), t.T
	inputs := make([]byte, B*T)
	sinceBest := 0
	start := time.Now()
	for t.Epoch < t.Cfg.Epochs && (t.Cfg.MaxSteps <= 0 || t.Step < t.Cfg.MaxSteps) {
		perm := rand.New(rand.NewPCG(t.Cfg.Seed, uint64(t.Epoch))).Perm(n)
		ep := EpochStats{Epoch: t.Epoch + 1}
		var lossSum float64
		var targets int
		t0 := time.Now()
		tokens := 0
		for s := 0; s < n; s += B {
			if err := ctx.Err(); err != nil {
				return last, err
			}
			if t.Cfg.MaxSteps > 0 && t.Step >= t.Cfg.MaxSteps {
				break
			}
			b := min(B, n-s)
			for i := 0; i < b; i++ {
				copy(inputs[i*T:(i+1)*T], t.Train.Window(perm[s+i]))
			}
			ep.LR = LearningRate(t.Step, t.Cfg.WarmupSteps, t.TotalSteps(), t.Cfg.LR, t.Cfg.MinLR)
			loss, g := t.TrainStep(inputs[:b*T], b)
			lossSum += loss * float64(b*(T-1))
			targets += b * (T - 1)
			tokens += b * T
			ep.GradNorm = g
		}
		t.Epoch++
		ep.Steps = t.Step
		ep.TrainLoss = lossSum / float64(targets)
		ep.TokensPerSecond = float64(tokens) / time.Since(t0).Seconds()
		ep.ValLoss = math.NaN()
		if t.Val != nil && t.Val.Windows() > 0 {
			ep.ValLoss = t.Evaluate(t.Val)
			if ep.ValLoss < t.BestVal {
				t.BestVal = ep.ValLoss
				t.BestParams = append(t.BestParams[:0], t.Model.Params...)
				sinceBest = 0
			} else {
				sinceBest++
			}
		}
		ep.BestValLoss = t.BestVal
		ep.Elapsed = time.Since(start)
		last = ep
		if t.Log != nil {
			t.Log(ep)
		}
		if t.Cfg.Patience > 0 && sinceBest >= t.Cfg.Patience {
			break
		}
	}
	if t.BestParams != nil {
		copy(t.Model.Params, t.BestParams)
	}
	return last, nil
}

// Evaluate returns the mean per-symbol loss in nats of the model on ws
// (all B·(T−1) targets of every window).
func (t *Trainer) Evaluate(ws Windows) float64 {
	T := t.T
	B := min(t.Cfg.BatchSize, ws.Windows())
	if t.evalActs == nil || t.evalActs.MaxB < B {
		t.evalActs = t.Model.NewActivations(B, T, false)
	}
	inputs := make([]byte, B*T)
	total, targets := 0.0, 0
	for s := 0; s < ws.Windows(); s += B {
		b := min(B, ws.Windows()-s)
		for i := 0; i < b; i++ {
			copy(inputs[i*T:(i+1)*T], ws.Window(s+i))
		}
		total += t.Model.Forward(t.evalActs, inputs[:b*T], b, T)
		targets += b * (T - 1)
	}
	return total / float64(targets)
}
