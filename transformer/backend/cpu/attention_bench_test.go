package cpu_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// BenchmarkAttention times the attention forward and backward of the C1,
// C2 and paper shapes (head size 16) with the default kernel set's fused
// kernels and, in the same run, with its GEMMs (cpu.WithoutFusedAttention);
// ns/op is the fused time, "x-gemm" the GEMM path's time over it. Run it
// with -cpu 1 for the single-thread ratio.
func BenchmarkAttention(b *testing.B) {
	ks := kernels.Default()
	if !ks.HasAttention16() {
		b.Skipf("kernel set %s has no fused attention", ks.Name())
	}
	for _, sh := range []struct {
		name        string
		B, T, C, NH int
	}{{"C1", 32, 256, 64, 4}, {"C2", 16, 512, 128, 8}, {"paper", 4, 1536, 128, 8}} {
		r := rand.New(rand.NewPCG(1, 2))
		randT := func(n int) backend.Tensor {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			return backend.Whole(cpu.Wrap(x))
		}
		B, T, C, NH := sh.B, sh.T, sh.C, sh.NH
		fused, gemm := cpu.New(ks), cpu.New(ks, cpu.WithoutFusedAttention())
		qkv, dout := randT(B*T*3*C), randT(B*T*C)
		out, lse, dqkv := randT(B*T*C), randT(B*NH*T), randT(B*T*3*C)
		for _, pass := range []string{"fwd", "bwd"} {
			run := func(be *cpu.Backend, n int) time.Duration {
				t0 := time.Now()
				for i := 0; i < n; i++ {
					if pass == "fwd" {
						be.AttentionForward(out, lse, qkv, B, T, C, NH)
					} else {
						be.AttentionBackward(dqkv, dout, qkv, lse, B, T, C, NH)
					}
				}
				return time.Since(t0)
			}
			b.Run(sh.name+"/"+pass, func(b *testing.B) {
				fused.AttentionForward(out, lse, qkv, B, T, C, NH) // lse for the backward
				run(gemm, 1)
				b.ResetTimer()
				tf := run(fused, b.N)
				b.StopTimer()
				tg := run(gemm, b.N)
				b.ReportMetric(tg.Seconds()/tf.Seconds(), "x-gemm")
			})
		}
	}
}
