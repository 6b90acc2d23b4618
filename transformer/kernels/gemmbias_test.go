package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestGemmBias: every GEMM of a set that adds the bias itself
// (BiasKernel) gives bit for bit what Gemm with β = 0 followed by the
// row additions (Set.Add) gives, on 1 and 4 goroutines, for products of
// one and of several blocks of k, edge tiles of rows and columns and a
// leading dimension wider than the product.
func TestGemmBias(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tested := 0
	for _, s := range allSets {
		if !s.usable {
			continue
		}
		for _, w := range []int{1, 4} {
			bk, ok := s.GEMM(w).(BiasKernel)
			if !ok {
				continue
			}
			tested++
			for _, sh := range [][3]int{{1, 1, 1}, {13, 17, 5}, {200, 192, 64}, {96, 256, 64}, {300, 64, 256}, {50, 37, 700}, {8192 / 16, 3, 64}} {
				m, n, k := sh[0], sh[1], sh[2]
				ldc := n + 3
				a, b, bias := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, n)
				want := make([]float32, m*ldc)
				got := make([]float32, m*ldc)
				for i := range got {
					got[i], want[i] = -7, -7 // outside the product: untouched
				}
				bk.Gemm(false, true, m, n, k, a, k, b, k, 0, want, ldc)
				for i := 0; i < m; i++ {
					s.Add(want[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n], bias)
				}
				bk.GemmBias(false, true, m, n, k, a, k, b, k, got, ldc, bias)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s, %d workers, %dx%dx%d: element %d = %v, want %v", s.Name(), w, m, n, k, i, got[i], want[i])
					}
				}
			}
		}
	}
	if tested == 0 {
		t.Skip("no GEMM of this machine's sets adds the bias itself")
	}
}
