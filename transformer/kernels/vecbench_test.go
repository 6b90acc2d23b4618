package kernels

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkVectorOps measures every usable set's vector kernels on the
// sizes of a C1/C2 training step (softmax rows of T = 256, GELU and add
// over 8192 values, AddRows of 64 rows × 128 (a bias gradient's column
// sums), LayerNorm of 64 rows × 128, a 256×16 K/V transpose;
// the causal attention's rows of every length 1..256);
// ns/elem-cpu is the CPU time per element.
func BenchmarkVectorOps(b *testing.B) {
	r := rand.New(rand.NewPCG(2, 3))
	const n, rows, c = 8192, 64, 128
	x, y, z := randSlice(r, n), randSlice(r, n), randSlice(r, n)
	w, bb := randSlice(r, c), randSlice(r, c)
	mean, rstd := make([]float32, rows), make([]float32, rows)
	ops := []struct {
		name  string
		elems int
		f     func(ks *Set)
	}{
		{"exp", n, func(ks *Set) { ks.ExpInPlace(z) }},
		{"softmax256", 256, func(ks *Set) { ks.Softmax(y[:256], 0.25) }},
		{"softmaxCausal256", 256 * 257 / 2, func(ks *Set) {
			for l := 1; l <= 256; l++ {
				ks.Softmax(y[:l], 0.25)
			}
		}},
		{"scaledExpCausal256", 256 * 257 / 2, func(ks *Set) {
			for l := 1; l <= 256; l++ {
				ks.ScaledExp(y[:l], 0.25, 1)
			}
		}},
		{"softmaxBackward256", 256, func(ks *Set) { ks.SoftmaxBackward(x[:256], z[:256], 0.25) }},
		{"geluForward", n, func(ks *Set) { ks.GeluForward(z, x) }},
		{"geluBackward", n, func(ks *Set) { ks.GeluBackward(z, x, y) }},
		{"add", n, func(ks *Set) { ks.Add(z, x, y) }},
		{"addRows64x128", n, func(ks *Set) { ks.AddRows(z[:c], x, n/c, c, c) }},
		{"layernorm", rows * c, func(ks *Set) { ks.LayerNorm(z, mean, rstd, x, w, bb, rows, c, 1e-5) }},
		{"layernormBackward", rows * c, func(ks *Set) { ks.LayerNormBackward(z, w, bb, y, x, w, mean, rstd, rows, c) }},
		{"transpose256x16", 256 * 16, func(ks *Set) { ks.Transpose(z, 256, x, 16, 256, 16) }},
	}
	for _, op := range ops {
		for _, s := range allSets {
			if !s.usable {
				continue
			}
			b.Run(op.name+"/"+s.name, func(b *testing.B) {
				t0 := cpuTime()
				for i := 0; i < b.N; i++ {
					op.f(s)
				}
				if cpu := cpuTime() - t0; cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(op.elems), "ns/elem-cpu")
				}
			})
		}
	}
}
