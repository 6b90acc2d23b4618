package predict

import (
	"errors"
	"math"
	"testing"
)

func TestUniform(t *testing.T) {
	p := make([]float64, 3)
	Uniform(p)
	for _, v := range p {
		if v != 1.0/3 {
			t.Fatalf("%v", p)
		}
	}
}

func TestFromFloat32(t *testing.T) {
	q := []float32{0.1, 0.2, 0.3, 0.4000001}
	p := make([]float64, len(q))
	FromFloat32(p, q)
	sum := 0.0
	for i, v := range p {
		sum += v
		if math.Abs(v-float64(q[i])) > 1e-6 {
			t.Errorf("p[%d] = %v from %v", i, v, q[i])
		}
	}
	if math.Abs(sum-1) > 1e-15 {
		t.Errorf("sums to 1%+.3g", sum-1)
	}
	// the float64 renormalisation, in this order
	want := float64(q[2]) / (((float64(q[0]) + float64(q[1])) + float64(q[2])) + float64(q[3]))
	if p[2] != want {
		t.Errorf("p[2] = %v, want %v", p[2], want)
	}
}

// erringPredictor's states report an error after their first symbol.
type erringPredictor struct{}

func (erringPredictor) Name() string      { return "erring" }
func (erringPredictor) AlphabetSize() int { return 2 }
func (erringPredictor) NewState() State   { return &erringState{} }

type erringState struct{ n int }

func (s *erringState) Predict(p []float64) { Uniform(p) }
func (s *erringState) Observe(byte)        { s.n++ }
func (s *erringState) Err() error {
	if s.n > 0 {
		return errors.New("inexact beyond here")
	}
	return nil
}

// TestLogLossErring: a state that says its predictions stopped being exact
// makes LogLoss fail instead of returning the losses.
func TestLogLossErring(t *testing.T) {
	loss := make([]float64, 3)
	if _, err := LogLoss(erringPredictor{}, []byte{0, 1, 0}, loss); err == nil || err.Error() != "inexact beyond here" {
		t.Errorf("error %v", err)
	}
	if _, err := LogLoss(erringPredictor{}, nil, nil); err != nil {
		t.Errorf("empty sequence: %v", err)
	}
}
