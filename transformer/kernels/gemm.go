// Package kernels holds the dense linear-algebra kernels of the transformer
// engine behind a tiny interface, so that a faster (SIMD, assembly)
// implementation can replace the portable one without touching the model.
//
// All matrices are row-major float32 slices with an explicit leading
// dimension (the distance, in elements, between the starts of two rows).
package kernels

import (
	"fmt"
	"runtime"
	"sync"
)

// Kernel computes C ← β·C + op(A)·op(B), where op(A) is m×k, op(B) is k×n
// and C is m×n. op(X) is X, or Xᵀ when the matching trans flag is set: with
// transA, element (i, p) of op(A) is a[p·lda+i], otherwise a[i·lda+p];
// with transB, element (p, j) of op(B) is b[j·ldb+p], otherwise b[p·ldb+j].
// β must be 0 (overwrite C; its old contents may be NaN) or 1 (accumulate).
//
// Implementations must be safe for concurrent use, must not retain the
// slices, and must give results that do not depend on the number of
// goroutines used (each element of C is summed over p in a fixed order), so
// training is deterministic on any machine with the same kernel.
type Kernel interface {
	Gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// Serial returns a kernel computing the same results as k on the calling
// goroutine only (for callers that already run in parallel): k itself
// when it has no single-goroutine form.
func Serial(k Kernel) Kernel {
	if s, ok := k.(interface{ Serial() Kernel }); ok {
		return s.Serial()
	}
	return k
}

// Blocked is the portable pure-Go kernel: GotoBLAS-style blocking (panels
// of op(B) of KC×NC and of op(A) of MC×KC are packed into contiguous,
// zero-padded buffers, which also absorbs the transpositions) around a 4×4
// register-blocked micro-kernel. Large products are split by rows (or
// columns) of C into one contiguous chunk per worker.
type Blocked struct {
	// Workers is the number of goroutines; ≤ 0 means GOMAXPROCS.
	Workers int
}

// Block sizes (elements) of the portable kernel. KC·NR floats of a B
// panel stay in L1 while a MC×KC block of A streams from L2.
const (
	mr = 4
	nr = 4
	kc = 256
	mc = 128
	nc = 2048
)

// minWork is the smallest m·n·k for which a product is split over
// goroutines.
const minWork = 1 << 17

// A tiling is the GotoBLAS-style blocked driver of a register-tile
// micro-kernel: op(B) is packed in blocks of kc×nc into panels of nr
// columns, op(A) in blocks of mc×kc into panels of mr rows (zero-padded,
// which also absorbs the transpositions), and micro computes one mr×nr
// tile of C from a pair of panels. The portable kernel (Blocked) and the
// NEON kernel differ only in their tiling. Each element of C is summed
// over p in blocks of kc, in order, whatever the number of goroutines.
type tiling struct {
	mr, nr, kc, mc, nc int // nc and mc are multiples of nr and mr; mr·nr ≤ maxTile
	// micro computes the full mr×nr tile c (+)= Ap·Bp (acc: add to c)
	// from panels of kb steps (mr values of A, nr of B per step); c has
	// row stride ldc.
	micro func(kb int, ap, bp []float32, c []float32, ldc int, acc bool)
	pool  sync.Pool // *[]float32 of mc·kc + kc·nc packing space
}

// maxTile bounds mr·nr (the size of the edge-tile buffer).
const maxTile = 128

// portableTiling is Blocked's: 4×4 tiles of the Go micro-kernel.
var portableTiling = &tiling{mr: mr, nr: nr, kc: kc, mc: mc, nc: nc, micro: micro4x4}

// Serial returns a single-goroutine Blocked kernel.
func (g *Blocked) Serial() Kernel { return serialBlocked }

var serialBlocked = &Blocked{Workers: 1}

// Gemm implements Kernel.
func (g *Blocked) Gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	portableTiling.gemm(g.Workers, transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc)
}

// gemm computes the product of Kernel.Gemm on up to workers goroutines
// (≤ 0: GOMAXPROCS): large products are split by rows (or columns) of C
// into one contiguous chunk per worker.
func (t *tiling) gemm(workers int, transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if beta == 0 {
			for i := 0; i < m; i++ {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	w := workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if w <= 1 || m*n*k < minWork {
		t.serial(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc)
		return
	}
	var wg sync.WaitGroup
	if m >= n {
		chunks := splitChunks(m, t.mr, w)
		for i := 0; i+1 < len(chunks); i++ {
			i0, i1 := chunks[i], chunks[i+1]
			var as []float32
			if transA {
				as = a[i0:]
			} else {
				as = a[i0*lda:]
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.serial(transA, transB, i1-i0, n, k, as, lda, b, ldb, beta, c[i0*ldc:], ldc)
			}()
		}
	} else {
		chunks := splitChunks(n, t.nr, w)
		for i := 0; i+1 < len(chunks); i++ {
			j0, j1 := chunks[i], chunks[i+1]
			var bs []float32
			if transB {
				bs = b[j0*ldb:]
			} else {
				bs = b[j0:]
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.serial(transA, transB, m, j1-j0, k, a, lda, bs, ldb, beta, c[j0:], ldc)
			}()
		}
	}
	wg.Wait()
}

// splitChunks splits 0..n into at most w contiguous chunks whose
// boundaries are multiples of q; it returns the w'+1 boundaries.
func splitChunks(n, q, w int) []int {
	units := (n + q - 1) / q
	if w > units {
		w = units
	}
	out := make([]int, 0, w+1)
	for t := 0; t <= w; t++ {
		e := (units * t / w) * q
		if e > n {
			e = n
		}
		out = append(out, e)
	}
	return out
}

// serial is the single-goroutine blocked product.
func (t *tiling) serial(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr, kc, mc, nc := t.mr, t.nr, t.kc, t.mc, t.nc
	bufp, _ := t.pool.Get().(*[]float32)
	if bufp == nil {
		buf := make([]float32, mc*kc+kc*nc)
		bufp = &buf
	}
	buf := *bufp
	ap, bp := buf[:mc*kc], buf[mc*kc:]
	var tile [maxTile]float32
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += kc {
			kb := min(kc, k-pc)
			packB(transB, b, ldb, pc, jc, kb, nb, nr, bp)
			acc := beta != 0 || pc > 0
			for ic := 0; ic < m; ic += mc {
				mb := min(mc, m-ic)
				packA(transA, a, lda, ic, pc, mb, kb, mr, ap)
				for jr := 0; jr < nb; jr += nr {
					bpan := bp[jr*kb : jr*kb+nr*kb]
					nv := min(nr, nb-jr)
					for ir := 0; ir < mb; ir += mr {
						apan := ap[ir*kb : ir*kb+mr*kb]
						mv := min(mr, mb-ir)
						ci := (ic+ir)*ldc + jc + jr
						if mv == mr && nv == nr {
							t.micro(kb, apan, bpan, c[ci:], ldc, acc)
							continue
						}
						clear(tile[:mr*nr])
						t.micro(kb, apan, bpan, tile[:mr*nr], nr, false)
						for i := 0; i < mv; i++ {
							row := c[ci+i*ldc : ci+i*ldc+nv]
							if acc {
								for j := range row {
									row[j] += tile[i*nr+j]
								}
							} else {
								copy(row, tile[i*nr:i*nr+nv])
							}
						}
					}
				}
			}
		}
	}
	t.pool.Put(bufp)
}

// packA copies the mb×kb block of op(A) at (i0, p0) into ap as panels of
// mr rows: panel r holds, for p = 0..kb−1, the mr values op(A)[i0+r·mr+i, p0+p]
// (zero past row mb).
func packA(trans bool, a []float32, lda, i0, p0, mb, kb, mr int, ap []float32) {
	for ir := 0; ir < mb; ir += mr {
		pan := ap[ir*kb : ir*kb+mr*kb]
		mv := min(mr, mb-ir)
		if mv < mr {
			clear(pan)
		}
		if trans {
			for p := 0; p < kb; p++ {
				src := a[(p0+p)*lda+i0+ir:]
				src = src[:mv]
				dst := pan[p*mr : p*mr+mv]
				copy(dst, src)
			}
		} else {
			for i := 0; i < mv; i++ {
				src := a[(i0+ir+i)*lda+p0:]
				src = src[:kb]
				for p, v := range src {
					pan[p*mr+i] = v
				}
			}
		}
	}
}

// packB copies the kb×nb block of op(B) at (p0, j0) into bp as panels of nr
// columns: panel s holds, for p = 0..kb−1, the nr values op(B)[p0+p, j0+s·nr+j]
// (zero past column nb).
func packB(trans bool, b []float32, ldb, p0, j0, kb, nb, nr int, bp []float32) {
	for jr := 0; jr < nb; jr += nr {
		pan := bp[jr*kb : jr*kb+nr*kb]
		nv := min(nr, nb-jr)
		if nv < nr {
			clear(pan)
		}
		if trans {
			for j := 0; j < nv; j++ {
				src := b[(j0+jr+j)*ldb+p0:]
				src = src[:kb]
				for p, v := range src {
					pan[p*nr+j] = v
				}
			}
		} else {
			for p := 0; p < kb; p++ {
				src := b[(p0+p)*ldb+j0+jr:]
				src = src[:nv]
				copy(pan[p*nr:p*nr+nv], src)
			}
		}
	}
}

// micro4x4 computes the 4×4 tile C (+)= Ap·Bp from packed panels of kb
// steps (4 values of A and 4 of B per step).
func micro4x4(kb int, ap, bp []float32, c []float32, ldc int, acc bool) {
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	ap = ap[:4*kb]
	bp = bp[:4*kb]
	for len(ap) >= 4 && len(bp) >= 4 {
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		ap = ap[4:]
		bp = bp[4:]
	}
	r0 := c[0:4:4]
	r1 := c[ldc : ldc+4 : ldc+4]
	r2 := c[2*ldc : 2*ldc+4 : 2*ldc+4]
	r3 := c[3*ldc : 3*ldc+4 : 3*ldc+4]
	if acc {
		r0[0] += c00
		r0[1] += c01
		r0[2] += c02
		r0[3] += c03
		r1[0] += c10
		r1[1] += c11
		r1[2] += c12
		r1[3] += c13
		r2[0] += c20
		r2[1] += c21
		r2[2] += c22
		r2[3] += c23
		r3[0] += c30
		r3[1] += c31
		r3[2] += c32
		r3[3] += c33
		return
	}
	r0[0], r0[1], r0[2], r0[3] = c00, c01, c02, c03
	r1[0], r1[1], r1[2], r1[3] = c10, c11, c12, c13
	r2[0], r2[1], r2[2], r2[3] = c20, c21, c22, c23
	r3[0], r3[1], r3[2], r3[3] = c30, c31, c32, c33
}

// checkGemm panics if the operands of Kernel.Gemm are too short for the
// shape or the leading dimensions too small (for the kernels that do not
// bounds-check every access).
func checkGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	if lda < ca || ldb < cb || ldc < n || len(a) < (ra-1)*lda+ca || len(b) < (rb-1)*ldb+cb || len(c) < (m-1)*ldc+n {
		panic(fmt.Sprintf("kernels: Gemm(%v, %v, m=%d, n=%d, k=%d) with lda=%d ldb=%d ldc=%d and len a, b, c = %d, %d, %d",
			transA, transB, m, n, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
}

// Naive is the reference kernel: three plain loops, float32 accumulation in
// the same p order as Blocked. It is slow; use it in tests.
type Naive struct{}

// Gemm implements Kernel.
func (Naive) Gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
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
				s += x * y
			}
			if beta != 0 {
				s += c[i*ldc+j]
			}
			c[i*ldc+j] = s
		}
	}
}
