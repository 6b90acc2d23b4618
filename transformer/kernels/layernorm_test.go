package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayerNorm compares LayerNorm and LayerNormBackward (portable and
// SIMD) with float64 references for widths 1..70 and 128, 200 (every tail
// of the vector loops), rows with a large common offset included.
func TestLayerNorm(t *testing.T) {
	type impl struct {
		name string
		fwd  func(out, mean, rstd, inp, w, b []float32, rows, c int)
		bwd  func(dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, c int)
	}
	impls := []impl{{"go", func(out, mean, rstd, inp, w, b []float32, rows, c int) {
		layernormGo(out, mean, rstd, inp, w, b, rows, c, 1e-5)
	}, layernormBackwardGo}}
	for _, s := range simdSets() {
		f, bw := s.vec.layernorm, s.vec.layernormBackward
		if f == nil || bw == nil {
			continue
		}
		impls = append(impls, impl{s.name, func(out, mean, rstd, inp, w, b []float32, rows, c int) {
			f(&out[0], &mean[0], &rstd[0], &inp[0], &w[0], &b[0], rows, c, 1/float32(c), 1e-5)
		}, func(dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, c int) {
			bw(&dinp[0], &dw[0], &db[0], &dout[0], &inp[0], &w[0], &mean[0], &rstd[0], rows, c, 1/float32(c))
		}})
	}
	r := rand.New(rand.NewPCG(2, 2))
	widths := []int{128, 200}
	for c := 1; c <= 70; c++ {
		widths = append(widths, c)
	}
	for _, im := range impls {
		for _, c := range widths {
			rows := 3
			inp := randSlice(r, rows*c+1)
			for i := c; i < 2*c; i++ {
				inp[i] += 30 // offset row
			}
			w, b, dout := randSlice(r, c+1), randSlice(r, c+1), randSlice(r, rows*c+1)
			out := make([]float32, rows*c+1)
			out[rows*c] = 7
			mean, rstd := make([]float32, rows), make([]float32, rows)
			im.fwd(out, mean, rstd, inp, w, b, rows, c)
			dinp := make([]float32, rows*c+1)
			dw, db := make([]float32, c+1), make([]float32, c+1)
			dinp[rows*c], dw[c], db[c] = 7, 7, 7
			for i := range dw[:c] {
				dw[i], db[i] = 0.5, -0.5
			}
			im.bwd(dinp, dw, db, dout, inp, w, mean, rstd, rows, c)
			if out[rows*c] != 7 || dinp[rows*c] != 7 || dw[c] != 7 || db[c] != 7 {
				t.Fatalf("%s c=%d: wrote past the end", im.name, c)
			}
			wdw, wdb := make([]float64, c), make([]float64, c)
			for i := range wdw {
				wdw[i], wdb[i] = 0.5, -0.5
			}
			for row := 0; row < rows; row++ {
				x := inp[row*c : (row+1)*c]
				m, v := 0.0, 0.0
				for _, xv := range x {
					m += float64(xv)
				}
				m /= float64(c)
				for _, xv := range x {
					v += (float64(xv) - m) * (float64(xv) - m)
				}
				s := 1 / math.Sqrt(v/float64(c)+1e-5)
				if math.Abs(float64(mean[row])-m) > 1e-6*(1+math.Abs(m)) || math.Abs(float64(rstd[row])-s) > 1e-5*s {
					t.Fatalf("%s c=%d row %d: mean, rstd %v, %v want %v, %v", im.name, c, row, mean[row], rstd[row], m, s)
				}
				gm, gxm := 0.0, 0.0
				xh := make([]float64, c)
				for i, xv := range x {
					xh[i] = (float64(xv) - m) * s
					want := xh[i]*float64(w[i]) + float64(b[i])
					if d := math.Abs(float64(out[row*c+i]) - want); d > 2e-5*(1+math.Abs(want)) {
						t.Fatalf("%s c=%d: out[%d,%d] = %v, want %v", im.name, c, row, i, out[row*c+i], want)
					}
					g := float64(dout[row*c+i]) * float64(w[i])
					gm += g / float64(c)
					gxm += g * xh[i] / float64(c)
					wdw[i] += float64(dout[row*c+i]) * xh[i]
					wdb[i] += float64(dout[row*c+i])
				}
				for i := range x {
					want := s * (float64(dout[row*c+i])*float64(w[i]) - gm - xh[i]*gxm)
					if d := math.Abs(float64(dinp[row*c+i]) - want); d > 1e-4*(s+math.Abs(want)) {
						t.Fatalf("%s c=%d: dinp[%d,%d] = %v, want %v", im.name, c, row, i, dinp[row*c+i], want)
					}
				}
			}
			for i := 0; i < c; i++ {
				if math.Abs(float64(dw[i])-wdw[i]) > 1e-4*(1+math.Abs(wdw[i])) || math.Abs(float64(db[i])-wdb[i]) > 1e-5*(1+math.Abs(wdb[i])) {
					t.Fatalf("%s c=%d: dw, db[%d] = %v, %v want %v, %v", im.name, c, i, dw[i], db[i], wdw[i], wdb[i])
				}
			}
		}
	}
}
