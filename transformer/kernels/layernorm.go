package kernels

import (
	"fmt"
	"math"
)

// LayerNorm normalises each of the rows of inp (rows × c, contiguous):
// mean[r] = Σx/c, rstd[r] = 1/√(Σ(x−mean)²/c + eps), out = (x − mean)·rstd·w
// + b. The SIMD versions sum in float32 (16 lanes for avx512, 8 for avx2),
// the portable one in float64. It uses the set's kernel.
func (ks *Set) LayerNorm(out, mean, rstd, inp, w, b []float32, rows, c int, eps float32) {
	if rows <= 0 || c <= 0 {
		return
	}
	n := rows * c
	if len(out) < n || len(inp) < n || len(mean) < rows || len(rstd) < rows || len(w) < c || len(b) < c {
		panic(fmt.Sprintf("kernels: LayerNorm of %d×%d with short operands", rows, c))
	}
	if f := ks.vec.layernorm; f != nil {
		f(&out[0], &mean[0], &rstd[0], &inp[0], &w[0], &b[0], rows, c, 1/float32(c), eps)
		return
	}
	layernormGo(out, mean, rstd, inp, w, b, rows, c, eps)
}

// LayerNormBackward accumulates, for the rows of LayerNorm with the
// forward's mean and rstd and x̂ = (x − mean)·rstd, g = dout·w:
// db += dout, dw += dout·x̂ (summed over rows in row order) and dinp +=
// rstd·(g − mean(g) − x̂·mean(g·x̂)).
func (ks *Set) LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, c int) {
	if rows <= 0 || c <= 0 {
		return
	}
	n := rows * c
	if len(dinp) < n || len(dout) < n || len(inp) < n || len(mean) < rows || len(rstd) < rows || len(w) < c || len(dw) < c || len(db) < c {
		panic(fmt.Sprintf("kernels: LayerNormBackward of %d×%d with short operands", rows, c))
	}
	if f := ks.vec.layernormBackward; f != nil {
		f(&dinp[0], &dw[0], &db[0], &dout[0], &inp[0], &w[0], &mean[0], &rstd[0], rows, c, 1/float32(c))
		return
	}
	layernormBackwardGo(dinp, dw, db, dout, inp, w, mean, rstd, rows, c)
}

func layernormGo(out, mean, rstd, inp, w, b []float32, rows, c int, eps float32) {
	w, b = w[:c], b[:c]
	for r := 0; r < rows; r++ {
		x := inp[r*c : (r+1)*c]
		var m float64
		for _, v := range x {
			m += float64(v)
		}
		m /= float64(c)
		var v2 float64
		for _, v := range x {
			d := float64(v) - m
			v2 += d * d
		}
		s := 1 / math.Sqrt(v2/float64(c)+float64(eps))
		mf, sf := float32(m), float32(s)
		o := out[r*c : (r+1)*c]
		for i, v := range x {
			o[i] = (v-mf)*sf*w[i] + b[i]
		}
		mean[r], rstd[r] = mf, sf
	}
}

func layernormBackwardGo(dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, c int) {
	w, dw, db = w[:c], dw[:c], db[:c]
	for r := 0; r < rows; r++ {
		x := inp[r*c : (r+1)*c]
		d := dout[r*c : (r+1)*c]
		m, s := mean[r], rstd[r]
		var gm, gxm float32
		for i, v := range x {
			xh := (v - m) * s
			g := d[i] * w[i]
			gm += g
			gxm += g * xh
		}
		gm /= float32(c)
		gxm /= float32(c)
		di := dinp[r*c : (r+1)*c]
		for i, v := range x {
			xh := (v - m) * s
			db[i] += d[i]
			dw[i] += d[i] * xh
			di[i] += s * (d[i]*w[i] - gm - xh*gxm)
		}
	}
}
