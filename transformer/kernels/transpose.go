package kernels

import "fmt"

// Transpose sets dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols:
// dst (cols × rows, row stride ldd) = srcᵀ (src rows × cols, row stride
// lds). It uses the set's kernel.
func (ks *Set) Transpose(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	if lds < cols || ldd < rows || len(src) < (rows-1)*lds+cols || len(dst) < (cols-1)*ldd+rows {
		panic(fmt.Sprintf("kernels: Transpose of %d×%d with lds=%d ldd=%d, len src, dst = %d, %d", rows, cols, lds, ldd, len(src), len(dst)))
	}
	if f := ks.vec.transpose; f != nil {
		f(&dst[0], ldd, &src[0], lds, rows, cols)
		return
	}
	transposeGo(dst, ldd, src, lds, rows, cols)
}

func transposeGo(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
	for i := 0; i < rows; i++ {
		row := src[i*lds : i*lds+cols]
		for j, v := range row {
			dst[j*ldd+i] = v
		}
	}
}
