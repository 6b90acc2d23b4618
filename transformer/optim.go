package transformer

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer/backend"
)

// AdamW is the decoupled-weight-decay Adam optimiser of Loshchilov & Hutter
// with PyTorch's torch.optim.AdamW semantics: for step t = 1, 2, …
//
//	θ ← θ − lr·λ·θ
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − lr·(m/(1−β1^t)) / (√(v/(1−β2^t)) + ε)
//
// Weight decay applies to every parameter (PyTorch's behaviour when all
// parameters are in one group, as with AdamW(model.parameters())). The
// moments live on the backend (Moments and SetMoments copy them).
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	// T is the number of steps taken.
	T int

	be   backend.Backend
	m, v backend.Tensor
}

// NewAdamW returns an optimiser for n parameters on be with PyTorch's
// defaults: β1 = 0.9, β2 = 0.999, ε = 1e-8, weight decay 0.01; its moments
// are allocated on be (an error if be cannot hold them).
func NewAdamW(be backend.Backend, n int) (*AdamW, error) {
	o := &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, be: be}
	var err error
	if o.m, err = backend.AllocTensor(be, n); err == nil {
		o.v, err = backend.AllocTensor(be, n)
	}
	if err != nil {
		o.Free()
		return nil, fmt.Errorf("transformer: AdamW moments of %d parameters: %w", n, err)
	}
	return o, nil
}

// Free releases the moments; the optimiser must not be used afterwards.
func (o *AdamW) Free() error {
	err := backend.FreeAll(o.be, o.m, o.v)
	o.m, o.v = backend.Tensor{}, backend.Tensor{}
	return err
}

// Step updates params in place from grads with learning rate lr.
func (o *AdamW) Step(params, grads backend.Tensor, lr float64) {
	o.T++
	n := params.Len
	o.be.AdamW(params, grads.Prefix(n), o.m.Prefix(n), o.v.Prefix(n),
		backend.AdamWStep{LR: lr, Beta1: o.Beta1, Beta2: o.Beta2, Eps: o.Eps, WeightDecay: o.WeightDecay, T: o.T})
}

// Moments returns host copies of the first and second moment estimates.
func (o *AdamW) Moments() (m, v []float32) {
	m, v = make([]float32, o.m.Len), make([]float32, o.v.Len)
	o.be.Download(m, o.m)
	o.be.Download(v, o.v)
	return m, v
}

// SetMoments copies m and v (one value per parameter) into the optimiser.
func (o *AdamW) SetMoments(m, v []float32) error {
	if len(m) != o.m.Len || len(v) != o.v.Len {
		return fmt.Errorf("transformer: AdamW moments of %d and %d values for %d parameters", len(m), len(v), o.m.Len)
	}
	o.be.Upload(o.m, m)
	o.be.Upload(o.v, v)
	return nil
}

// GradNorm is the global L2 norm of g (summed in float64).
func GradNorm(be backend.Backend, g backend.Tensor) float64 {
	return math.Sqrt(be.SumSquares(g))
}

// ClipGradNorm scales g in place so that its global L2 norm is at most
// maxNorm (PyTorch's clip_grad_norm_: factor maxNorm/(norm+1e-6) when
// below 1) and returns the norm before clipping. maxNorm ≤ 0 disables
// clipping.
func ClipGradNorm(be backend.Backend, g backend.Tensor, maxNorm float64) float64 {
	n := GradNorm(be, g)
	if maxNorm > 0 {
		if f := maxNorm / (n + 1e-6); f < 1 {
			be.Scale(g, float32(f))
		}
	}
	return n
}

// The learning-rate schedules of TrainConfig.Schedule.
const (
	// ScheduleCosine decays the rate from its peak to the floor MinLR
	// along a half cosine over the run's total steps after the warm-up.
	ScheduleCosine = "cosine"
	// ScheduleConstant keeps the peak rate after the warm-up: the paper's
	// AdamW "with the default parameters" (with WarmupSteps 0, ClipNorm 0).
	// A run extended or resumed under it follows the same rate, so every
	// checkpoint is a point on one training curve.
	ScheduleConstant = "constant"
)

// Schedules are the learning-rate schedules, the default first.
var Schedules = []string{ScheduleCosine, ScheduleConstant}

// LearningRate is the rate of 0-based step step under schedule (""
// is ScheduleCosine): a linear warm-up from peak/warmup to peak over steps
// 0..warmup−1, then either (cosine) a cosine decay from peak to floor at
// step total (and floor after), or (constant) peak. floor and total matter
// to the cosine schedule only.
func LearningRate(schedule string, step, warmup, total int, peak, floor float64) float64 {
	if step < warmup {
		return peak * float64(step+1) / float64(warmup)
	}
	if schedule == ScheduleConstant {
		return peak
	}
	if step >= total || total <= warmup {
		return floor
	}
	frac := float64(step-warmup) / float64(total-warmup)
	return floor + 0.5*(peak-floor)*(1+math.Cos(math.Pi*frac))
}
