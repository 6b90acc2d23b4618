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
// recompute: O(N) work per symbol, no KV cache) on activations taken from
// the model's pool, and copies only the last row of probabilities to the
// host. With an empty history it predicts the uniform distribution. It
// panics if the backend cannot allocate the activations.
func (m *Model) NewState() predict.State { return &state{m: m} }

type state struct {
	m    *Model
	hist []byte
}

func (s *state) Observe(a byte) { s.hist = append(s.hist, a) }

func (s *state) Predict(p []float64) {
	n, N := len(s.hist), s.m.Config.Context
	if n == 0 {
		predict.Uniform(p)
		return
	}
	acts := s.m.inferenceActs()
	defer s.m.pool.put(acts)
	w := s.hist[max(0, n-N):]
	s.m.Forward(acts, w, 1, len(w))
	predict.FromFloat32(p, acts.ProbRow(0, len(w)-1))
}

// PredictSequence fills out (len(x)·A): row 0 is uniform; row i ≥ 1 is
// the model's distribution of x[i] given x[max(0,i−N)..i−1]. Rows up to N
// come from one forward pass over x[0..min(len(x),N+1)−2]; beyond N each row
// needs its own pass over the sliding window of the last N symbols, of
// which only the last row is copied to the host. The activations come
// from the model's pool (safe for concurrent calls); it panics if the
// backend cannot allocate them.
func (m *Model) PredictSequence(x []byte, out []float64) {
	n, N, A := len(x), m.Config.Context, m.Config.Alphabet
	if n == 0 {
		return
	}
	predict.Uniform(out[:A])
	if n == 1 {
		return
	}
	acts := m.inferenceActs()
	defer m.pool.put(acts)
	T := min(n-1, N)
	m.Forward(acts, x[:T], 1, T)
	probs := acts.Probs()
	for i := 1; i <= T; i++ {
		predict.FromFloat32(out[i*A:(i+1)*A], probs[(i-1)*A:i*A])
	}
	for i := N + 1; i < n; i++ {
		m.Forward(acts, x[i-N:i], 1, N)
		predict.FromFloat32(out[i*A:(i+1)*A], acts.ProbRow(0, N-1))
	}
}

// actPool holds a model's inference activations for one window of up to
// N symbols (B = 1), shared by PredictSequence, the states' Predict and
// AttentionMaps: a pass takes one — allocating it when every one is in
// use, so there are as many as the most concurrent passes so far — and
// puts it back. Model.Free releases them.
type actPool struct {
	mu   sync.Mutex
	free []*Activations
}

func (p *actPool) get() *Activations {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.free)
	if n == 0 {
		return nil
	}
	a := p.free[n-1]
	p.free = p.free[:n-1]
	return a
}

func (p *actPool) put(a *Activations) {
	p.mu.Lock()
	p.free = append(p.free, a)
	p.mu.Unlock()
}

// drain removes and returns every pooled activation.
func (p *actPool) drain() []*Activations {
	p.mu.Lock()
	defer p.mu.Unlock()
	all := p.free
	p.free = nil
	return all
}

// poolActs returns inference activations for one window of up to N
// symbols from the pool, allocating them if none is free.
func (m *Model) poolActs() (*Activations, error) {
	if a := m.pool.get(); a != nil {
		return a, nil
	}
	return m.AllocActivations(1, m.Config.Context, false)
}

// inferenceActs is poolActs for callers without an error return: an
// allocation failure panics.
func (m *Model) inferenceActs() *Activations {
	a, err := m.poolActs()
	if err != nil {
		panic(err)
	}
	return a
}
