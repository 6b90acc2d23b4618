//go:build !amd64 || purego

package kernels

// hasSIMD is false: this build has no SIMD kernel.
const hasSIMD = false

// newSIMD returns nil: no SIMD kernel in this build.
func newSIMD(workers int) Kernel { return nil }

func softmaxSIMD(x *float32, n int, scale float32) { panic("kernels: no SIMD") }

func softmaxBackwardSIMD(p *float32, dp *float32, n int, scale float32) { panic("kernels: no SIMD") }

func expSIMD(x *float32, n int) { panic("kernels: no SIMD") }

func geluForwardSIMD(out *float32, inp *float32, n int) { panic("kernels: no SIMD") }

func geluBackwardSIMD(dinp *float32, inp *float32, dout *float32, n int) { panic("kernels: no SIMD") }
