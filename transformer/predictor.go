package transformer

import (
	"fmt"
	"strings"
	"sync"

	"github.com/vomc/vomc/predict"
)

var _ predict.SequencePredictor = (*Model)(nil)

// Name is e.g. "TF(L=2,H=[4,4],E=64,N=256)", with "-FF" for attention-only,
// "-LN" without LayerNorm, ",relu" and ",sin" for the non-default choices.
func (m *Model) Name() string {
	c := m.Config
	h := make([]string, len(c.Heads))
	for i, v := range c.Heads {
		h[i] = fmt.Sprint(v)
	}
	s := fmt.Sprintf("TF(L=%d,H=[%s],E=%d,N=%d", c.Layers, strings.Join(h, ","), c.Embed, c.Context)
	if !c.FeedForward {
		s += ",-FF"
	}
	if !c.LayerNorm {
		s += ",-LN"
	}
	if c.FeedForward && c.Activation == ReLU {
		s += ",relu"
	}
	if c.Positional == Sinusoidal {
		s += ",sin"
	}
	return s + ")"
}

// AlphabetSize is A.
func (m *Model) AlphabetSize() int { return m.Config.Alphabet }

// NewState returns a state that keeps the whole history and, at each
// Predict, runs the forward pass over its last min(n, N) symbols (naive
// recompute: O(N) work per symbol, no KV cache) on forward-only buffers
// taken from the model's pool (Inference), and copies only the last row
// of probabilities to the host. With an empty history it predicts the
// uniform distribution. It panics if the backend cannot allocate the
// buffers.
func (m *Model) NewState() predict.State { return &state{m: m} }

type state struct {
	m    *Model
	hook attentionHook // nil: the intact model
	hist []byte
}

func (s *state) Observe(a byte) { s.hist = append(s.hist, a) }

func (s *state) Predict(p []float64) {
	n, N := len(s.hist), s.m.Config.Context
	if n == 0 {
		predict.Uniform(p)
		return
	}
	in := s.m.inference()
	defer s.m.ipool.put(in)
	w := s.hist[max(0, n-N):]
	s.m.forwardInfer(in, w, 1, len(w), s.hook)
	predict.FromFloat32(p, in.ProbRow(0, len(w)-1))
}

// PredictSequence fills out (len(x)·A): row 0 is uniform; row i ≥ 1 is
// the model's distribution of x[i] given x[max(0,i−N)..i−1]. Rows up to N
// come from one forward pass over x[0..min(len(x),N+1)−2]; beyond N each row
// needs its own pass over the sliding window of the last N symbols, of
// which only the last row is copied to the host; those passes are
// batched as PredictBatch batches them. The forward-only buffers
// (Inference) come from the model's pool (safe for concurrent calls); it
// panics if the backend cannot allocate them.
func (m *Model) PredictSequence(x []byte, out []float64) { m.predictSequence(x, out, nil) }

// predictSequence is PredictSequence with the attention hook of every
// pass (nil: the intact model).
func (m *Model) predictSequence(x []byte, out []float64, hook attentionHook) {
	n, A := len(x), m.Config.Alphabet
	if n == 0 {
		return
	}
	if n == 1 {
		predict.Uniform(out[:A])
		return
	}
	in := m.inference()
	defer m.ipool.put(in)
	sc := &in.scratch
	sc.one[0], sc.oneOut[0] = x, out
	m.predictBatch(in, sc.one[:], sc.oneOut[:], hook)
	sc.one[0], sc.oneOut[0] = nil, nil
}

// pool holds a model's buffers for inference passes: a pass takes one —
// allocating it when every one is in use, so there are as many as the
// most concurrent passes so far — and puts it back. Model.Free releases
// them. The model has one of Activations for attention maps (every
// layer's q, k, v of one window of up to N symbols) and one of Inference
// for prediction.
type pool[T any] struct {
	mu   sync.Mutex
	free []T
}

func (p *pool[T]) get() (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		var zero T
		return zero, false
	}
	a := p.free[n-1]
	p.free = p.free[:n-1]
	return a, true
}

func (p *pool[T]) put(a T) {
	p.mu.Lock()
	p.free = append(p.free, a)
	p.mu.Unlock()
}

// drain removes and returns every pooled value.
func (p *pool[T]) drain() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := p.free
	p.free = nil
	return all
}

// poolActs returns activations for one window of up to N symbols from
// the pool, allocating them if none is free.
func (m *Model) poolActs() (*Activations, error) {
	if a, ok := m.pool.get(); ok {
		return a, nil
	}
	return m.AllocActivations(1, m.Config.Context, false)
}

// poolInference returns forward-only buffers of Config.inferRows rows
// from the pool, allocating them if none is free.
func (m *Model) poolInference() (*Inference, error) {
	if in, ok := m.ipool.get(); ok {
		return in, nil
	}
	return m.AllocInference(m.Config.inferRows())
}

// inference is poolInference for callers without an error return: an
// allocation failure panics.
func (m *Model) inference() *Inference {
	in, err := m.poolInference()
	if err != nil {
		panic(err)
	}
	return in
}
