//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestTransposeGather checks the AVX-512 gather transpose, which the
// avx512 set uses only on a CPU without AVX2.
func TestTransposeGather(t *testing.T) {
	if !cpu.X86.HasAVX512F {
		t.Skip("no AVX-512F")
	}
	checkTranspose(t, rand.New(rand.NewPCG(8, 9)), "gather", func(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
		transposeSIMD(&dst[0], ldd, &src[0], lds, rows, cols)
	})
}

// BenchmarkMicroKernel measures each usable ISA's full-tile micro-kernel
// alone (mr × 2·vl tile, kb steps, A and B packed panels that stay in L1,
// C overwritten): the ceiling of the GEMM, to compare with the core's FMA
// peak (flop/cycle × clock). GFLOP/cpu-s = 2·mr·nr·kb per call / CPU time.
func BenchmarkMicroKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, s := range simdSets() {
		t := s.gemm(1).(*simdKernel).isa
		for _, rows := range []bool{false, true} {
			for _, kb := range []int{64, 256} {
				name := fmt.Sprintf("%s/%dx%d/rows=%v/kb=%d", t.name, t.mr, t.nr(), rows, kb)
				b.Run(name, func(b *testing.B) {
					a := randSlice(r, t.mr*kb)
					bp := randSlice(r, t.nr()*kb)
					c := make([]float32, t.mr*t.nr())
					astride := 4 * t.mr
					if rows {
						astride = 4 * kb
					}
					kern := t.kern[1][0]
					if rows {
						kern = t.kern[1][1]
					}
					mask := 1<<t.vl - 1
					b.ResetTimer()
					t0 := cpuTime()
					for i := 0; i < b.N; i++ {
						kern(kb, &a[0], astride, &bp[0], 4*t.nr(), &c[0], t.nr(), t.mr, mask, 0)
					}
					flop := 2 * float64(t.mr*t.nr()*kb) * float64(b.N)
					if cpu := cpuTime() - t0; cpu > 0 {
						b.ReportMetric(flop/cpu.Seconds()/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}
