//go:build amd64 && !purego

package kernels

// The AVX-512 row kernels of softmax_amd64.s (n ≥ 1; see Softmax and
// SoftmaxBackward).

//go:noescape
func softmaxSIMD(x *float32, n int, scale float32)

//go:noescape
func softmaxBackwardSIMD(p *float32, dp *float32, n int, scale float32)

//go:noescape
func expSIMD(x *float32, n int)

//go:noescape
func geluForwardSIMD(out *float32, inp *float32, n int)

//go:noescape
func geluBackwardSIMD(dinp *float32, inp *float32, dout *float32, n int)
