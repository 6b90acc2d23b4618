package synth

import (
	"math"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestResidual checks the read-outs against the model's own: stream 0 is
// the model input (Input of the extractor's row after x_1..x_{t+1}), and
// the probabilities are softmax(W_o·h + b_o) of stream 1 (the head is the
// last block of HostParams).
func TestResidual(t *testing.T) {
	for _, embed := range []int{0, 6} {
		cfg := Config{Variant: WithAllCounts, A: 3, D: 2, Context: 8, Embed: embed}
		m, err := NewOn(cpu.NewDefault(), cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		const B, T = 2, 6
		x := []byte{0, 1, 2, 2, 1, 1, 0, 0, 2, 1, 1, 1}
		a := m.NewActivations(B, T, false)
		W, F, A := m.Config.Width(), m.Config.Features(), m.Config.A
		if _, err := a.Residual(0, make([]float32, B*T*W)); err == nil {
			t.Errorf("embed=%d: a read before Forward was accepted", embed)
		}
		m.Forward(a, x, B, T)
		s0, err := a.Residual(0, make([]float32, B*T*W))
		if err != nil {
			t.Fatal(err)
		}
		if embed == 0 {
			e, raw, in := m.NewExtractor(), make([]float64, F), make([]float32, F)
			for b := range B {
				e.Reset()
				for i := range T {
					e.Push(x[b*T+i])
					m.Input(e, raw, in)
					for k := range F {
						if got := s0[(b*T+i)*F+k]; got != in[k] {
							t.Fatalf("stream 0 row (%d,%d) col %d = %g, input %g", b, i, k, got, in[k])
						}
					}
				}
			}
		}
		h, err := a.Residual(1, make([]float32, B*T*W))
		if err != nil {
			t.Fatal(err)
		}
		params := m.HostParams()
		hw, hb := params[len(params)-A-A*W:len(params)-A], params[len(params)-A:]
		probs := a.Probs()
		for r := range B * T {
			logit := make([]float64, A)
			z := 0.0
			for k := range A {
				logit[k] = float64(hb[k])
				for e := range W {
					logit[k] += float64(hw[k*W+e]) * float64(h[r*W+e])
				}
				z += math.Exp(logit[k])
			}
			for k := range A {
				if want := math.Exp(logit[k]) / z; math.Abs(float64(probs[r*A+k])-want) > 1e-5 {
					t.Fatalf("embed=%d: P(row %d, %d) = %g, softmax(W·h+b) = %g", embed, r, k, probs[r*A+k], want)
				}
			}
		}
		for _, bad := range []int{-1, Streams} {
			if _, err := a.Residual(bad, make([]float32, B*T*W)); err == nil {
				t.Errorf("embed=%d: stream %d accepted", embed, bad)
			}
		}
		if _, err := a.Residual(1, make([]float32, 5)); err == nil {
			t.Errorf("embed=%d: a short destination was accepted", embed)
		}
		a.Free()
	}
}
