package cuda

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer/backend"
)

// The ops of backend.Backend as kernel launches (kernels.cu). Shapes
// decide every grid and chunking, never the device or the load, so
// results repeat bit for bit.

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// need panics, as the CPU backend's slicing does, unless t is present and
// holds at least n elements: a kernel given a short view would write past
// it into a neighbouring tensor of the same buffer.
func need(op string, t backend.Tensor, n int, what string) {
	if t.Buf == nil {
		panic(fmt.Sprintf("cuda: %s: %s is absent", op, what))
	}
	opt(op, t, n, what)
}

// opt is need for an optional operand (absent is allowed).
func opt(op string, t backend.Tensor, n int, what string) {
	if t.Buf != nil && t.Len < n {
		panic(fmt.Sprintf("cuda: %s: %s has %d elements, the shapes need %d", op, what, t.Len, n))
	}
}

// heads panics unless NH ≥ 1 divides C.
func heads(op string, C, NH int) {
	if NH < 1 || C%NH != 0 {
		panic(fmt.Sprintf("cuda: %s: %d heads do not divide C = %d", op, NH, C))
	}
}

// chunking splits rows into chunks for a column sum over n columns: about
// 64k threads in all, at most 4096 chunks.
func chunking(rows, n int) (nchunks, chunk int) {
	nchunks = max(1, min(ceilDiv(1<<16, max(n, 1)), 4096, rows))
	chunk = ceilDiv(rows, nchunks)
	return ceilDiv(rows, chunk), chunk
}

// colsum: dst[i] += Σ_r x[r·ld + i] for i < n, r < rows.
func (be *Backend) colsum(dst, x uint64, rows, n, ld int) {
	if rows == 0 || n == 0 {
		return
	}
	nch, chunk := chunking(rows, n)
	part := be.workspace(4 * uint64(nch) * uint64(n))
	be.launch("k_colsum_partial", [3]uint32{uint32(ceilDiv(n, 128)), uint32(nch), 1}, [3]uint32{128, 1, 1},
		ptr(part), ptr(x), i32(rows), i32(n), i32(ld), i32(chunk))
	be.launch("k_colsum_final", grid1(n, 128), [3]uint32{128, 1, 1}, ptr(dst), ptr(part), i32(nch), i32(n), i32(n))
}

// gemm: C[m,n] = beta·C[m,n] + Σ_k A(m,k)·B(k,n) with A(m,k) = A[m·sam +
// k·sak], B(k,n) = B[k·sbk + n·sbn], C[m,n] at C[m·ldc + n]. Few output
// tiles and a long K (the weight gradient, K = rows) split K into chunks
// whose products are added in order.
func (be *Backend) gemm(A, B, C uint64, M, N, K int, sam, sak, sbk, sbn, ldc int, beta float32) {
	if M == 0 || N == 0 {
		return
	}
	name, tile, S := gemmPlan(M, N, K)
	kchunk := ceilDiv(ceilDiv(max(K, 1), S), 16) * 16
	S = max(1, ceilDiv(K, kchunk))
	grid := [3]uint32{uint32(ceilDiv(M, tile)), uint32(ceilDiv(N, tile)), uint32(S)}
	if S == 1 {
		be.launch(name, grid, block256, ptr(A), ptr(B), ptr(C), ptr(0), i32(M), i32(N), i32(K),
			i64(sam), i64(sak), i64(sbk), i64(sbn), i64(ldc), beta, i32(kchunk))
		return
	}
	part := be.workspace(4 * uint64(S) * uint64(M) * uint64(N))
	be.launch(name, grid, block256, ptr(A), ptr(B), ptr(C), ptr(part), i32(M), i32(N), i32(K),
		i64(sam), i64(sak), i64(sbk), i64(sbn), i64(ldc), beta, i32(kchunk))
	be.launch("k_splitk_reduce", grid1(M*N, 256), block256, ptr(C), ptr(part), i32(S), i32(M), i32(N), i64(ldc), beta)
}

// gemmTile forces the GEMM's tile (64 or 128) when not 0 (tests and
// benchmarks).
var gemmTile = 0

// gemmPlan chooses the kernel, its tile and the number of K splits from
// the shape alone: 128×128 tiles when there are enough of them to fill the
// GPU (or when K is long enough to split among them), else 64×64; K is
// split when the tiles are too few (the weight gradient, K = rows).
func gemmPlan(M, N, K int) (name string, tile, S int) {
	t128 := ceilDiv(M, 128) * ceilDiv(N, 128)
	switch {
	case gemmTile == 128 || gemmTile == 0 && (t128 >= 264 || M >= 128 && N >= 128 && K >= 4096):
		name, tile = "k_gemm128", 128
		if t128 < 264 && K >= 1024 {
			S = min(ceilDiv(528, t128), K/512)
		}
	default:
		name, tile = "k_gemm", 64
		if t := ceilDiv(M, 64) * ceilDiv(N, 64); t < 256 && K >= 512 {
			S = min(ceilDiv(512, t), K/256)
		}
	}
	return name, tile, max(S, 1)
}

// EncoderForward: out[b,t,:] = wte[tok[b,t],:] + pos[t,:].
func (be *Backend) EncoderForward(out backend.Tensor, tok backend.Tokens, wte, pos backend.Tensor, B, T, C int) {
	be.enter()
	defer be.exit()
	need("EncoderForward", out, B*T*C, "out")
	need("EncoderForward", wte, C, "wte")
	need("EncoderForward", pos, T*C, "pos")
	po, pt, pw, pp := be.dev(out), be.devTok(tok, B*T), be.dev(wte), be.dev(pos)
	be.launch("k_encoder_fwd", grid1(B*T*C, 256), block256, ptr(po), ptr(pt), ptr(pw), ptr(pp), i32(B), i32(T), i32(C))
}

// EncoderBackward accumulates dwte and (unless absent) dpos.
func (be *Backend) EncoderBackward(dwte, dpos, dout backend.Tensor, tok backend.Tokens, B, T, C int) {
	be.enter()
	defer be.exit()
	need("EncoderBackward", dwte, C, "dwte")
	opt("EncoderBackward", dpos, T*C, "dpos")
	need("EncoderBackward", dout, B*T*C, "dout")
	pw, pp, pd, pt := be.dev(dwte), be.dev(dpos), be.dev(dout), be.devTok(tok, B*T)
	if pp != 0 {
		be.launch("k_encoder_bwd_pos", grid1(T*C, 256), block256, ptr(pp), ptr(pd), i32(B), i32(T), i32(C))
	}
	rows := B * T
	if rows == 0 || C == 0 {
		return
	}
	A := dwte.Len / C
	nch, chunk := chunking(rows, A*C)
	part := be.workspace(4 * uint64(nch) * uint64(A*C))
	be.launch("k_encoder_bwd_wte_partial", [3]uint32{uint32(ceilDiv(C, 128)), uint32(nch), uint32(A)}, [3]uint32{128, 1, 1},
		ptr(part), ptr(pd), ptr(pt), i32(rows), i32(C), i32(A), i32(chunk))
	be.launch("k_colsum_final", grid1(A*C, 128), [3]uint32{128, 1, 1}, ptr(pw), ptr(part), i32(nch), i32(A*C), i32(A*C))
}

// LayerNormForward normalises each row (one warp per row).
func (be *Backend) LayerNormForward(out, mean, rstd, inp, w, b backend.Tensor, rows, C int) {
	be.enter()
	defer be.exit()
	need("LayerNormForward", out, rows*C, "out")
	opt("LayerNormForward", mean, rows, "mean")
	opt("LayerNormForward", rstd, rows, "rstd")
	need("LayerNormForward", inp, rows*C, "inp")
	need("LayerNormForward", w, C, "w")
	need("LayerNormForward", b, C, "b")
	po, pm, pr, pi, pw, pb := be.dev(out), be.dev(mean), be.dev(rstd), be.dev(inp), be.dev(w), be.dev(b)
	be.launch("k_layernorm_fwd", grid1(rows, 8), block256, ptr(po), ptr(pm), ptr(pr), ptr(pi), ptr(pw), ptr(pb), i32(rows), i32(C))
}

// LayerNormBackward accumulates dinp, dw, db.
func (be *Backend) LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd backend.Tensor, rows, C int) {
	be.enter()
	defer be.exit()
	opt("LayerNormBackward", dinp, rows*C, "dinp")
	opt("LayerNormBackward", dw, C, "dw")
	opt("LayerNormBackward", db, C, "db")
	need("LayerNormBackward", dout, rows*C, "dout")
	need("LayerNormBackward", inp, rows*C, "inp")
	need("LayerNormBackward", w, C, "w")
	need("LayerNormBackward", mean, rows, "mean")
	need("LayerNormBackward", rstd, rows, "rstd")
	pdi, pdw, pdb, pdo := be.dev(dinp), be.dev(dw), be.dev(db), be.dev(dout)
	pi, pw, pm, pr := be.dev(inp), be.dev(w), be.dev(mean), be.dev(rstd)
	if pdi != 0 {
		be.launch("k_layernorm_bwd_dinp", grid1(rows, 8), block256, ptr(pdi), ptr(pdo), ptr(pi), ptr(pw), ptr(pm), ptr(pr), i32(rows), i32(C))
	}
	if rows == 0 || C == 0 || (pdw == 0 && pdb == 0) {
		return
	}
	nch, chunk := chunking(rows, C)
	part := be.workspace(4 * uint64(nch) * uint64(2*C))
	be.launch("k_layernorm_bwd_partial", [3]uint32{uint32(ceilDiv(C, 128)), uint32(nch), 1}, [3]uint32{128, 1, 1},
		ptr(part), ptr(pdo), ptr(pi), ptr(pm), ptr(pr), i32(rows), i32(C), i32(chunk))
	if pdw != 0 {
		be.launch("k_colsum_final", grid1(C, 128), [3]uint32{128, 1, 1}, ptr(pdw), ptr(part), i32(nch), i32(C), i32(2*C))
	}
	if pdb != 0 {
		be.launch("k_colsum_final", grid1(C, 128), [3]uint32{128, 1, 1}, ptr(pdb), ptr(part+4*uint64(C)), i32(nch), i32(C), i32(2*C))
	}
}

// MatmulForward: out = inp·wᵀ + bias.
func (be *Backend) MatmulForward(out, inp, w, bias backend.Tensor, rows, C, OC int) {
	be.enter()
	defer be.exit()
	need("MatmulForward", out, rows*OC, "out")
	need("MatmulForward", inp, rows*C, "inp")
	need("MatmulForward", w, OC*C, "w")
	opt("MatmulForward", bias, OC, "bias")
	po, pi, pw, pb := be.dev(out), be.dev(inp), be.dev(w), be.dev(bias)
	be.gemm(pi, pw, po, rows, OC, C, C, 1, 1, C, OC, 0)
	if pb != 0 {
		be.launch("k_add_bias", grid1(rows*OC, 256), block256, ptr(po), ptr(pb), i32(rows), i32(OC))
	}
}

// MatmulBackward: dinp (+)= dout·w, dw += doutᵀ·inp, dbias += Σ_rows dout.
func (be *Backend) MatmulBackward(dinp, dw, dbias, dout, inp, w backend.Tensor, rows, C, OC int, setDinp bool) {
	be.enter()
	defer be.exit()
	opt("MatmulBackward", dinp, rows*C, "dinp")
	need("MatmulBackward", dw, OC*C, "dw")
	opt("MatmulBackward", dbias, OC, "dbias")
	need("MatmulBackward", dout, rows*OC, "dout")
	need("MatmulBackward", inp, rows*C, "inp")
	need("MatmulBackward", w, OC*C, "w")
	pdi, pdw, pdb, pdo, pi, pw := be.dev(dinp), be.dev(dw), be.dev(dbias), be.dev(dout), be.dev(inp), be.dev(w)
	if pdi != 0 {
		beta := float32(1)
		if setDinp {
			beta = 0
		}
		be.gemm(pdo, pw, pdi, rows, C, OC, OC, 1, C, 1, C, beta)
	}
	be.gemm(pdo, pi, pdw, OC, C, rows, 1, OC, C, 1, C, 1)
	if pdb != 0 {
		be.colsum(pdb, pdo, rows, OC, OC)
	}
}

// MaxHeadSize is the largest attention head size the kernels run (128).
func (be *Backend) MaxHeadSize() int { return 128 }

// attnInstance is the kernels' compiled head-size bound for hs.
func attnInstance(hs int) int {
	for _, m := range []int{8, 16, 32, 64, 128} {
		if hs <= m {
			return m
		}
	}
	panic(fmt.Sprintf("cuda: attention head size %d (embedding / heads) above the backend's 128", hs))
}

func attnScale(hs int) float32 { return float32(1 / math.Sqrt(float64(hs))) }

// AttentionForward: fused causal attention, keeping lse unless absent.
func (be *Backend) AttentionForward(out, lse, qkv backend.Tensor, B, T, C, NH int) {
	be.enter()
	defer be.exit()
	heads("AttentionForward", C, NH)
	need("AttentionForward", out, B*T*C, "out")
	opt("AttentionForward", lse, B*NH*T, "lse")
	need("AttentionForward", qkv, B*T*3*C, "qkv")
	po, pl, pq := be.dev(out), be.dev(lse), be.dev(qkv)
	hs := C / NH
	name := fmt.Sprintf("k_attn_fwd_%d", attnInstance(hs))
	be.launch(name, [3]uint32{uint32(B * NH), uint32(ceilDiv(T, 64)), 1}, [3]uint32{64, 1, 1},
		ptr(po), ptr(pl), ptr(pq), i32(T), i32(C), i32(NH), i32(hs), attnScale(hs))
}

// AttentionBackward sets dqkv: cleared, then a query pass (D_i and dq)
// and a key pass (dk, dv) that add to it.
func (be *Backend) AttentionBackward(dqkv, dout, qkv, lse backend.Tensor, B, T, C, NH int) {
	be.enter()
	defer be.exit()
	heads("AttentionBackward", C, NH)
	need("AttentionBackward", dqkv, B*T*3*C, "dqkv")
	need("AttentionBackward", dout, B*T*C, "dout")
	need("AttentionBackward", qkv, B*T*3*C, "qkv")
	need("AttentionBackward", lse, B*NH*T, "lse")
	pdq, pdo, pq, pl := be.dev(dqkv), be.dev(dout), be.dev(qkv), be.dev(lse)
	hs := C / NH
	m := attnInstance(hs)
	if B*NH*T == 0 {
		return
	}
	must(be.d.memset32(pdq, 0, uint64(B*T*3*C)))
	D := be.workspace(4 * uint64(B*NH*T))
	grid := [3]uint32{uint32(B * NH), uint32(ceilDiv(T, 64)), 1}
	be.launch(fmt.Sprintf("k_attn_bwd_q_%d", m), grid, [3]uint32{64, 1, 1},
		ptr(pdq), ptr(D), ptr(pdo), ptr(pq), ptr(pl), i32(T), i32(C), i32(NH), i32(hs), attnScale(hs))
	be.launch(fmt.Sprintf("k_attn_bwd_kv_%d", m), grid, [3]uint32{64, 1, 1},
		ptr(pdq), ptr(D), ptr(pdo), ptr(pq), ptr(pl), i32(T), i32(C), i32(NH), i32(hs), attnScale(hs))
}

// AttentionWeights writes the B·NH·T·T weights.
func (be *Backend) AttentionWeights(out, qkv backend.Tensor, B, T, C, NH int) {
	be.enter()
	defer be.exit()
	heads("AttentionWeights", C, NH)
	need("AttentionWeights", out, B*NH*T*T, "out")
	need("AttentionWeights", qkv, B*T*3*C, "qkv")
	po, pq := be.dev(out), be.dev(qkv)
	be.launch("k_attn_weights", grid1(B*NH*T, 128), [3]uint32{128, 1, 1}, ptr(po), ptr(pq), i32(B), i32(T), i32(C), i32(NH), attnScale(C/NH))
}

// ActivationForward: out = act(inp).
func (be *Backend) ActivationForward(act backend.Activation, out, inp backend.Tensor) {
	be.enter()
	defer be.exit()
	need("ActivationForward", out, inp.Len, "out")
	po, pi := be.dev(out), be.dev(inp)
	be.launch("k_act_fwd", grid1(inp.Len, 256), block256, i32(act), ptr(po), ptr(pi), i64(inp.Len))
}

// ActivationBackward: dinp = dout·act'(inp).
func (be *Backend) ActivationBackward(act backend.Activation, dinp, inp, dout backend.Tensor) {
	be.enter()
	defer be.exit()
	need("ActivationBackward", dinp, inp.Len, "dinp")
	need("ActivationBackward", dout, inp.Len, "dout")
	pd, pi, po := be.dev(dinp), be.dev(inp), be.dev(dout)
	be.launch("k_act_bwd", grid1(inp.Len, 256), block256, i32(act), ptr(pd), ptr(pi), ptr(po), i64(inp.Len))
}

// Add: out = a + b.
func (be *Backend) Add(out, a, b backend.Tensor) {
	be.enter()
	defer be.exit()
	need("Add", a, out.Len, "a")
	need("Add", b, out.Len, "b")
	po, pa, pb := be.dev(out), be.dev(a), be.dev(b)
	be.launch("k_add", grid1(out.Len, 256), block256, ptr(po), ptr(pa), ptr(pb), i64(out.Len))
}

// reductionBlocks is the number of partial sums of a reduction over n.
func reductionBlocks(n int) int { return max(1, min(1024, ceilDiv(n, 2048))) }

// CrossEntropyForward: probs, losses, and the sum of the losses.
func (be *Backend) CrossEntropyForward(probs, losses, logits backend.Tensor, tok backend.Tokens, B, T, A int) float64 {
	be.enter()
	defer be.exit()
	need("CrossEntropyForward", probs, B*T*A, "probs")
	need("CrossEntropyForward", losses, B*T, "losses")
	need("CrossEntropyForward", logits, B*T*A, "logits")
	pp, pl, pg, pt := be.dev(probs), be.dev(losses), be.dev(logits), be.devTok(tok, B*T)
	rows := B * T
	if rows == 0 {
		return 0
	}
	nb := reductionBlocks(rows)
	ws := be.workspace(8 * uint64(rows+nb))
	dl, part := ws, ws+8*uint64(rows)
	be.launch("k_ce_fwd", grid1(rows, 128), [3]uint32{128, 1, 1}, ptr(pp), ptr(pl), ptr(dl), ptr(pg), ptr(pt), i32(B), i32(T), i32(A))
	be.launch("k_dsum_partial", [3]uint32{uint32(nb), 1, 1}, block256, ptr(dl), i64(rows), ptr(part))
	return be.partialSums(part, nb)
}

// CrossEntropyBackward: dlogits = scale·(probs − onehot).
func (be *Backend) CrossEntropyBackward(dlogits, probs backend.Tensor, tok backend.Tokens, scale float32, B, T, A int) {
	be.enter()
	defer be.exit()
	need("CrossEntropyBackward", dlogits, B*T*A, "dlogits")
	need("CrossEntropyBackward", probs, B*T*A, "probs")
	pd, pp, pt := be.dev(dlogits), be.dev(probs), be.devTok(tok, B*T)
	be.launch("k_ce_bwd", grid1(B*T*A, 256), block256, ptr(pd), ptr(pp), ptr(pt), scale, i32(B), i32(T), i32(A))
}

// SumSquares returns Σ t[i]² (double partial sums added in order).
func (be *Backend) SumSquares(t backend.Tensor) float64 {
	be.enter()
	defer be.exit()
	p := be.dev(t)
	if t.Len == 0 {
		return 0
	}
	nb := reductionBlocks(t.Len)
	part := be.workspace(8 * uint64(nb))
	be.launch("k_sumsq_partial", [3]uint32{uint32(nb), 1, 1}, block256, ptr(p), i64(t.Len), ptr(part))
	return be.partialSums(part, nb)
}

// Scale multiplies t by s.
func (be *Backend) Scale(t backend.Tensor, s float32) {
	be.enter()
	defer be.exit()
	p := be.dev(t)
	be.launch("k_scale", grid1(t.Len, 256), block256, ptr(p), s, i64(t.Len))
}

// AdamW applies one step (bias corrections in float64 on the host).
func (be *Backend) AdamW(params, grads, m, v backend.Tensor, h backend.AdamWStep) {
	be.enter()
	defer be.exit()
	need("AdamW", grads, params.Len, "grads")
	need("AdamW", m, params.Len, "m")
	need("AdamW", v, params.Len, "v")
	pp, pg, pm, pv := be.dev(params), be.dev(grads), be.dev(m), be.dev(v)
	c1 := 1 / (1 - math.Pow(h.Beta1, float64(h.T)))
	c2 := 1 / (1 - math.Pow(h.Beta2, float64(h.T)))
	be.launch("k_adamw", grid1(params.Len, 256), block256, ptr(pp), ptr(pg), ptr(pm), ptr(pv), i64(params.Len),
		float32(h.Beta1), float32(h.Beta2), c1, c2, h.LR, float32(1-h.LR*h.WeightDecay), h.Eps)
}
