package transformer

import "math"

// AdamW is the decoupled-weight-decay Adam optimiser of Loshchilov & Hutter
// with PyTorch's torch.optim.AdamW semantics: for step t = 1, 2, …
//
//	θ ← θ − lr·λ·θ
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − lr·(m/(1−β1^t)) / (√(v/(1−β2^t)) + ε)
//
// Weight decay applies to every parameter (PyTorch's behaviour when all
// parameters are in one group, as with AdamW(model.parameters())).
type AdamW struct {
	Beta1, Beta2, Eps, WeightDecay float64
	// M and V are the first and second moment estimates (len = #params);
	// T is the number of steps taken.
	M, V []float32
	T    int
}

// NewAdamW returns an optimiser for n parameters with PyTorch's defaults:
// β1 = 0.9, β2 = 0.999, ε = 1e-8, weight decay 0.01.
func NewAdamW(n int) *AdamW {
	return &AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, M: make([]float32, n), V: make([]float32, n)}
}

// Step updates params in place from grads with learning rate lr.
func (o *AdamW) Step(params, grads []float32, lr float64) {
	o.T++
	b1, b2 := float32(o.Beta1), float32(o.Beta2)
	c1 := 1 / (1 - math.Pow(o.Beta1, float64(o.T)))
	c2 := 1 / (1 - math.Pow(o.Beta2, float64(o.T)))
	decay := float32(1 - lr*o.WeightDecay)
	eps := o.Eps
	m, v := o.M[:len(params)], o.V[:len(params)]
	grads = grads[:len(params)]
	parallelFor(len(params)/4096+1, func(lo, hi int) {
		for i := lo * 4096; i < min(hi*4096, len(params)); i++ {
			g := grads[i]
			mi := b1*m[i] + (1-b1)*g
			vi := b2*v[i] + (1-b2)*g*g
			m[i], v[i] = mi, vi
			upd := float64(mi) * c1 / (math.Sqrt(float64(vi)*c2) + eps)
			params[i] = params[i]*decay - float32(lr*upd)
		}
	})
}

// GradNorm is the global L2 norm of g.
func GradNorm(g []float32) float64 {
	s := 0.0
	for _, v := range g {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s)
}

// ClipGradNorm scales g in place so that its global L2 norm is at most
// maxNorm (PyTorch's clip_grad_norm_: factor maxNorm/(norm+1e-6) when
// below 1) and returns the norm before clipping. maxNorm ≤ 0 disables
// clipping.
func ClipGradNorm(g []float32, maxNorm float64) float64 {
	n := GradNorm(g)
	if maxNorm > 0 {
		if f := maxNorm / (n + 1e-6); f < 1 {
			ff := float32(f)
			for i := range g {
				g[i] *= ff
			}
		}
	}
	return n
}

// LearningRate is the schedule: linear warm-up from peak/warmup to peak
// over steps 0..warmup−1, then cosine decay from peak to floor at step
// total (and floor after). step is 0-based.
func LearningRate(step, warmup, total int, peak, floor float64) float64 {
	if step < warmup {
		return peak * float64(step+1) / float64(warmup)
	}
	if step >= total || total <= warmup {
		return floor
	}
	frac := float64(step-warmup) / float64(total-warmup)
	return floor + 0.5*(peak-floor)*(1+math.Cos(math.Pi*frac))
}
