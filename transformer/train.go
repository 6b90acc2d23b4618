package transformer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/transformer/backend"
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
// validation. A fraction outside [0, 1) is an error.
func SplitByTree(ds *dataset.Dataset, valFraction float64, seed uint64) (train, val Subset, err error) {
	if !(valFraction >= 0 && valFraction < 1) {
		return train, val, fmt.Errorf("transformer: validation fraction %g outside [0, 1)", valFraction)
	}
	K := len(ds.Trees)
	if K == 0 {
		for _, t := range ds.TreeOf {
			K = max(K, int(t)+1)
		}
	}
	nv := min(int(math.Round(valFraction*float64(K))), K)
	if valFraction > 0 && nv == 0 && K > 0 {
		nv = 1
	}
	isVal := make([]bool, K)
	for _, t := range rand.New(rand.NewPCG(seed, 0x73706c6974)).Perm(K)[:nv] {
		isVal[t] = true
	}
	train.W, val.W = ds, ds
	for w, t := range ds.TreeOf {
		if int(t) >= K {
			return Subset{}, Subset{}, fmt.Errorf("transformer: window %d belongs to tree %d of %d", w, t, K)
		}
		if isVal[t] {
			val.Idx = append(val.Idx, w)
		} else {
			train.Idx = append(train.Idx, w)
		}
	}
	return train, val, nil
}

// TrainConfig are the optimisation settings. DefaultTrainConfig gives the
// paper's (AdamW with PyTorch defaults, batch 512, ≤ 100 epochs, patience
// 15) plus warm-up/cosine schedule and clipping at 1; the paper's own
// optimiser is Schedule ScheduleConstant, WarmupSteps 0, ClipNorm 0.
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
	// WarmupSteps the length of the linear warm-up; Schedule is the
	// learning-rate schedule after it (LearningRate): ScheduleCosine ("" too)
	// or ScheduleConstant. The JSON form leaves out the cosine schedule, so
	// that settings written before it existed read back the same.
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	WarmupSteps int     `json:"warmup_steps"`
	Schedule    string  `json:"lr_schedule,omitempty"`
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
	// LogEvery adds a LogEntry to the training log every LogEvery steps
	// (0: only at the end of every epoch).
	LogEvery int `json:"log_every,omitempty"`
}

// DefaultTrainConfig returns the declared defaults (Options: the paper's
// settings with lr 1e-3, PyTorch's AdamW defaults, warm-up 100 steps,
// cosine decay to 1e-5, clip norm 1, patience 15) with Seed and LogEvery 0:
// a library caller chooses its seed and log interval.
func DefaultTrainConfig() TrainConfig {
	c := declaredDefaults()
	c.Seed, c.LogEvery = 0, 0
	return c
}

// Validate checks every field against its declaration in Options (in
// order; the first problem is returned as a *TrainConfigError): BatchSize
// in 1..MaxBatch, Epochs ≥ 1, MaxSteps, WarmupSteps, Patience and
// LogEvery ≥ 0, LR finite and ≥ 0, MinLR in [0, LR], Beta1 and Beta2 in
// [0, 1), Eps finite and > 0, WeightDecay finite, ≥ 0 and with
// LR·WeightDecay < 1 (the decay factor 1 − lr·wd stays positive), ClipNorm
// finite and ≥ 0 (0: no clipping).
func (c TrainConfig) Validate() error {
	for _, o := range Options {
		if o.Run {
			continue
		}
		if err := o.Check(o.Get(c), c); err != nil {
			return err
		}
	}
	return nil
}

// TrainConfigError is the error of TrainConfig.Validate, vomc's one
// option-error type (opterr.Error): Option is the field's JSON name
// ("lr"), Value its value and Want what it should be.
type TrainConfigError = opterr.Error

// DivergedError is returned by Run when a step's loss or gradient norm is
// not finite (the learning rate is too high, typically). That step's
// update was not applied: the Trainer's state and parameters are those
// after step Step, still usable, but the run cannot go on as configured.
type DivergedError struct {
	// Step is the number of steps done before the diverging one.
	Step int
	// Loss and GradNorm are the diverging step's.
	Loss, GradNorm float64
}

func (e *DivergedError) Error() string {
	what := fmt.Sprintf("loss %g", e.Loss)
	if !math.IsNaN(e.Loss) && !math.IsInf(e.Loss, 0) {
		what = fmt.Sprintf("gradient norm %g (loss %.6g)", e.GradNorm, e.Loss)
	}
	return fmt.Sprintf("training diverged at step %d: %s", e.Step+1, what)
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

// TrainerState is everything besides the parameters, the optimiser's
// moments and the best parameters that a Trainer needs to continue a run
// exactly where it was: the step and shuffle position, the early-stopping
// counters and the running sums of the current epoch and log interval. A
// checkpoint (see SaveCheckpoint) holds it. Losses are in nats.
type TrainerState struct {
	// Step counts optimiser steps, Epoch completed epochs.
	Step, Epoch int
	// Index is the number of training windows of the current epoch already
	// used: the position in epoch Epoch's permutation, drawn from
	// PCG(Seed, Epoch).
	Index int
	// BestVal is the best validation loss so far (+Inf before any);
	// SinceBest the number of epochs since it was reached; Stopped is set
	// when early stopping ended the run.
	BestVal   float64
	SinceBest int
	Stopped   bool
	// EpochLoss is the summed loss (nats) over the EpochTargets targets of
	// the current epoch so far; IntervalLoss and IntervalTargets the same
	// since the last LogEntry.
	EpochLoss       float64
	EpochTargets    int
	IntervalLoss    float64
	IntervalTargets int
	// LR and GradNorm are the learning rate and the gradient norm (before
	// clipping) of the last step.
	LR, GradNorm float64
	// Elapsed is the wall time spent in Run before the current call.
	Elapsed time.Duration
}

// LogEntry is one line of the training log: written every
// TrainConfig.LogEvery steps and at the end of every epoch. Losses are
// per-symbol means in nats.
type LogEntry struct {
	// Step is the number of optimiser steps taken; Epoch the fractional
	// number of epochs done (completed epochs + the used fraction of the
	// current one).
	Step  int
	Epoch float64
	// TrainLoss is the mean training loss over the steps since the previous
	// entry.
	TrainLoss float64
	// EpochEnd marks the entry written at the end of an epoch, which also
	// has EpochTrainLoss (the mean over the whole epoch), ValLoss (NaN
	// without validation windows) and BestValLoss.
	EpochEnd                             bool
	EpochTrainLoss, ValLoss, BestValLoss float64
	// LR and GradNorm are those of the entry's last step.
	LR, GradNorm float64
	// TokensPerSecond is the training throughput since the previous entry
	// (or since the run was started or resumed) and Elapsed the training
	// wall time so far; these two are the only fields that depend on the
	// machine rather than on the seeds.
	TokensPerSecond float64
	Elapsed         time.Duration
}

// Trainable is what a Trainer trains: a model whose parameters, as one
// flat float32 vector, live on a backend, and whose Forward and Backward are
// backend op calls over activation buffers of type A. *Model is one
// (A = *Activations); so is synth's TF 2-0 model.
//
// Conventions (the engine's): Forward runs the model on B windows of T
// symbols (inputs row-major (B,T), symbols < the alphabet size) and returns
// the summed next-symbol cross-entropy in nats over the B·(T−1) targets —
// position t of window b predicts inputs[b,t+1], the last position of a
// window has no target. Backward back-propagates the last Forward on the
// same activations and ACCUMULATES scale times the gradient of that sum
// into grads (a vector of NumParams elements on Backend, laid out like the
// parameters).
type Trainable[A any] interface {
	// Backend is the backend holding the parameters and activations.
	Backend() backend.Backend
	// NumParams is the length of the parameter vector.
	NumParams() int
	// ParamTensor is the parameter vector on the backend (updated in place
	// by the optimiser).
	ParamTensor() backend.Tensor
	// HostParams returns a host copy of the parameters; SetParams copies
	// flat (length NumParams) into them.
	HostParams() []float32
	SetParams(flat []float32) error
	// AllocActivations allocates the buffers of passes over up to maxB
	// windows of up to maxT symbols (with training: also what Backward
	// needs), or returns the backend's error (e.g. out of memory). When A
	// has a method Free() error, the trainer's Free calls it.
	AllocActivations(maxB, maxT int, training bool) (A, error)
	// Forward returns the summed cross-entropy (nats) over the B·(T−1)
	// targets; Backward accumulates scale·∇ of it into grads.
	Forward(a A, inputs []byte, B, T int) float64
	Backward(a A, grads backend.Tensor, scale float32)
	// WindowLimits is the longest window the model takes and its alphabet
	// size (NewTrainerOf checks the data against them).
	WindowLimits() (maxT, alphabet int)
	// CheckpointConfig identifies the model in a checkpoint: format ("" for
	// a transformer Model; e.g. "vomc-synth") and the configuration string
	// from which the model's owner rebuilds it.
	CheckpointConfig() (format, config string)
}

// Trainer trains a transformer Model: TrainerOf for *Model.
type Trainer = TrainerOf[*Activations, *Model]

// TrainerOf trains a Trainable model M on windows. Everything is
// deterministic given the model's initial parameters and TrainConfig.Seed
// (the kernels sum in a fixed order whatever the number of goroutines), and
// a run resumed from a checkpoint continues with exactly the losses and
// parameters it would have had (see SaveCheckpoint and Checkpoint.Resume).
type TrainerOf[A any, M Trainable[A]] struct {
	Model      M
	Cfg        TrainConfig
	Train, Val Windows
	// Log, if set, is called after every epoch.
	Log func(EpochStats)
	// OnLog, if set, is called with every LogEntry as it is added to
	// History.
	OnLog func(LogEntry)
	// OnStep, if set, is called after every optimiser step with the step's
	// mean per-symbol loss (nats).
	OnStep func(step int, loss float64)
	// OnCheckpoint, if set, is called every CheckpointEvery steps (0:
	// never) and after every epoch, at moments when the Trainer's state is
	// complete and consistent (so SaveCheckpoint may be called); an error
	// stops Run.
	OnCheckpoint    func() error
	CheckpointEvery int

	// Opt is the optimiser (its moments on the model's backend).
	Opt *AdamW
	// TrainerState holds the step, shuffle position and counters (Step,
	// Epoch, BestVal, …).
	TrainerState
	// BestParams is a host copy of the parameters that achieved BestVal
	// (taken when the validation loss improves, at most once an epoch).
	BestParams []float32
	// History is the training log so far.
	History []LogEntry

	grads      backend.Tensor // the gradient vector, on the model's backend
	acts       A
	hasActs    bool // acts was allocated
	evalActs   A
	evalB      int // capacity (windows) of evalActs; 0: none yet
	T          int
	perm       []int // permutation of the current epoch
	permEpoch  int   // the epoch perm belongs to (−1: none)
	runStart   time.Time
	mark       time.Time // start of the current log interval's timing
	markTokens int       // tokens trained since mark
}

// NewTrainer checks the windows (all of one length T ≤ N, symbols < A) and
// allocates the optimiser, gradients and activations.
func NewTrainer(m *Model, cfg TrainConfig, train, val Windows) (*Trainer, error) {
	return NewTrainerOf[*Activations](m, cfg, train, val)
}

// NewTrainerOf is NewTrainer for any Trainable model: it checks the
// windows (all of one length 2 ≤ T ≤ the model's maximum, symbols below
// its alphabet size) and allocates the optimiser (moments), the gradient
// vector and the activations on the model's backend.
func NewTrainerOf[A any, M Trainable[A]](m M, cfg TrainConfig, train, val Windows) (*TrainerOf[A, M], error) {
	if train == nil || train.Windows() == 0 {
		return nil, fmt.Errorf("transformer: no training windows")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	maxT, alphabet := m.WindowLimits()
	T := len(train.Window(0))
	if T < 2 || T > maxT {
		return nil, fmt.Errorf("transformer: windows of %d symbols, need 2..N = %d", T, maxT)
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
				if int(s) >= alphabet {
					return nil, fmt.Errorf("transformer: symbol %d in window %d outside the alphabet", s, i)
				}
			}
		}
	}
	be := m.Backend()
	t := &TrainerOf[A, M]{Model: m, Cfg: cfg, Train: train, Val: val,
		TrainerState: TrainerState{BestVal: math.Inf(1)}, T: T, permEpoch: -1}
	err := t.alloc(be, min(cfg.BatchSize, train.Windows()))
	if err != nil {
		t.Free()
		return nil, err
	}
	t.Opt.Beta1, t.Opt.Beta2, t.Opt.Eps, t.Opt.WeightDecay = cfg.Beta1, cfg.Beta2, cfg.Eps, cfg.WeightDecay
	return t, nil
}

// alloc allocates the optimiser, the gradients and the training
// activations for batches of B windows.
func (t *TrainerOf[A, M]) alloc(be backend.Backend, B int) error {
	n := t.Model.NumParams()
	var err error
	if t.Opt, err = NewAdamW(be, n); err != nil {
		return err
	}
	if t.grads, err = backend.AllocTensor(be, n); err != nil {
		return fmt.Errorf("transformer: gradients of %d parameters: %w", n, err)
	}
	if t.acts, err = t.Model.AllocActivations(B, t.T, true); err != nil {
		return err
	}
	t.hasActs = true
	return nil
}

// Free releases what the trainer allocated on the model's backend — the
// optimiser's moments, the gradients, the activations — but not the
// model; the trainer must not be used afterwards.
func (t *TrainerOf[A, M]) Free() error {
	var errs []error
	if t.Opt != nil {
		errs = append(errs, t.Opt.Free())
	}
	errs = append(errs, backend.FreeAll(t.Model.Backend(), t.grads))
	t.grads = backend.Tensor{}
	if t.hasActs {
		errs = append(errs, freeActs(t.acts))
	}
	if t.evalB > 0 {
		errs = append(errs, freeActs(t.evalActs))
	}
	var zero A
	t.acts, t.evalActs, t.hasActs, t.evalB = zero, zero, false, 0
	return errors.Join(errs...)
}

// freeActs frees a when its type has a Free method.
func freeActs(a any) error {
	if f, ok := a.(interface{ Free() error }); ok {
		return f.Free()
	}
	return nil
}

// HostGrads returns a host copy of the gradient vector of the last
// TrainStep (after clipping).
func (t *TrainerOf[A, M]) HostGrads() []float32 {
	g := make([]float32, t.grads.Len)
	t.Model.Backend().Download(g, t.grads)
	return g
}

// TotalSteps is the schedule length: MaxSteps if set, else Epochs times
// the number of batches per epoch.
func (t *TrainerOf[A, M]) TotalSteps() int { return TotalSteps(t.Cfg, t.Train.Windows()) }

// TotalSteps is the schedule length of cfg on n training windows: MaxSteps
// if set, else Epochs times the number of batches per epoch, ⌈n/BatchSize⌉.
func TotalSteps(cfg TrainConfig, n int) int {
	per := (n + cfg.BatchSize - 1) / cfg.BatchSize
	total := cfg.Epochs * per
	if cfg.MaxSteps > 0 && cfg.MaxSteps < total {
		total = cfg.MaxSteps
	}
	return total
}

// TrainStep does one optimisation step on the windows inputs (B·T symbols)
// and returns the mean per-symbol loss (nats) and the gradient norm before
// clipping. When either is not finite the update is skipped (parameters,
// moments and Step are unchanged).
func (t *TrainerOf[A, M]) TrainStep(inputs []byte, B int) (loss, gnorm float64) {
	m, T := t.Model, t.T
	be := m.Backend()
	sum := m.Forward(t.acts, inputs, B, T)
	be.Zero(t.grads)
	scale := 1 / float64(B*(T-1))
	if t.Cfg.SumOverWindow {
		scale = 1 / float64(B)
	}
	m.Backward(t.acts, t.grads, float32(scale))
	gnorm = ClipGradNorm(be, t.grads, t.Cfg.ClipNorm)
	loss = sum / float64(B*(T-1))
	if !isFinite(loss) || !isFinite(gnorm) {
		return loss, gnorm
	}
	lr := LearningRate(t.Cfg.Schedule, t.Step, t.Cfg.WarmupSteps, t.TotalSteps(), t.Cfg.LR, t.Cfg.MinLR)
	t.Opt.Step(m.ParamTensor(), t.grads, lr)
	t.Step++
	return loss, gnorm
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Done reports whether training is over: early stopping, or Epochs or
// MaxSteps reached.
func (t *TrainerOf[A, M]) Done() bool {
	return t.Stopped || t.Epoch >= t.Cfg.Epochs || t.maxed()
}

func (t *TrainerOf[A, M]) maxed() bool { return t.Cfg.MaxSteps > 0 && t.Step >= t.Cfg.MaxSteps }

// ElapsedTotal is the wall time spent training, over all Run calls and
// the runs before the checkpoint this Trainer was resumed from.
func (t *TrainerOf[A, M]) ElapsedTotal() time.Duration {
	if t.runStart.IsZero() {
		return t.Elapsed
	}
	return t.Elapsed + time.Since(t.runStart)
}

// epochPerm returns the shuffled window order of the current epoch:
// rand.PCG(Seed, Epoch).Perm(n).
func (t *TrainerOf[A, M]) epochPerm() []int {
	if t.permEpoch != t.Epoch || t.perm == nil {
		t.perm = rand.New(rand.NewPCG(t.Cfg.Seed, uint64(t.Epoch))).Perm(t.Train.Windows())
		t.permEpoch = t.Epoch
	}
	return t.perm
}

// addEntry closes the current log interval.
func (t *TrainerOf[A, M]) addEntry(e LogEntry) {
	n := t.Train.Windows()
	e.Step, e.Epoch = t.Step, float64(t.Epoch)+float64(t.Index)/float64(n)
	e.TrainLoss = t.IntervalLoss / float64(t.IntervalTargets)
	e.LR, e.GradNorm = t.LR, t.GradNorm
	if s := time.Since(t.mark).Seconds(); s > 0 {
		e.TokensPerSecond = float64(t.markTokens) / s
	}
	e.Elapsed = t.ElapsedTotal()
	t.IntervalLoss, t.IntervalTargets = 0, 0
	t.mark, t.markTokens = time.Now(), 0
	t.History = append(t.History, e)
	if t.OnLog != nil {
		t.OnLog(e)
	}
}

// Run trains until Epochs, MaxSteps, early stopping or ctx is done, then
// (with validation windows) restores the best parameters. It returns the
// stats of the last epoch it completed. When ctx is done it returns ctx's
// error between two steps, with the state consistent (a checkpoint saved
// then resumes exactly) and without restoring the best parameters. A
// step whose loss or gradient norm is not finite stops it with a
// *DivergedError, before that step's update, its log entry or a
// checkpoint. It may
// be called again to continue (after a cancellation, or after more epochs
// are allowed).
func (t *TrainerOf[A, M]) Run(ctx context.Context) (last EpochStats, err error) {
	n, B, T := t.Train.Windows(), min(t.Cfg.BatchSize, t.Train.Windows()), t.T
	inputs := make([]byte, B*T)
	t.runStart = time.Now()
	t.mark, t.markTokens = t.runStart, 0
	epochStart, epochTokens := t.runStart, 0
	defer func() {
		t.Elapsed += time.Since(t.runStart)
		t.runStart = time.Time{}
	}()
	for !t.Done() {
		perm := t.epochPerm()
		for t.Index < n && !t.maxed() {
			if err := ctx.Err(); err != nil {
				return last, err
			}
			b := min(B, n-t.Index)
			for i := 0; i < b; i++ {
				copy(inputs[i*T:(i+1)*T], t.Train.Window(perm[t.Index+i]))
			}
			t.LR = LearningRate(t.Cfg.Schedule, t.Step, t.Cfg.WarmupSteps, t.TotalSteps(), t.Cfg.LR, t.Cfg.MinLR)
			loss, g := t.TrainStep(inputs[:b*T], b)
			if !isFinite(loss) || !isFinite(g) {
				return last, &DivergedError{Step: t.Step, Loss: loss, GradNorm: g}
			}
			t.GradNorm = g
			t.Index += b
			sum := loss * float64(b*(T-1))
			t.EpochLoss += sum
			t.IntervalLoss += sum
			t.EpochTargets += b * (T - 1)
			t.IntervalTargets += b * (T - 1)
			t.markTokens += b * T
			epochTokens += b * T
			if t.OnStep != nil {
				t.OnStep(t.Step, loss)
			}
			if t.Index >= n || t.maxed() {
				break // the epoch's end writes the entry and the checkpoint
			}
			if t.Cfg.LogEvery > 0 && t.Step%t.Cfg.LogEvery == 0 {
				t.addEntry(LogEntry{})
			}
			if t.OnCheckpoint != nil && t.CheckpointEvery > 0 && t.Step%t.CheckpointEvery == 0 {
				if err := t.OnCheckpoint(); err != nil {
					return last, err
				}
			}
		}
		// End of the epoch (or of the last, partial epoch under MaxSteps).
		t.Epoch++
		t.Index = 0
		ep := EpochStats{Epoch: t.Epoch, Steps: t.Step, LR: t.LR, GradNorm: t.GradNorm, ValLoss: math.NaN()}
		ep.TrainLoss = t.EpochLoss / float64(t.EpochTargets)
		if s := time.Since(epochStart).Seconds(); s > 0 {
			ep.TokensPerSecond = float64(epochTokens) / s
		}
		if t.Val != nil && t.Val.Windows() > 0 {
			if ep.ValLoss, err = t.evaluate(t.Val); err != nil {
				return last, err
			}
			if ep.ValLoss < t.BestVal {
				t.BestVal = ep.ValLoss
				t.BestParams = t.Model.HostParams()
				t.SinceBest = 0
			} else {
				t.SinceBest++
			}
		}
		ep.BestValLoss = t.BestVal
		ep.Elapsed = t.ElapsedTotal()
		if t.Cfg.Patience > 0 && t.SinceBest >= t.Cfg.Patience {
			t.Stopped = true
		}
		t.addEntry(LogEntry{EpochEnd: true, EpochTrainLoss: ep.TrainLoss, ValLoss: ep.ValLoss, BestValLoss: ep.BestValLoss})
		t.EpochLoss, t.EpochTargets = 0, 0
		epochStart, epochTokens = time.Now(), 0
		last = ep
		if t.Log != nil {
			t.Log(ep)
		}
		if t.OnCheckpoint != nil {
			if err := t.OnCheckpoint(); err != nil {
				return last, err
			}
		}
	}
	if t.BestParams != nil {
		if err := t.Model.SetParams(t.BestParams); err != nil {
			return last, err
		}
	}
	return last, nil
}

// Evaluate returns the mean per-symbol loss in nats of the model on ws
// (all B·(T−1) targets of every window). It panics if the backend cannot
// allocate the evaluation activations (Run returns that error instead).
func (t *TrainerOf[A, M]) Evaluate(ws Windows) float64 {
	loss, err := t.evaluate(ws)
	if err != nil {
		panic(err)
	}
	return loss
}

// evaluate is Evaluate, with the allocation error returned. The
// evaluation activations are kept for the next call (reallocated when a
// call needs more windows).
func (t *TrainerOf[A, M]) evaluate(ws Windows) (float64, error) {
	B := min(t.Cfg.BatchSize, ws.Windows())
	if t.evalB < B {
		if t.evalB > 0 {
			if err := freeActs(t.evalActs); err != nil {
				return math.NaN(), err
			}
			t.evalB = 0
		}
		a, err := t.Model.AllocActivations(B, t.T, false)
		if err != nil {
			return math.NaN(), err
		}
		t.evalActs, t.evalB = a, B
	}
	return MeanLoss[A](t.Model, t.evalActs, ws, B), nil
}

// MeanLoss returns the mean per-symbol loss in nats of m on the windows of
// ws (all of one length T; every window's T−1 targets), running Forward on
// batches of up to B windows with acts (made for at least B windows of T).
func MeanLoss[A any, M Trainable[A]](m M, acts A, ws Windows, B int) float64 {
	if ws == nil || ws.Windows() == 0 {
		return math.NaN()
	}
	T := len(ws.Window(0))
	inputs := make([]byte, B*T)
	total, targets := 0.0, 0
	for s := 0; s < ws.Windows(); s += B {
		b := min(B, ws.Windows()-s)
		for i := 0; i < b; i++ {
			copy(inputs[i*T:(i+1)*T], ws.Window(s+i))
		}
		total += m.Forward(acts, inputs[:b*T], b, T)
		targets += b * (T - 1)
	}
	return total / float64(targets)
}
