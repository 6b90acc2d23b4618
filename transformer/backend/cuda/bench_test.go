package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
)

// BenchmarkOps times each op of one layer's forward and backward pass on
// the GPU at the shapes of C2 (B=16, N=512) and of the paper (B=512,
// N=1536), E=128, 8 heads: where a training step's time goes. Each
// timing waits for the device.
func BenchmarkOps(b *testing.B) {
	be, err := New()
	if err != nil {
		b.Skipf("no CUDA device: %v", err)
	}
	defer be.Close()
	for _, sh := range []struct {
		name        string
		B, T, C, NH int
	}{{"C2", 16, 512, 128, 8}, {"paper", 512, 1536, 128, 8}} {
		B, T, C, NH := sh.B, sh.T, sh.C, sh.NH
		rows := B * T
		r := rand.New(rand.NewPCG(1, 2))
		rnd := func(n int) backend.Tensor {
			t, err := backend.AllocTensor(be, n)
			if err != nil {
				b.Fatal(err)
			}
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			be.Upload(t, x)
			return t
		}
		x, w, bias := rnd(rows*C), rnd(4*C*C), rnd(4*C)
		h, dh := rnd(rows*4*C), rnd(rows*4*C)
		qkv, dqkv, att, datt, lse := rnd(rows*3*C), rnd(rows*3*C), rnd(rows*C), rnd(rows*C), rnd(B*NH*T)
		mean, rstd, dw, db := rnd(rows), rnd(rows), rnd(4*C*C), rnd(4*C)
		be.AttentionForward(att, lse, qkv, B, T, C, NH)
		ops := []struct {
			name string
			f    func()
		}{
			{"matmul-fwd-fc", func() { be.MatmulForward(h, x, w, bias, rows, C, 4*C) }},
			{"matmul-bwd-fc", func() { be.MatmulBackward(x, dw, db, h, x, w, rows, C, 4*C, true) }},
			{"attention-fwd", func() { be.AttentionForward(att, lse, qkv, B, T, C, NH) }},
			{"attention-bwd", func() { be.AttentionBackward(dqkv, datt, qkv, lse, B, T, C, NH) }},
			{"layernorm-fwd", func() { be.LayerNormForward(att, mean, rstd, x, w.Prefix(C), bias.Prefix(C), rows, C) }},
			{"layernorm-bwd", func() { be.LayerNormBackward(datt, dw.Prefix(C), db.Prefix(C), x, x, w.Prefix(C), mean, rstd, rows, C) }},
			{"gelu-fwd", func() { be.ActivationForward(backend.GELU, dh, h) }},
			{"gelu-bwd", func() { be.ActivationBackward(backend.GELU, dh, h, h) }},
			{"add", func() { be.Add(x, x, att) }},
		}
		for _, op := range ops {
			b.Run(fmt.Sprintf("%s/%s", sh.name, op.name), func(b *testing.B) {
				op.f()
				be.enter()
				must(be.d.sync())
				be.exit()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					op.f()
				}
				be.enter()
				must(be.d.sync())
				be.exit()
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
		if err := backend.FreeAll(be, x, w, bias, h, dh, qkv, dqkv, att, datt, lse, mean, rstd, dw, db); err != nil {
			b.Fatal(err)
		}
	}
}
