package synth

import "fmt"

// Streams is the number of residual-stream read-outs of a synth model
// (Activations.Residual): the stream a entering the feed-forward layer and
// the stream h after it.
const Streams = 2

// Residual copies the residual stream s of the last Forward on a into dst
// (length B·T·Width; row b·T + t is position t of window b) and returns
// it: stream 0 is a (the normalised features f, or W_e f + b_e with an
// embedding), stream 1 is h = a + W_1 σ(W_2 a + b_2) + b_1, the input of
// the read-out. One host copy of what Forward computed.
func (a *Activations) Residual(s int, dst []float32) ([]float32, error) {
	if s < 0 || s >= Streams {
		return nil, fmt.Errorf("synth: residual stream %d, want 0 (a) or 1 (h)", s)
	}
	if a.B == 0 {
		return nil, fmt.Errorf("synth: residual stream read before any Forward")
	}
	t := a.h
	if s == 0 {
		t = a.x
		if !a.a0.Absent() {
			t = a.a0
		}
	}
	n := a.B * a.T * (t.Len / (a.MaxB * a.MaxT))
	if len(dst) != n {
		return nil, fmt.Errorf("synth: residual stream of %d values into %d", n, len(dst))
	}
	a.be.Download(dst, t.Prefix(n))
	return dst, nil
}
