package synth

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TrainConfig are the optimisation settings of Train: AdamW, linear
// warm-up then cosine decay, gradient clipping (transformer.AdamW,
// LearningRate, ClipGradNorm), per-epoch shuffling and early stopping on
// the validation loss.
type TrainConfig struct {
	// BatchSize is the number of windows per step (each gives T−1 rows).
	BatchSize int `json:"batch_size"`
	// Epochs is the maximum number of passes over the training windows;
	// MaxSteps, if > 0, caps the steps (and is then the schedule length).
	Epochs   int `json:"epochs"`
	MaxSteps int `json:"max_steps,omitempty"`
	// LR is the peak learning rate, MinLR the floor of the cosine decay,
	// WarmupSteps the linear warm-up.
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	WarmupSteps int     `json:"warmup_steps"`
	// AdamW hyper-parameters (weight decay on every parameter, as in
	// package transformer).
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`
	WeightDecay float64 `json:"weight_decay"`
	// ClipNorm bounds the global gradient norm (≤ 0: no clipping).
	ClipNorm float64 `json:"clip_norm"`
	// EvalEvery is the number of steps between validation evaluations (0:
	// at the end of every epoch; the end of training is always evaluated).
	EvalEvery int `json:"eval_every"`
	// Patience stops training after that many evaluations without a new
	// best validation loss (0: never). The best parameters are restored.
	Patience int `json:"patience"`
	// Seed drives the initialisation (New) and the shuffling (epoch e uses
	// the permutation drawn from PCG(Seed, e)).
	Seed uint64 `json:"seed"`
}

// DefaultTrainConfig is batch 64, ≤ 10 epochs, lr 2e-3 with 100 warm-up
// steps decaying to 1e-5, PyTorch's AdamW defaults, clipping at 1,
// validation every 200 steps with patience 10.
func DefaultTrainConfig() TrainConfig {
	return TrainConfig{BatchSize: 64, Epochs: 10, LR: 2e-3, MinLR: 1e-5, WarmupSteps: 100,
		Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, ClipNorm: 1,
		EvalEvery: 200, Patience: 10, Seed: 1}
}

// Eval is one validation point of a training run; losses are per-symbol
// means in nats (TrainLoss over the steps since the previous point).
type Eval struct {
	Step      int     `json:"step"`
	Epoch     float64 `json:"epoch"`
	TrainLoss float64 `json:"train_loss"`
	ValLoss   float64 `json:"val_loss"`
	LR        float64 `json:"lr"`
	ElapsedS  float64 `json:"elapsed_s"`
}

// TrainInfo summarises the run that produced a model's parameters.
type TrainInfo struct {
	Train     TrainConfig `json:"train"`
	Steps     int         `json:"steps"`
	BestStep  int         `json:"best_step"`
	BestVal   float64     `json:"best_val"` // nats/symbol; NaN without validation
	Stopped   bool        `json:"early_stopped"`
	TrainWins int         `json:"train_windows"`
	ValWins   int         `json:"val_windows"`
	History   []Eval      `json:"history"`
}

// batcher computes the input rows of many windows in parallel (one
// extractor per goroutine); the rows do not depend on the split, so the
// result is deterministic.
type batcher struct {
	m    *Model
	ex   []*Extractor
	raws [][]float64
}

func newBatcher(m *Model) *batcher {
	w := runtime.GOMAXPROCS(0)
	b := &batcher{m: m}
	for range w {
		b.ex = append(b.ex, m.NewExtractor())
		b.raws = append(b.raws, make([]float64, m.Config.Features()))
	}
	return b
}

// fill writes the rows of the windows wins[i] (each of T symbols) into ac:
// window i occupies rows i·(T−1) .. (i+1)·(T−1)−1.
func (b *batcher) fill(ac *Activations, wins [][]byte, T int) {
	F := b.m.Config.Features()
	var wg sync.WaitGroup
	per := (len(wins) + len(b.ex) - 1) / len(b.ex)
	for g := range b.ex {
		lo, hi := g*per, min((g+1)*per, len(wins))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(g, lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				r := i * (T - 1)
				b.m.fillWindow(b.ex[g], b.raws[g], wins[i], ac.X[r*F:(r+T-1)*F], ac.Targets[r:r+T-1])
			}
		}(g, lo, hi)
	}
	wg.Wait()
}

// Evaluate returns the mean per-symbol loss (nats) of m on the T−1
// targets of every window of ws (the transformer's convention).
func (m *Model) Evaluate(ws transformer.Windows) float64 {
	if ws == nil || ws.Windows() == 0 {
		return math.NaN()
	}
	T := len(ws.Window(0))
	B := max(1, min(ws.Windows(), 16384/max(T-1, 1)))
	ac := m.NewActivations(B*(T-1), false)
	return m.evaluate(ws, newBatcher(m), ac, B, T)
}

func (m *Model) evaluate(ws transformer.Windows, b *batcher, ac *Activations, B, T int) float64 {
	total, n := 0.0, 0
	wins := make([][]byte, 0, B)
	for s := 0; s < ws.Windows(); s += B {
		wins = wins[:0]
		for i := s; i < min(s+B, ws.Windows()); i++ {
			wins = append(wins, ws.Window(i))
		}
		b.fill(ac, wins, T)
		M := len(wins) * (T - 1)
		total += m.Forward(ac, M)
		n += M
	}
	return total / float64(n)
}

// Train trains a model of architecture cfg (cfg.Context 0: the window
// length) on the windows of train (all of one length T ≥ 2, symbols < A),
// minimising the mean per-symbol cross-entropy of rows 1..T−1. With
// validation windows it evaluates every tc.EvalEvery steps (and at the
// end), stops early after tc.Patience evaluations without improvement and
// returns the best parameters. progress, if set, is called after every
// step with the step (1-based), the total and the step's mean loss in
// nats. The result depends only on the data, cfg and tc (tc.Seed seeds the
// initialisation and the shuffling). When ctx is done Train returns ctx's
// error and the model with the best parameters so far.
func Train(ctx context.Context, cfg Config, train, val transformer.Windows, tc TrainConfig, progress func(step, total int, loss float64)) (*Model, error) {
	if train == nil || train.Windows() == 0 {
		return nil, fmt.Errorf("synth: no training windows")
	}
	if tc.BatchSize < 1 || tc.Epochs < 1 {
		return nil, fmt.Errorf("synth: batch size %d, epochs %d", tc.BatchSize, tc.Epochs)
	}
	T := len(train.Window(0))
	if T < 2 {
		return nil, fmt.Errorf("synth: windows of %d symbols, need at least 2", T)
	}
	if cfg.Context == 0 {
		cfg.Context = T
	}
	if T > cfg.Context {
		return nil, fmt.Errorf("synth: windows of %d symbols exceed the context %d", T, cfg.Context)
	}
	for _, ws := range []transformer.Windows{train, val} {
		if ws == nil {
			continue
		}
		for i := 0; i < ws.Windows(); i++ {
			w := ws.Window(i)
			if len(w) != T {
				return nil, fmt.Errorf("synth: window %d has %d symbols, window 0 has %d", i, len(w), T)
			}
			for _, s := range w {
				if int(s) >= cfg.A {
					return nil, fmt.Errorf("synth: symbol %d in window %d outside the alphabet 0..%d", s, i, cfg.A-1)
				}
			}
		}
	}
	m, err := New(cfg, tc.Seed)
	if err != nil {
		return nil, err
	}
	hasVal := val != nil && val.Windows() > 0
	n := train.Windows()
	B := min(tc.BatchSize, n)
	perEpoch := (n + B - 1) / B
	total := tc.Epochs * perEpoch
	if tc.MaxSteps > 0 && tc.MaxSteps < total {
		total = tc.MaxSteps
	}
	// the optimiser runs on the engine's CPU backend over the host
	// parameter and gradient slices (wrapped, not copied)
	be := cpu.New()
	pt := backend.Whole(cpu.Wrap(m.Params))
	opt := transformer.NewAdamW(be, len(m.Params))
	opt.Beta1, opt.Beta2, opt.Eps, opt.WeightDecay = tc.Beta1, tc.Beta2, tc.Eps, tc.WeightDecay
	grads := make([]float32, len(m.Params))
	gt := backend.Whole(cpu.Wrap(grads))
	ac := m.NewActivations(B*(T-1), true)
	bt := newBatcher(m)
	info := TrainInfo{Train: tc, BestVal: math.NaN(), TrainWins: n}
	if hasVal {
		info.ValWins = val.Windows()
	}
	best := append([]float32(nil), m.Params...)
	bestVal, since := math.Inf(1), 0
	start := time.Now()
	intLoss, intN := 0.0, 0
	lr := 0.0
	evalNow := func(step int, epoch float64) bool {
		e := Eval{Step: step, Epoch: epoch, TrainLoss: intLoss / float64(max(intN, 1)), ValLoss: math.NaN(), LR: lr}
		intLoss, intN = 0, 0
		if hasVal {
			e.ValLoss = m.evaluate(val, bt, ac, B, T)
			if e.ValLoss < bestVal {
				bestVal, since = e.ValLoss, 0
				copy(best, m.Params)
				info.BestStep, info.BestVal = step, e.ValLoss
			} else {
				since++
			}
		} else {
			copy(best, m.Params)
			info.BestStep = step
		}
		e.ElapsedS = time.Since(start).Seconds()
		info.History = append(info.History, e)
		return tc.Patience > 0 && since >= tc.Patience
	}
	wins := make([][]byte, 0, B)
	step := 0
	var runErr error
loop:
	for epoch := 0; epoch < tc.Epochs; epoch++ {
		perm := rand.New(rand.NewPCG(tc.Seed, uint64(epoch))).Perm(n)
		for s := 0; s < n && step < total; s += B {
			if err := ctx.Err(); err != nil {
				runErr = err
				break loop
			}
			wins = wins[:0]
			for _, w := range perm[s:min(s+B, n)] {
				wins = append(wins, train.Window(w))
			}
			bt.fill(ac, wins, T)
			M := len(wins) * (T - 1)
			loss := m.Forward(ac, M)
			clear(grads)
			m.Backward(ac, grads, M, float32(1/float64(M)))
			transformer.ClipGradNorm(be, gt, tc.ClipNorm)
			lr = transformer.LearningRate(step, tc.WarmupSteps, total, tc.LR, tc.MinLR)
			opt.Step(pt, gt, lr)
			step++
			intLoss += loss
			intN += M
			if progress != nil {
				progress(step, total, loss/float64(M))
			}
			if tc.EvalEvery > 0 && step%tc.EvalEvery == 0 && step < total {
				if evalNow(step, float64(epoch)+float64(min(s+B, n))/float64(n)) {
					info.Stopped = true
					break loop
				}
			}
		}
		if step >= total {
			break
		}
		if tc.EvalEvery == 0 && evalNow(step, float64(epoch+1)) {
			info.Stopped = true
			break
		}
	}
	if !info.Stopped && runErr == nil {
		evalNow(step, float64(step)/float64(perEpoch))
	}
	info.Steps = step
	copy(m.Params, best)
	m.Info = info
	return m, runErr
}
