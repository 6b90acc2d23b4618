//go:build amd64 && !purego

package kernels

import "unsafe"

// Declarations of the AVX-512 vector kernels other than the GEMM ones:
// softmax_exp_avx512_amd64.s (exp, softmax, log-sum-exp recompute), gelu_avx512_amd64.s,
// layernorm_avx512_amd64.s, add_avx512_amd64.s, transpose_avx512_amd64.s. Counts are ≥ 1; see
// the exported wrappers (Softmax, GeluForward, LayerNorm, Add, Transpose,
// …) for the semantics and the portable fallbacks.

//go:noescape
func softmaxSIMD(x *float32, n int, scale float32) (mx float32, sum float32)

//go:noescape
func softmaxBackwardSIMD(p *float32, dp *float32, n int, scale float32)

//go:noescape
func expSIMD(x *float32, n int)

//go:noescape
func geluForwardSIMD(out *float32, inp *float32, n int)

//go:noescape
func geluBackwardSIMD(dinp *float32, inp *float32, dout *float32, n int)

//go:noescape
func geluBackwardSetSIMD(dinp *float32, inp *float32, dout *float32, n int)

//go:noescape
func transposeSIMD(dst *float32, ldd int, src *float32, lds int, rows int, cols int)

//go:noescape
func addSIMD(dst *float32, a *float32, b *float32, n int)

//go:noescape
func addRowsBlockSIMD(dst *float32, m *float32, rows int, ld int, mask uint64)

// addRowsSIMD is Set.AddRows on blocks of 64 columns (addRowsBlockSIMD):
// the same additions in the same order as Add row after row.
func addRowsSIMD(dst, m *float32, rows, cols, ld int) {
	for j := 0; j < cols; j += 64 {
		n := min(64, cols-j)
		addRowsBlockSIMD((*float32)(unsafe.Add(unsafe.Pointer(dst), 4*j)), (*float32)(unsafe.Add(unsafe.Pointer(m), 4*j)), rows, ld, ^uint64(0)>>(64-n))
	}
}

//go:noescape
func layernormSIMD(out *float32, mean *float32, rstd *float32, inp *float32, w *float32, b *float32, rows int, c int, invC float32, eps float32)

//go:noescape
func layernormBackwardSIMD(dinp *float32, dw *float32, db *float32, dout *float32, inp *float32, w *float32, mean *float32, rstd *float32, rows int, c int, invC float32)

//go:noescape
func scaledExpSIMD(x *float32, n int, scale float32, shift float32)

// The fused attention kernels of head size 16 (attention16_avx512_amd64.s,
// written by attngen.go): one block of up to 16 queries each.

//go:noescape
func attn16FwdAVX512(a *attn16Args)

//go:noescape
func attn16BwdAVX512(a *attn16Args)

// attn16Forward and attn16Backward are the fused attention kernels of the
// sets with vectorOps.attn16 (avx512).
func attn16Forward(a *attn16Args)  { attn16FwdAVX512(a) }
func attn16Backward(a *attn16Args) { attn16BwdAVX512(a) }
