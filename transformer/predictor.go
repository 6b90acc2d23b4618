package transformer

import (
	"fmt"
	"strings"

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
// recompute: O(N) work per symbol, no KV cache). With an empty history it
// predicts the uniform distribution.
func (m *Model) NewState() predict.State { return &state{m: m} }

type state struct {
	m    *Model
	hist []byte
	acts *Activations
}

func (s *state) Observe(a byte) { s.hist = append(s.hist, a) }

func (s *state) Predict(p []float64) {
	n, N, A := len(s.hist), s.m.Config.Context, s.m.Config.Alphabet
	if n == 0 {
		uniform(p)
		return
	}
	if s.acts == nil {
		s.acts = s.m.NewActivations(1, N, false)
	}
	w := s.hist[max(0, n-N):]
	s.m.Forward(s.acts, w, 1, len(w))
	copyRow(p, s.acts.Probs()[(len(w)-1)*A:len(w)*A])
}

func uniform(p []float64) {
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
}

// copyRow converts a float32 distribution to float64, renormalised.
func copyRow(p []float64, q []float32) {
	sum := 0.0
	for i, v := range q {
		p[i] = float64(v)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
}

// PredictSequence fills out (len(x)·A): row 0 is uniform; row i ≥ 1 is
// the model's distribution of x[i] given x[max(0,i−N)..i−1]. Rows up to N
// come from one forward pass over x[0..min(len(x),N+1)−2]; beyond N each row
// needs its own pass over the sliding window of the last N symbols.
func (m *Model) PredictSequence(x []byte, out []float64) {
	n, N, A := len(x), m.Config.Context, m.Config.Alphabet
	if n == 0 {
		return
	}
	uniform(out[:A])
	if n == 1 {
		return
	}
	T := min(n-1, N)
	acts := m.NewActivations(1, T, false)
	m.Forward(acts, x[:T], 1, T)
	probs := acts.Probs()
	for i := 1; i <= T; i++ {
		copyRow(out[i*A:(i+1)*A], probs[(i-1)*A:i*A])
	}
	for i := N + 1; i < n; i++ {
		m.Forward(acts, x[i-N:i], 1, N)
		copyRow(out[i*A:(i+1)*A], acts.Probs()[(N-1)*A:N*A])
	}
}
