package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestTranspose checks Transpose (portable and SIMD) on shapes with and
// without a partial block of 16 rows, leaving the padding of dst alone.
func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	impls := map[string]func(dst []float32, ldd int, src []float32, lds int, rows, cols int){"go": transposeGo, "dispatch": Best().Transpose}
	for _, s := range simdSets() {
		if f := s.vec.transpose; f != nil {
			impls[s.name] = func(dst []float32, ldd int, src []float32, lds int, rows, cols int) {
				f(&dst[0], ldd, &src[0], lds, rows, cols)
			}
		}
	}
	for name, tr := range impls {
		checkTranspose(t, r, name, tr)
	}
}

// checkTranspose checks one transpose implementation on shapes with and
// without partial blocks, leaving the padding of dst alone.
func checkTranspose(t *testing.T, r *rand.Rand, name string, tr func(dst []float32, ldd int, src []float32, lds int, rows, cols int)) {
	t.Helper()
	for _, sh := range [][2]int{{1, 1}, {16, 16}, {17, 3}, {256, 16}, {100, 7}, {5, 40}, {33, 1}, {8, 8}, {24, 17}, {9, 64}} {
		rows, cols := sh[0], sh[1]
		lds, ldd := cols+5, rows+3
		src := randSlice(r, rows*lds)
		dst := make([]float32, cols*ldd)
		for i := range dst {
			dst[i] = -1
		}
		tr(dst, ldd, src[:(rows-1)*lds+cols], lds, rows, cols)
		for j := 0; j < cols; j++ {
			for i := 0; i < ldd; i++ {
				want := float32(-1)
				if i < rows {
					want = src[i*lds+j]
				}
				if dst[j*ldd+i] != want {
					t.Fatalf("%s %v: dst[%d,%d] = %v, want %v", name, sh, j, i, dst[j*ldd+i], want)
				}
			}
		}
	}
}
