//go:build amd64 && !purego

package kernels

// Declarations of the AVX2 + FMA vector kernels of vec_avx2_amd64.s (the
// avx2 set), 8-float vectors, the n mod 8 tail under VMASKMOVPS. Counts
// are ≥ 1; see the exported wrappers (Softmax, GeluForward, LayerNorm,
// Add, Transpose, …) for the semantics and the portable fallbacks.

//go:noescape
func softmaxAVX2(x *float32, n int, scale float32) (mx float32, sum float32)

//go:noescape
func softmaxBackwardAVX2(p *float32, dp *float32, n int, scale float32)

//go:noescape
func expAVX2(x *float32, n int)

//go:noescape
func scaledExpAVX2(x *float32, n int, scale float32, shift float32)

//go:noescape
func geluForwardAVX2(out *float32, inp *float32, n int)

//go:noescape
func geluBackwardAVX2(dinp *float32, inp *float32, dout *float32, n int)

//go:noescape
func geluBackwardSetAVX2(dinp *float32, inp *float32, dout *float32, n int)

//go:noescape
func addAVX2(dst *float32, a *float32, b *float32, n int)

//go:noescape
func layernormAVX2(out *float32, mean *float32, rstd *float32, inp *float32, w *float32, b *float32, rows int, c int, invC float32, eps float32)

//go:noescape
func layernormBackwardAVX2(dinp *float32, dw *float32, db *float32, dout *float32, inp *float32, w *float32, mean *float32, rstd *float32, rows int, c int, invC float32)

//go:noescape
func transposeBlocksAVX2(dst *float32, ldd int, src *float32, lds int, rows int, cols int)

// transposeAVX2 transposes the 8×8 blocks of the largest multiple-of-8
// corner with transposeBlocksAVX2 and the rest (the last rows mod 8 and
// columns mod 8) with the portable loop.
func transposeAVX2(dst *float32, ldd int, src *float32, lds, rows, cols int) {
	r8, c8 := rows&^7, cols&^7
	if r8 > 0 && c8 > 0 {
		transposeBlocksAVX2(dst, ldd, src, lds, r8, c8)
	}
	if r8 == rows && c8 == cols {
		return
	}
	d := unsafeSlice(dst, (cols-1)*ldd+rows)
	s := unsafeSlice(src, (rows-1)*lds+cols)
	if c8 < cols {
		// columns c8.. of every row
		transposeGo(d[c8*ldd:], ldd, s[c8:], lds, rows, cols-c8)
	}
	if r8 < rows && c8 > 0 {
		// rows r8.. of the first c8 columns
		transposeGo(d[r8:], ldd, s[r8*lds:], lds, rows-r8, c8)
	}
}
