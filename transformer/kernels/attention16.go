package kernels

import "fmt"

// Fused causal attention for one head of size 16 (the engine's usual head:
// E/H = 64/4, 128/8). Instead of products of the GEMM on T×16 panels, each
// block of 16 queries is done in registers: Qᵀ of the block in 16 vectors
// (lane i = query r0+i), each key's 16 scores by FMAs with the key's
// elements broadcast, the per-lane softmax over keys 0..r0+i, and the
// weighted sum of values into 16 row accumulators.
//
// Forward (per query i, scores s_ij = q_i·k_j, scale = 1/√16):
//
//	m_i = max_{j≤i} s_ij,  p_ij = exp(scale·(s_ij − m_i)),  l_i = Σ_{j≤i} p_ij,
//	o_i = (Σ_{j≤i} p_ij·v_j) · (1/l_i),  lse_i = scale·m_i + ln l_i.
//
// Backward (P_ij = exp(scale·s_ij − lse_i), dP_ij = dO_i·v_j):
//
//	dS_ij = scale·P_ij·(dP_ij − Σ_{j'≤i} P_ij'·dP_ij'),
//	dv_j = Σ_i P_ij·dO_i,  dk_j = Σ_i dS_ij·q_i,  dq_i = Σ_j dS_ij·k_j.
//
// Each exponential is evaluated as 2^x with x = log₂e·(its argument):
// x = n + r, n = round(x), 2^r by a degree-6 polynomial (≈ 1.3 ulp,
// TestAttn16Exp2Poly), 2^n by VSCALEFPS; the causal and past-the-block
// lanes are zeroed by that last instruction.
//
// Summation orders (attngen.go): the 16-term products (q_i·k_j, dO_i·v_j)
// and the 16-query sums of dv_j and dk_j within a block are two chains,
// even and odd terms, added at the end; l_i, the Σ P·dP of dS and dq_i are
// summed per block of 16 keys and the block sums added in key order (one
// running float32 sum over T = 1536 keys lost ≈ 3e-5 relative in dq);
// Σ_j p_ij·v_j runs over the keys in order, as the GEMM did; dv_j and dk_j
// add the query blocks' sums in order. Masked entries (j > i, and lanes
// past the last query) add exact zeros, and blocks start at multiples of
// 16, so a query's results do not depend on T, on the block it falls in,
// or on the number of goroutines (TestAttentionHead16Prefix). Only the
// avx512 set has these kernels (attention16_avx512_amd64.s, written by
// attngen.go); the others leave attention to their GEMM.

// attn16Args is the argument block of the assembly kernels; its field
// offsets are fixed (attngen.go, TestAttn16ArgsLayout). Strides are in
// bytes.
type attn16Args struct {
	qt    *float32 // Qᵀ at query r0: element (d, i) at qt + d·ldt + 4i
	ldt   int      // stride of qt and dot
	k, v  *float32 // key and value rows 0.., ld apart
	ld    int      // row stride of q, k, v, dq, dk, dv
	n     int      // keys 0..n−1 (n = min(T, r0+16))
	r0    int      // the block's first query
	nq    int      // the block's queries, 1..16
	p     *float32 // scratch of n×16: the weights, key j's 16 lanes at p + 64j
	ds    *float32 // scratch of n×16 (backward): dP, then dS
	out   *float32 // forward: output row r0 (ldo apart); backward: dq row r0
	ldo   int      // forward: output row stride; backward: dO row stride
	ml    *float32 // 48 floats: [0,16) max (forward, out) or lse (backward, in), [16,32) Σ_j p_ij, [32,48) its inverse
	dot   *float32 // backward: dOᵀ at query r0, ldt apart
	q, do *float32 // backward: q and dO rows r0.. (ld and ldo apart)
	dk    *float32 // backward: dk row 0 (ld apart)
	dv    *float32 // backward: dv row 0 (ld apart)
	scale float32
	acc   *float32 // backward: 16×16 scratch for dq's block sums
}

// HasAttention16 reports whether the set has the fused attention kernels
// of head size 16 (AttentionHead16Forward and …Backward); only avx512 has.
func (ks *Set) HasAttention16() bool { return ks.vec.attn16 }

// Attention16Scratch is the length of the scratch the fused kernels need
// for T positions (floats): Qᵀ and dOᵀ padded to a multiple of 16
// positions, the weights and their gradients, 16×16 block sums and 48
// floats more.
func Attention16Scratch(T int) int {
	tp := (T + 15) &^ 15
	return 4*16*tp + 256 + 48
}

// attn16Layout returns the parts of scratch: xt (16×tp), p, ds (tp×16
// each), acc (256 floats) and ml (48 floats).
func attn16Layout(scratch []float32, T int) (xt, p, ds, acc, ml []float32, tp int) {
	tp = (T + 15) &^ 15
	if len(scratch) < Attention16Scratch(T) {
		panic(fmt.Sprintf("kernels: attention scratch of %d floats for T=%d (want %d)", len(scratch), T, Attention16Scratch(T)))
	}
	n := 16 * tp
	return scratch[:2*n], scratch[2*n : 3*n], scratch[3*n : 4*n], scratch[4*n : 4*n+256], scratch[4*n+256 : 4*n+304], tp
}

// head16 is a view of T rows of 16 floats, ld apart, named for errors.
type head16 struct {
	name string
	x    []float32
	ld   int
}

// checkAttention16 panics unless the set has the fused kernels and every
// view holds T rows of 16 floats at its stride.
func (ks *Set) checkAttention16(T int, views ...head16) {
	if !ks.vec.attn16 {
		panic("kernels: kernel set " + ks.name + " has no fused attention")
	}
	for _, h := range views {
		if h.ld < 16 || len(h.x) < (T-1)*h.ld+16 {
			panic(fmt.Sprintf("kernels: attention %s of %d floats for T=%d rows %d apart", h.name, len(h.x), T, h.ld))
		}
	}
}

// transpose16 writes xt (16 rows of tp) = the T rows of x (16 columns, ld
// apart) transposed, with zeros in the columns T..tp−1.
func (ks *Set) transpose16(xt, x []float32, ld, T, tp int) {
	ks.Transpose(xt, tp, x, ld, T, 16)
	for d := 0; d < 16; d++ {
		clear(xt[d*tp+T : (d+1)*tp])
	}
}

// AttentionHead16Forward computes causal attention for one head of size
// 16 (see the package comment above): the T rows of q, k and v (16 floats,
// ld apart) give out's T rows (ldo apart) and, when lse is non-nil, the
// log-sum-exp of each query's scaled scores (lse[i], nats), with which
// AttentionHead16Backward recomputes the weights. scratch holds
// Attention16Scratch(T) floats. The set must have the kernels
// (HasAttention16).
func (ks *Set) AttentionHead16Forward(out []float32, ldo int, lse, q, k, v []float32, ld, T int, scale float32, scratch []float32) {
	if T <= 0 {
		return
	}
	ks.checkAttention16(T, head16{"q", q, ld}, head16{"k", k, ld}, head16{"v", v, ld}, head16{"out", out, ldo})
	if lse != nil && len(lse) < T {
		panic(fmt.Sprintf("kernels: attention lse of %d floats for T=%d", len(lse), T))
	}
	xt, p, _, _, ml, tp := attn16Layout(scratch, T)
	qt := xt[:16*tp]
	ks.transpose16(qt, q, ld, T, tp)
	a := attn16Args{ldt: 4 * tp, k: &k[0], v: &v[0], ld: 4 * ld, p: &p[0], ldo: 4 * ldo, ml: &ml[0], scale: scale}
	for r0 := 0; r0 < T; r0 += 16 {
		a.qt, a.r0, a.n, a.out = &qt[r0], r0, min(T, r0+16), &out[r0*ldo]
		a.nq = a.n - r0
		attn16Forward(&a)
		if lse != nil {
			for i := 0; i < a.nq; i++ {
				lse[r0+i] = scale*ml[i] + lnPos(ml[16+i])
			}
		}
	}
}

// AttentionHead16Backward sets dq, dk and dv (T rows of 16, ld apart) to
// the gradients of AttentionHead16Forward's output from dout (T rows, ldo
// apart), with the forward's q, k, v and lse; what they held is not read. scratch holds
// Attention16Scratch(T) floats. The set must have the kernels.
func (ks *Set) AttentionHead16Backward(dq, dk, dv, dout []float32, ldo int, q, k, v []float32, ld int, lse []float32, T int, scale float32, scratch []float32) {
	if T <= 0 {
		return
	}
	ks.checkAttention16(T, head16{"q", q, ld}, head16{"k", k, ld}, head16{"v", v, ld},
		head16{"dq", dq, ld}, head16{"dk", dk, ld}, head16{"dv", dv, ld}, head16{"dout", dout, ldo})
	if len(lse) < T {
		panic(fmt.Sprintf("kernels: attention lse of %d floats for T=%d", len(lse), T))
	}
	xt, p, ds, acc, ml, tp := attn16Layout(scratch, T)
	qt, dot := xt[:16*tp], xt[16*tp:]
	ks.transpose16(qt, q, ld, T, tp)
	ks.transpose16(dot, dout, ldo, T, tp)
	a := attn16Args{ldt: 4 * tp, k: &k[0], v: &v[0], ld: 4 * ld, p: &p[0], ds: &ds[0], ldo: 4 * ldo, ml: &ml[0],
		dk: &dk[0], dv: &dv[0], scale: scale, acc: &acc[0]}
	for r0 := 0; r0 < T; r0 += 16 {
		a.r0, a.n = r0, min(T, r0+16)
		a.nq = a.n - r0
		a.qt, a.dot, a.q, a.do, a.out = &qt[r0], &dot[r0], &q[r0*ld], &dout[r0*ldo], &dq[r0*ld]
		copy(ml[:a.nq], lse[r0:a.n])
		clear(ml[a.nq:16])
		attn16Backward(&a)
	}
}
