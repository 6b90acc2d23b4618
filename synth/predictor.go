package synth

import (
	"math"

	"github.com/vomc/vomc/predict"
)

var _ predict.SequencePredictor = (*Model)(nil)

// Name is DisplayName if set, else the paper's label of the variant, e.g.
// "TF 2-0 w/ all counts".
func (m *Model) Name() string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return Label(m.Config.Variant)
}

// AlphabetSize is A.
func (m *Model) AlphabetSize() int { return m.Config.A }

// NewExtractor returns a feature extractor for the model's variant,
// depth, positional period and encoding.
func (m *Model) NewExtractor() *Extractor {
	e, err := NewExtractorEnc(m.Config.A, m.Config.D, m.Config.PosN, m.Config.Variant, m.Config.Encoding)
	if err != nil {
		panic(err) // the configuration was validated
	}
	return e
}

// Input writes the model input of the extractor's current row into dst
// (length F): the raw features with the count columns normalised by
// CountNorm (c ↦ ln(1+c) or c/Context; under the Log and Linear encodings
// TF 2-0's position j is such a column); raw is scratch of length F.
func (m *Model) Input(e *Extractor, raw []float64, dst []float32) {
	e.Row(raw)
	lo, hi := CountColumnsEnc(m.Config.A, m.Config.D, m.Config.Variant, m.Config.Encoding)
	for k, v := range raw {
		if k >= lo && k < hi {
			if m.Config.CountNorm == Scale {
				v /= float64(m.Config.Context)
			} else {
				v = math.Log1p(v)
			}
		}
		dst[k] = float32(v)
	}
}

// slideRow sets e to the last Context−1 symbols before position j of x
// (j ≥ Context), for a row beyond the trained window.
func (m *Model) slideRow(e *Extractor, x []byte, j int) {
	e.Reset()
	for _, s := range x[j-m.Config.Context+1 : j] {
		e.Push(s)
	}
}

// PredictSequence fills out (len(x)·A): row 0 is uniform (as the
// transformer's, and CTW's under a symmetric prior); row j in
// 1..Context−1 is the model's distribution of x[j] from the features of
// x[0..j−1]; a row j ≥ Context uses the features of the last Context−1
// symbols (a sliding window, as the transformer slides over its last N).
// The rows are one forward pass on the backend.
func (m *Model) PredictSequence(x []byte, out []float64) {
	n, A, F, C := len(x), m.Config.A, m.Config.Features(), m.Config.Context
	if n == 0 {
		return
	}
	predict.Uniform(out[:A])
	if n == 1 {
		return
	}
	T := n - 1 // row j−1 predicts x[j]
	ac := m.NewActivations(1, T, false)
	e, raw := ac.ex[0], ac.raws[0]
	for j := 1; j < n; j++ {
		if j < C {
			e.Push(x[j-1])
		} else {
			m.slideRow(e, x, j)
		}
		m.Input(e, raw, ac.hostX[(j-1)*F:j*F])
	}
	m.forwardRows(ac, x[:T], 1, T)
	p := ac.Probs()
	for j := 1; j < n; j++ {
		predict.FromFloat32(out[j*A:(j+1)*A], p[(j-1)*A:j*A])
	}
}

// NewState returns a state that counts incrementally (O(D·A) per symbol
// plus one forward row per Predict; a full recount of the last Context−1
// symbols per Predict once the history is longer than Context−1).
func (m *Model) NewState() predict.State {
	ac := m.NewActivations(1, 1, false)
	return &state{m: m, e: ac.ex[0], raw: ac.raws[0], ac: ac}
}

type state struct {
	m    *Model
	e    *Extractor
	hist []byte
	raw  []float64
	ac   *Activations
}

func (s *state) Observe(a byte) {
	s.hist = append(s.hist, a)
	if len(s.hist) < s.m.Config.Context {
		s.e.Push(a)
	}
}

// Predict runs one row (B = T = 1: no target) on the backend.
func (s *state) Predict(p []float64) {
	j := len(s.hist)
	if j == 0 {
		predict.Uniform(p)
		return
	}
	if j >= s.m.Config.Context {
		s.m.slideRow(s.e, s.hist, j)
	}
	s.m.Input(s.e, s.raw, s.ac.hostX[:s.m.Config.Features()])
	s.m.forwardRows(s.ac, []byte{0}, 1, 1)
	predict.FromFloat32(p, s.ac.Probs())
}
