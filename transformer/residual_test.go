package transformer

import (
	"math"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestResidualStreams checks the read-outs against the model: every
// stream equals the training path's buffer of the same pass (Forward's
// encoded and layer outputs, bit for bit on the CPU), stream 0 is
// W_te[x_t] + pos_t, and (without the final LayerNorm) the logits are
// W_head·x^L + b_head — with and without the feed-forward sub-layer and
// LayerNorm; the probabilities are ForwardInfer's.
func TestResidualStreams(t *testing.T) {
	for _, tc := range []struct{ ff, ln bool }{{true, false}, {false, false}, {true, true}} {
		cfg := DefaultConfig(2, 2, 8, 6, 3)
		cfg.FeedForward, cfg.LayerNorm = tc.ff, tc.ln
		m, err := NewOn(cpu.NewDefault(), cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		const B, T = 2, 5
		E, A := cfg.Embed, cfg.Alphabet
		x := []byte{0, 1, 2, 2, 1, 1, 0, 0, 2, 1}
		in, err := m.AllocInference(B * T)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([][]float32, cfg.Streams())
		for s := range dst {
			dst[s] = make([]float32, B*T*E)
		}
		if err := m.ResidualStreams(in, x, B, T, nil, dst); err != nil {
			t.Fatal(err)
		}
		probs := append([]float32(nil), in.Probs()...)
		// rows picked out: the same values
		rows := []int{7, 0, 3}
		some := make([][]float32, cfg.Streams())
		for s := range some {
			some[s] = make([]float32, len(rows)*E)
		}
		if err := m.ResidualStreams(in, x, B, T, rows, some); err != nil {
			t.Fatal(err)
		}
		for s := range some {
			for i, r := range rows {
				for e := range E {
					if some[s][i*E+e] != dst[s][r*E+e] {
						t.Fatalf("%+v: stream %d row %d picked out = %g, in the whole stream %g", tc, s, r, some[s][i*E+e], dst[s][r*E+e])
					}
				}
			}
		}
		a := m.NewActivations(B, T, false)
		m.Forward(a, x, B, T)
		for s := range dst {
			ref := a.act.encoded
			if s > 0 {
				ref = a.act.layers[s-1].out()
			}
			for i, v := range backend.ToHost(m.be, ref.Prefix(B*T*E)) {
				if dst[s][i] != v {
					t.Fatalf("%+v: stream %d value %d = %g, the training path's %g", tc, s, i, dst[s][i], v)
				}
			}
		}
		for i, p := range a.Probs() {
			if probs[i] != p {
				t.Fatalf("%+v: probability %d = %g after ResidualStreams, %g after Forward", tc, i, probs[i], p)
			}
		}
		wte, pos := backend.ToHost(m.be, m.p.wte), backend.ToHost(m.be, m.pos)
		for r := range B * T {
			for e := range E {
				if want := wte[int(x[r])*E+e] + pos[(r%T)*E+e]; math.Abs(float64(dst[0][r*E+e]-want)) > 1e-6 {
					t.Fatalf("%+v: stream 0 row %d col %d = %g, want %g", tc, r, e, dst[0][r*E+e], want)
				}
			}
		}
		if !tc.ln {
			hw, hb, logits := backend.ToHost(m.be, m.p.headw), backend.ToHost(m.be, m.p.headb), a.Logits()
			xL := dst[cfg.Layers]
			for r := range B * T {
				for k := range A {
					want := float64(hb[k])
					for e := range E {
						want += float64(hw[k*E+e]) * float64(xL[r*E+e])
					}
					if math.Abs(float64(logits[r*A+k])-want) > 1e-4 {
						t.Fatalf("%+v: logit (%d,%d) = %g, W·x^L+b = %g", tc, r, k, logits[r*A+k], want)
					}
				}
			}
		}
		for _, bad := range []struct {
			x    []byte
			B, T int
			rows []int
			dst  [][]float32
		}{
			{x, B, T, nil, append(dst, dst[0])},                    // too many streams
			{x, B, T, nil, [][]float32{make([]float32, 3)}},        // short destination
			{x, B, T, []int{10}, [][]float32{make([]float32, E)}},  // row outside the pass
			{x, B, T, []int{1}, dst},                               // destination of all rows
			{x[:9], B, T, nil, dst},                                // inputs
			{x, 1, 10, nil, dst},                                   // T > N
			{[]byte{0, 1, 2, 3, 1, 1, 0, 0, 2, 1}, B, T, nil, dst}, // symbol 3
		} {
			if err := m.ResidualStreams(in, bad.x, bad.B, bad.T, bad.rows, bad.dst); err == nil {
				t.Errorf("%+v: a bad call (%d inputs, (%d,%d), %d streams) was accepted", tc, len(bad.x), bad.B, bad.T, len(bad.dst))
			}
		}
		a.Free()
		in.Free()
	}
}
