package construct

import (
	"fmt"
	"strconv"

	"github.com/vomc/vomc/predict"
)

// Predictor runs the construction of Theorems 3–5 as a predict.Predictor
// (and predict.SequencePredictor), so that the harness can evaluate and
// plot it beside CTW; in the hard-attention limit the two coincide (to
// ~1e-12, see the tests).
//
// The positional period N: Config.N when it fits the sequence; otherwise
// (or when Config.N is 0) the smallest power of two ≥ 64 that fits, a
// State rebuilding the model and replaying its history when its sequence
// outgrows the period. In the hard limit the output does not depend on N;
// with finite c it does (the positional scores sharpen as N shrinks), so a
// State's early predictions made with a smaller N then differ from
// PredictSequence's.
type Predictor struct {
	cfg Config
}

// New validates cfg and returns its predictor.
func New(cfg Config) (*Predictor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Predictor{cfg: cfg}, nil
}

// Config returns the configuration.
func (p *Predictor) Config() Config { return p.cfg }

// Name is "TF-construct(D=3)" in the hard limit and e.g.
// "TF-construct(D=3,c=50)" for a finite temperature.
func (p *Predictor) Name() string {
	if p.cfg.Hard() {
		return fmt.Sprintf("TF-construct(D=%d)", p.cfg.D)
	}
	return fmt.Sprintf("TF-construct(D=%d,c=%s)", p.cfg.D, strconv.FormatFloat(p.cfg.C, 'g', -1, 64))
}

// AlphabetSize is A.
func (p *Predictor) AlphabetSize() int { return p.cfg.A }

// period returns the positional period used for np positions.
func (p *Predictor) period(np int) int {
	if p.cfg.N > 0 {
		n := p.cfg.N
		for n < np {
			n *= 2
		}
		return n
	}
	n := 64
	for n < np {
		n *= 2
	}
	return n
}

// Build returns the construction for sequences of up to n symbols.
func (p *Predictor) Build(n int) (*Construction, error) {
	cfg := p.cfg
	cfg.N = p.period(n + cfg.D + 1)
	return Build(cfg)
}

// PredictSequence fills out (length len(x)·A) with P(x_{j+1} = · | x_1^j),
// j = 0..len(x)−1, from one pass of the construction. Symbols must be in
// 0..A−1 (predict.Sequence checks).
func (p *Predictor) PredictSequence(x []byte, out []float64) {
	c, err := p.Build(len(x))
	if err != nil {
		panic(err) // cfg was validated by New
	}
	tr, err := c.Run(x, false)
	if err != nil {
		panic(err)
	}
	A := p.cfg.A
	for j := range x {
		copy(out[j*A:(j+1)*A], tr.Dist[j])
	}
}

// NewState returns a fresh sequential state. It keeps the transformer's
// key/value cache, so each symbol costs one position of the forward pass.
func (p *Predictor) NewState() predict.State {
	return &state{p: p}
}

type state struct {
	p    *Predictor
	c    *Construction
	r    *Runner
	x    []byte
	last []float64 // final stream at the last processed position
	h    []float64
}

// Observe appends a to the history; the forward pass is deferred to Predict.
func (s *state) Observe(a byte) { s.x = append(s.x, a) }

// Predict runs the positions not yet processed through the cached
// transformer (rebuilding it when the period N is outgrown) and writes the
// read-out at the last position.
func (s *state) Predict(dist []float64) {
	D := s.p.cfg.D
	need := len(s.x) + D + 1
	if s.c == nil || s.c.Config.N < need {
		c, err := s.p.Build(len(s.x))
		if err != nil {
			panic(err)
		}
		s.c, s.r = c, c.TF.NewRunner(false)
		s.h = make([]float64, c.Layout.E)
	}
	for i := s.r.Len(); i < need; i++ {
		var sym byte
		if i > D {
			sym = s.x[i-D-1]
		}
		s.c.Embed(i, sym, i >= 1 && i <= D, s.h)
		st := s.r.Append(s.h)
		s.last = st.H[len(st.H)-1]
	}
	s.c.Readout(s.last, dist)
}
