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

// BiasKernel is a Kernel that also computes C ← op(A)·op(B) + bias, the
// bias (n values) added to every row of C after the product, with the
// same result as Gemm with β = 0 followed by that addition, but each tile
// of C gets its bias while it is in cache (the SIMD kernels).
type BiasKernel interface {
	Kernel
	GemmBias(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, bias []float32)
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
	pool  sync.Pool // *tileScratch, one per goroutine in a product
}

// tileScratch is one goroutine's space in a tiled product: the packed
// panels and the edge tile, pooled so that a product allocates nothing in
// steady state (an edge tile on the stack would escape to the heap on
// every call, passed as it is to the micro-kernel through a func value).
type tileScratch struct {
	pack []float32 // mc·kc of op(A), then kc·nc of op(B)
	tile [maxTile]float32
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
	j := tileJobs.Get().(*tileJob)
	j.t = t
	j.transA, j.transB, j.m, j.n, j.k = transA, transB, m, n, k
	j.a, j.b, j.c, j.lda, j.ldb, j.ldc, j.beta = a, b, c, lda, ldb, ldc, beta
	// one contiguous chunk of rows (or columns) of C per worker, its
	// boundaries multiples of mr (nr), so that every tile of C is the
	// one a serial product computes
	j.byRows = m >= n
	j.total, j.q = n, t.nr
	if j.byRows {
		j.total, j.q = m, t.mr
	}
	j.units = (j.total + j.q - 1) / j.q
	j.parts = min(w, j.units, maxParts)
	j.run(j.parts, w-1)
	j.a, j.b, j.c, j.t = nil, nil, nil, nil
	tileJobs.Put(j)
}

// tileJob is one parallel call of a tiling's GEMM, pooled (a call
// allocates nothing in steady state): part i is the serial product of
// the i-th of parts contiguous chunks of the rows (byRows) or columns of
// C, run on the package's goroutine pool.
type tileJob struct {
	fanout
	t              *tiling
	transA, transB bool
	m, n, k        int
	a, b, c        []float32
	lda, ldb, ldc  int
	beta           float32
	byRows         bool
	total, q       int // rows (columns) of C and the chunk quantum, mr (nr)
	units, parts   int // quanta and chunks
}

var tileJobs = sync.Pool{New: func() any {
	j := &tileJob{}
	j.work = j
	return j
}}

// bound is the start of chunk i (i = parts: the end), a multiple of q.
func (j *tileJob) bound(i int) int { return min(j.units*i/j.parts*j.q, j.total) }

// runPart implements partRunner.
func (j *tileJob) runPart(i int) {
	e0, e1 := j.bound(i), j.bound(i+1)
	if e0 >= e1 {
		return
	}
	if j.byRows {
		var as []float32
		if j.transA {
			as = j.a[e0:]
		} else {
			as = j.a[e0*j.lda:]
		}
		j.t.serial(j.transA, j.transB, e1-e0, j.n, j.k, as, j.lda, j.b, j.ldb, j.beta, j.c[e0*j.ldc:], j.ldc)
		return
	}
	var bs []float32
	if j.transB {
		bs = j.b[e0*j.ldb:]
	} else {
		bs = j.b[e0:]
	}
	j.t.serial(j.transA, j.transB, j.m, e1-e0, j.k, j.a, j.lda, bs, j.ldb, j.beta, j.c[e0:], j.ldc)
}

// serial is the single-goroutine blocked product.
func (t *tiling) serial(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr, kc, mc, nc := t.mr, t.nr, t.kc, t.mc, t.nc
	sc, _ := t.pool.Get().(*tileScratch)
	if sc == nil {
		sc = &tileScratch{pack: make([]float32, mc*kc+kc*nc)}
	}
	ap, bp := sc.pack[:mc*kc], sc.pack[mc*kc:]
	tile := &sc.tile
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
	t.pool.Put(sc)
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
