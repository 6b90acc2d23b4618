package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// refGemm is a float64 reference of C = β·C + op(A)·op(B).
func refGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				var x, y float32
				if transA {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if transB {
					y = b[j*ldb+p]
				} else {
					y = b[p*ldb+j]
				}
				s += float64(x) * float64(y)
			}
			if beta != 0 {
				s += float64(c[i*ldc+j])
			}
			out[i*n+j] = s
		}
	}
	return out
}

func TestGemmShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 4, 4}, {17, 9, 300}, {130, 66, 513}, {64, 3, 64}, {5, 260, 33}, {300, 200, 40}, {8, 2100, 9}}
	kernels := map[string]Kernel{"blocked": &Blocked{}, "blocked1": &Blocked{Workers: 1}, "blocked3": &Blocked{Workers: 3}, "naive": Naive{}}
	for _, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, beta := range []float32{0, 1} {
					lda, ldb, ldc := k+3, n+1, n+2
					if ta {
						lda = m + 1
					}
					if tb {
						ldb = k + 2
					}
					rowsA, rowsB := m, k
					if ta {
						rowsA = k
					}
					if tb {
						rowsB = n
					}
					a := randSlice(r, rowsA*lda)
					b := randSlice(r, rowsB*ldb)
					c0 := randSlice(r, m*ldc)
					want := refGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c0, ldc)
					for name, kern := range kernels {
						c := append([]float32(nil), c0...)
						if beta == 0 {
							for i := 0; i < m; i++ {
								for j := 0; j < n; j++ {
									c[i*ldc+j] = float32(math.NaN())
								}
							}
						}
						kern.Gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc)
						tol := 1e-5 * math.Sqrt(float64(k)) * 4
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								if d := math.Abs(float64(c[i*ldc+j]) - want[i*n+j]); !(d <= tol*(1+math.Abs(want[i*n+j]))) {
									t.Fatalf("%s m=%d n=%d k=%d tA=%v tB=%v β=%v: C[%d,%d]=%v want %v", name, m, n, k, ta, tb, beta, i, j, c[i*ldc+j], want[i*n+j])
								}
							}
							// padding between rows untouched
							for j := n; j < ldc && i*ldc+j < len(c); j++ {
								if c[i*ldc+j] != c0[i*ldc+j] {
									t.Fatalf("%s wrote outside C at (%d,%d)", name, i, j)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGemmWorkersDeterministic checks that the result is bit-identical for
// any number of workers.
func TestGemmWorkersDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 200, 70, 600
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	c1 := make([]float32, m*n)
	(&Blocked{Workers: 1}).Gemm(false, false, m, n, k, a, k, b, n, 0, c1, n)
	for _, w := range []int{2, 3, 7} {
		c := make([]float32, m*n)
		(&Blocked{Workers: w}).Gemm(false, false, m, n, k, a, k, b, n, 0, c, n)
		for i := range c {
			if c[i] != c1[i] {
				t.Fatalf("workers=%d differs at %d", w, i)
			}
		}
	}
}

// BenchmarkGemm measures the kernel on the matmul shapes of the C1 model
// (L=2, E=64, N=256, batch 32: B·T = 8192 rows). GFLOP/s = 2mnk/time.
func BenchmarkGemm(b *testing.B) {
	const BT, C = 8192, 64
	cases := []struct {
		name    string
		ta, tb  bool
		m, n, k int
	}{
		{"fwd_qkv", false, true, BT, 3 * C, C},
		{"fwd_fc", false, true, BT, 4 * C, C},
		{"fwd_fcproj", false, true, BT, C, 4 * C},
		{"bwd_dinp_fc", false, false, BT, C, 4 * C},
		{"bwd_dW_fc", true, false, 4 * C, C, BT},
		{"bwd_dW_fcproj", true, false, C, 4 * C, BT},
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, cs := range cases {
		for _, kern := range []struct {
			name string
			k    Kernel
		}{{"blocked", &Blocked{}}, {"blocked1", &Blocked{Workers: 1}}} {
			b.Run(fmt.Sprintf("%s/%s", cs.name, kern.name), func(b *testing.B) {
				lda, ldb := cs.k, cs.n
				if cs.ta {
					lda = cs.m
				}
				if cs.tb {
					ldb = cs.k
				}
				a := randSlice(r, cs.m*cs.k)
				bb := randSlice(r, cs.k*cs.n)
				c := make([]float32, cs.m*cs.n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					kern.k.Gemm(cs.ta, cs.tb, cs.m, cs.n, cs.k, a, lda, bb, ldb, 0, c, cs.n)
				}
				b.ReportMetric(2*float64(cs.m)*float64(cs.n)*float64(cs.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
