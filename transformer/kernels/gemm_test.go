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

// testKernels are the kernels under test: the portable kernel with
// various worker counts, the reference, and the SIMD kernel where this
// build and CPU have one.
func testKernels() map[string]Kernel {
	ks := map[string]Kernel{"blocked": &Blocked{}, "blocked1": &Blocked{Workers: 1}, "blocked3": &Blocked{Workers: 3}, "naive": Naive{}}
	for _, s := range simdSets() {
		ks[s.name], ks[s.name+"1"], ks[s.name+"3"], ks[s.name+"7"] = s.gemm(0), s.gemm(1), s.gemm(3), s.gemm(7)
	}
	return ks
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
	shapes := [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 4, 4}, {17, 9, 300}, {130, 66, 513}, {64, 3, 64}, {5, 260, 33}, {300, 200, 40}, {8, 2100, 9},
		{12, 32, 1}, {13, 33, 1}, {25, 17, 1}, {11, 16, 2}, {1, 47, 5}, {36, 48, 256}, {37, 49, 257}, {100, 31, 600}, {24, 64, 70}, {40, 300, 700}, {300, 40, 530}, {12, 16, 1030}}
	kernels := testKernels()
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
	newKernels := map[string]func(w int) Kernel{"blocked": func(w int) Kernel { return &Blocked{Workers: w} }}
	for _, s := range simdSets() {
		newKernels[s.name] = s.gemm
	}
	for name, newK := range newKernels {
		// tall (split by rows) and wide (split by columns) products
		for _, sh := range [][3]int{{200, 70, 600}, {30, 500, 300}, {30, 500, 900}, {200, 100, 200}} {
			m, n, k := sh[0], sh[1], sh[2]
			for _, ta := range []bool{false, true} {
				a, b := randSlice(r, m*k), randSlice(r, k*n)
				lda := k
				if ta {
					lda = m
				}
				c1 := make([]float32, m*n)
				newK(1).Gemm(ta, false, m, n, k, a, lda, b, n, 0, c1, n)
				for _, w := range []int{2, 3, 7} {
					c := make([]float32, m*n)
					newK(w).Gemm(ta, false, m, n, k, a, lda, b, n, 0, c, n)
					for i := range c {
						if c[i] != c1[i] {
							t.Fatalf("%s %v workers=%d differs at %d", name, sh, w, i)
						}
					}
				}
				c := make([]float32, m*n)
				Serial(newK(0)).Gemm(ta, false, m, n, k, a, lda, b, n, 0, c, n)
				for i := range c {
					if c[i] != c1[i] {
						t.Fatalf("%s %v Serial differs at %d", name, sh, i)
					}
				}
			}
		}
	}
}

// TestGemmAllocs checks that the GEMM of every set this build and CPU run
// allocates nothing per call once its pools are warm, on one goroutine and
// on several: small products (the serial path, where an edge tile must
// not escape to the heap) and tall and wide ones (split by rows or by
// columns over the goroutine pool), every transposition.
func TestGemmAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates and empties sync.Pools")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, info := range Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			s, err := Lookup(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, sh := range [][3]int{{5, 7, 9}, {16, 16, 16}, {200, 70, 40}, {30, 500, 30}} {
				m, n, k := sh[0], sh[1], sh[2]
				a, b, c := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
				for _, w := range []int{1, 3, 0} {
					kern := s.GEMM(w)
					for _, ta := range []bool{false, true} {
						for _, tb := range []bool{false, true} {
							lda, ldb := k, n
							if ta {
								lda = m
							}
							if tb {
								ldb = k
							}
							f := func() { kern.Gemm(ta, tb, m, n, k, a, lda, b, ldb, 0, c, n) }
							f()
							if got := testing.AllocsPerRun(10, f); got != 0 {
								t.Errorf("%v workers=%d tA=%v tB=%v: %v allocations per call", sh, w, ta, tb, got)
							}
						}
					}
				}
			}
		})
	}
}

// TestGemmShortSlices checks that the kernels refuse operands too short
// for the shape instead of reading or writing past them.
func TestGemmShortSlices(t *testing.T) {
	sets := simdSets()
	if len(sets) == 0 {
		t.Skip("no SIMD kernel set runs here")
	}
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) { testGemmShortSlices(t, s.gemm(1)) })
	}
}

func testGemmShortSlices(t *testing.T, k Kernel) {
	a, b, c := make([]float32, 12*8), make([]float32, 8*32), make([]float32, 12*32)
	for _, tc := range []struct {
		name    string
		a, b, c []float32
	}{{"a", a[:len(a)-1], b, c}, {"b", a, b[:len(b)-1], c}, {"c", a, b, c[:len(c)-1]}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("short %s accepted", tc.name)
				}
			}()
			k.Gemm(false, false, 12, 32, 8, tc.a, 8, tc.b, 32, 0, tc.c, 32)
		}()
	}
}

// gemmShape is one matrix product of a training step.
type gemmShape struct {
	name    string
	ta, tb  bool
	m, n, k int
}

// stepShapes are the matrix products of one layer's training step with
// BT = B·T rows and embedding C: forward (out = in·Wᵀ), backward to the
// input (din += dout·W) and to the weights (dW += doutᵀ·in), for the
// qkv, attention projection, fc and fc projection layers.
func stepShapes(BT, C int) []gemmShape {
	var out []gemmShape
	for _, l := range []struct {
		name  string
		in, o int
	}{{"qkv", C, 3 * C}, {"proj", C, C}, {"fc", C, 4 * C}, {"fcproj", 4 * C, C}} {
		out = append(out,
			gemmShape{"fwd_" + l.name, false, true, BT, l.o, l.in},
			gemmShape{"dinp_" + l.name, false, false, BT, l.in, l.o},
			gemmShape{"dW_" + l.name, true, false, l.o, l.in, BT})
	}
	return out
}

// BenchmarkGemm measures the kernels on the matmul shapes of the C1 model
// (L=2, E=64, N=256, batch 32: B·T = 8192 rows) and the C2 model (L=4,
// E=128, N=512, batch 16: 8192 rows), and on the per-(batch, head)
// attention products (T×T×16 scores, T×16×T weighted values, serial).
// GFLOP/s = 2mnk/time; GFLOP/cpu-s divides by the CPU time the process
// used instead (summed over cores: per-core efficiency, insensitive to
// other jobs sharing the machine).
func BenchmarkGemm(b *testing.B) {
	type kcase struct {
		name string
		k    Kernel
	}
	kerns := []kcase{{"blocked", &Blocked{}}}
	serial := []kcase{{"blocked1", &Blocked{Workers: 1}}}
	for _, s := range simdSets() {
		kerns = append(kerns, kcase{s.name, s.gemm(0)})
		serial = append(serial, kcase{s.name + "1", s.gemm(1)})
	}
	r := rand.New(rand.NewPCG(5, 6))
	run := func(b *testing.B, cs gemmShape, kern Kernel) {
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
		t0 := cpuTime()
		for i := 0; i < b.N; i++ {
			kern.Gemm(cs.ta, cs.tb, cs.m, cs.n, cs.k, a, lda, bb, ldb, 0, c, cs.n)
		}
		flop := 2 * float64(cs.m) * float64(cs.n) * float64(cs.k) * float64(b.N)
		b.ReportMetric(flop/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		if cpu := cpuTime() - t0; cpu > 0 {
			b.ReportMetric(flop/cpu.Seconds()/1e9, "GFLOP/cpu-s")
		}
	}
	for _, cfg := range []struct {
		name  string
		BT, C int
	}{{"C1", 8192, 64}, {"C2", 8192, 128}} {
		for _, cs := range stepShapes(cfg.BT, cfg.C) {
			for _, kc := range kerns {
				b.Run(fmt.Sprintf("%s/%s/%s", cfg.name, cs.name, kc.name), func(b *testing.B) { run(b, cs, kc.k) })
			}
		}
	}
	for _, T := range []int{256, 512} {
		for _, cs := range []gemmShape{{"att_qk", false, true, T, T, 16}, {"att_v", false, false, T, 16, T}} {
			for _, kc := range serial {
				b.Run(fmt.Sprintf("T%d/%s/%s", T, cs.name, kc.name), func(b *testing.B) { run(b, cs, kc.k) })
			}
		}
	}
}
