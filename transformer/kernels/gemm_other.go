//go:build !amd64 || purego

package kernels

// hasSIMD is false: this build has no SIMD kernel.
const hasSIMD = false

// newSIMD returns nil: no SIMD kernel in this build.
func newSIMD(workers int) Kernel { return nil }

func softmaxSIMD(x *float32, n int, scale float32) (mx, sum float32) { panic("kernels: no SIMD") }

func softmaxBackwardSIMD(p *float32, dp *float32, n int, scale float32) { panic("kernels: no SIMD") }

func expSIMD(x *float32, n int) { panic("kernels: no SIMD") }

func geluForwardSIMD(out *float32, inp *float32, n int) { panic("kernels: no SIMD") }

func geluBackwardSIMD(dinp *float32, inp *float32, dout *float32, n int) { panic("kernels: no SIMD") }

func transposeSIMD(dst *float32, ldd int, src *float32, lds int, rows int, cols int) {
	panic("kernels: no SIMD")
}

func addSIMD(dst *float32, a *float32, b *float32, n int) { panic("kernels: no SIMD") }

func layernormSIMD(out *float32, mean *float32, rstd *float32, inp *float32, w *float32, b *float32, rows int, c int, invC float32, eps float32) {
	panic("kernels: no SIMD")
}

func layernormBackwardSIMD(dinp *float32, dw *float32, db *float32, dout *float32, inp *float32, w *float32, mean *float32, rstd *float32, rows int, c int, invC float32) {
	panic("kernels: no SIMD")
}

func scaledExpSIMD(x *float32, n int, scale float32, shift float32) { panic("kernels: no SIMD") }
