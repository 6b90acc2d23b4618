package cpu

// The operations of the engine on host slices, each a forward/backward pair. Tensors are
// flat row-major float32 slices; "rows" is B·T. Unless a comment says
// otherwise, backward functions ACCUMULATE (+=) into every gradient they
// are given (the caller zeroes gradients before a backward pass), which is
// what lets residual branches share one gradient buffer.

import (
	"math"
	"runtime"
	"sync"

	"github.com/vomc/vomc/transformer/kernels"
)

// lnEps is LayerNorm's ε (PyTorch's default).
const lnEps = 1e-5

// encoderForward: out[b,t,:] = wte[inp[b,t],:] + pos[t,:], out (B,T,C),
// inp (B,T), wte (A,C), pos (≥T,C) (learned wpe or the sinusoidal table).
// Rows are done in parallel chunks.
func encoderForward(out []float32, inp []byte, wte, pos []float32, B, T, C int) {
	t := getChunkTask(opEncFwd)
	t.x, t.y, t.z, t.tok, t.T, t.C = out, wte, pos, inp, T, C
	t.run(B*T, rowChunk(C))
}

func (t *chunkTask) encoderForward(lo, hi int) {
	C, T, out, wte, pos := t.C, t.T, t.x, t.y, t.z
	for r, tt := lo, lo%T; r < hi; r, tt = r+1, tt+1 {
		if tt == T {
			tt = 0
		}
		o := out[r*C : (r+1)*C]
		e := wte[int(t.tok[r])*C:][:C]
		p := pos[tt*C:][:C]
		for i := range o {
			o[i] = e[i] + p[i]
		}
	}
}

// encoderBackward accumulates dwte and, unless dwpe is nil (sinusoidal
// positions), dwpe from dout (B,T,C): dwte in one part (each row summed
// over its symbol's rows in row order), beside it dwpe in chunks of
// positions (each row of dwpe summed over the windows in order).
func encoderBackward(ks *kernels.Set, dwte, dwpe []float32, dout []float32, inp []byte, B, T, C int) {
	t := getChunkTask(opEncBwd)
	t.ks, t.x, t.y, t.z, t.tok, t.B, t.T, t.C = ks, dout, dwte, dwpe, inp, B, T, C
	t.chunk = max(1, vecChunk/(B*C))
	parts := 1
	if dwpe != nil {
		parts += (T + t.chunk - 1) / t.chunk
	}
	if parts == 1 || runtime.GOMAXPROCS(0) <= 1 {
		t.encoderBackwardTok()
		if dwpe != nil {
			t.encoderBackwardPos(0, T)
		}
	} else {
		kernels.Run(t, parts)
	}
	*t = chunkTask{}
	chunkPool.Put(t)
}

func (t *chunkTask) encoderBackwardPos(t0, t1 int) {
	C, dout := t.C, t.x
	for tt := t0; tt < t1; tt++ {
		dp := t.z[tt*C : (tt+1)*C]
		for b := 0; b < t.B; b++ {
			r := b*t.T + tt
			t.ks.Add(dp, dp, dout[r*C:(r+1)*C])
		}
	}
}

func (t *chunkTask) encoderBackwardTok() {
	C, dout, dwte := t.C, t.x, t.y
	for r := 0; r < t.B*t.T; r++ {
		e := dwte[int(t.tok[r])*C:][:C]
		t.ks.Add(e, e, dout[r*C:(r+1)*C])
	}
}

// layernormForward normalises each of the rows of inp (rows, C):
// out = (x − mean)·rstd·w + b with rstd = 1/√(var + ε) (biased variance);
// mean and rstd (rows) are kept for the backward pass. Rows are done in
// parallel chunks of lnChunk.
func layernormForward(ks *kernels.Set, out, mean, rstd, inp, w, b []float32, rows, C int) {
	t := lnPool.Get().(*lnTask)
	*t = lnTask{ks: ks, out: out, mean: mean, rstd: rstd, inp: inp, w: w, b: b, rows: rows, C: C}
	kernels.Run(t, (rows+lnChunk-1)/lnChunk)
	*t = lnTask{}
	lnPool.Put(t)
}

// layernormBackward accumulates dinp, dw, db from dout. With x̂ the
// normalised input and g = dout·w: dinp = rstd·(g − mean(g) − x̂·mean(g·x̂)).
// Rows are done in parallel chunks of lnChunk; each chunk sums its dw, db
// contributions apart and the chunk sums are added in chunk order, so the
// result does not depend on the number of goroutines.
func layernormBackward(ks *kernels.Set, dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, C int) {
	parts := (rows + lnChunk - 1) / lnChunk
	scr := getScratch(parts * lnPartStride(C))
	t := lnPool.Get().(*lnTask)
	*t = lnTask{ks: ks, backward: true, dinp: dinp, dout: dout, inp: inp, w: w, mean: mean, rstd: rstd, rows: rows, C: C, partial: *scr}
	kernels.Run(t, parts)
	for p := 0; p < parts; p++ {
		part := t.partial[p*lnPartStride(C):][:2*C]
		for i, v := range part[:C] {
			dw[i] += v
		}
		for i, v := range part[C:] {
			db[i] += v
		}
	}
	*t = lnTask{}
	lnPool.Put(t)
	scratchPool.Put(scr)
}

// lnChunk is the number of rows per part of the LayerNorm ops.
const lnChunk = 256

// lnPartStride is the distance between two parts' dw, db sums in the
// scratch of layernormBackward: 2C values and 32 of padding, so that no
// two parts — run at once on different cores — touch the same or an
// adjacent cache line. (The SIMD kernels' masked tails read and write,
// under an empty mask, the vector after each row of dw and db; on the
// next part's sums, that made the two cores fight over its first line at
// every row, and LayerNorm's backward pass ran no faster on 2 cores than
// on 1.)
func lnPartStride(C int) int { return 2*C + 32 }

// lnTask is one LayerNorm call, run by kernels.Run over row chunks.
type lnTask struct {
	ks                         *kernels.Set
	backward                   bool
	out, mean, rstd, inp, w, b []float32
	dinp, dout, partial        []float32
	rows, C                    int
}

var lnPool = sync.Pool{New: func() any { return new(lnTask) }}

// RunPart does the rows of chunk i (Set.LayerNorm, Set.LayerNormBackward).
func (t *lnTask) RunPart(i int) {
	C := t.C
	r0, r1 := i*lnChunk, min(t.rows, (i+1)*lnChunk)
	if !t.backward {
		t.ks.LayerNorm(t.out[r0*C:r1*C], t.mean[r0:r1], t.rstd[r0:r1], t.inp[r0*C:r1*C], t.w, t.b, r1-r0, C, lnEps)
		return
	}
	part := t.partial[i*lnPartStride(C):][:2*C]
	clear(part)
	t.ks.LayerNormBackward(t.dinp[r0*C:r1*C], part[:C], part[C:], t.dout[r0*C:r1*C], t.inp[r0*C:r1*C], t.w, t.mean[r0:r1], t.rstd[r0:r1], r1-r0, C)
}

// matmulForward: out (rows, OC) = inp (rows, C) · wᵀ + bias, w (OC, C),
// bias (OC) or nil. out is overwritten. The bias is added to each tile
// of out by the GEMM where it can (kernels.BiasKernel), else afterwards;
// the result is the same.
func matmulForward(ks *kernels.Set, k kernels.Kernel, out, inp, w, bias []float32, rows, C, OC int) {
	if bk, ok := k.(kernels.BiasKernel); ok && bias != nil {
		bk.GemmBias(false, true, rows, OC, C, inp, C, w, C, out, OC, bias)
		return
	}
	k.Gemm(false, true, rows, OC, C, inp, C, w, C, 0, out, OC)
	if bias != nil {
		biasAdd(ks, out, bias, rows, OC)
	}
}

func matmulBackwardBeta(ks *kernels.Set, k kernels.Kernel, beta float32, dinp, dw, dbias, dout, inp, w []float32, rows, C, OC int) {
	if dinp != nil {
		k.Gemm(false, false, rows, C, OC, dout, OC, w, C, beta, dinp, C)
	}
	k.Gemm(true, false, OC, C, rows, dout, OC, inp, C, 1, dw, C)
	if dbias != nil {
		biasGrad(ks, dbias, dout, rows, OC)
	}
}

// attnRB is the row block of the blocked causal attention: the scores of
// query rows r0..r0+attnRB−1 are computed against keys 0..r0+attnRB−1
// only, so about half of the T×T products are skipped.
const attnRB = 48

// attentionForward is causal multi-head scaled dot-product attention.
// qkv (B,T,3C) holds per position the C query, C key and C value entries;
// head h uses entries h·hs..(h+1)·hs−1 of each, hs = C/NH. It writes out
// (B,T,C) (heads concatenated) and, unless lse is nil (inference), lse
// (B,NH,T): for row t the log-sum-exp ln Σ_{t2≤t} e^{q_t·k_{t2}/√hs} of
// its scaled scores, from which attentionBackward recomputes the weights
// softmax_{t2≤t}(q_t·k_{t2}/√hs) (so no B·NH·T² buffer is kept).
//
// Per (b, h), in parallel, and per block of attnRB query rows: the scores
// S = Q·Kᵀ and the output P·V are products of the kernel k (run serially)
// on strided views of qkv (Kᵀ transposed once per (b, h)); the softmax
// (Set.Softmax) covers t2 ≤ t exactly and the weights of t < t2 < r1
// inside the block are set to 0.
//
// With fused and a head size of 16, each (b, h) is instead done by the
// set's fused kernels (Set.AttentionHead16Forward: blocks of 16 queries in
// registers, no T×T panel).
func attentionForward(ks *kernels.Set, k kernels.Kernel, fused bool, out, lse, qkv []float32, B, T, C, NH int) {
	t := attnPool.Get().(*attnTask)
	*t = attnTask{ks: ks, k: kernels.Serial(k), fused: fused, out: out, lse: lse, qkv: qkv, B: B, T: T, C: C, NH: NH}
	kernels.Run(t, B*NH)
	*t = attnTask{}
	attnPool.Put(t)
}

// attentionBackward sets dqkv (B,T,3C) from dout (B,T,C), using the
// forward's qkv and lse. Work is split over (b, h) pairs, which write
// disjoint parts of dqkv; per block of query rows r0..r1−1, the weights
// P = exp(Q·Kᵀ/√hs − lse) are recomputed (Set.ScaledExp), then with
// dS the gradient of the scores: dV[0:r1] += Pᵀ·dO, dP = dO·Vᵀ (Vᵀ
// transposed once per (b, h)), dS = Set.SoftmaxBackward(P, dP),
// dQ[r0:r1] += dS·K, dK[0:r1] += dSᵀ·Q. With fused and a head size of
// 16: Set.AttentionHead16Backward per (b, h).
func attentionBackward(ks *kernels.Set, k kernels.Kernel, fused bool, dqkv, dout, qkv, lse []float32, B, T, C, NH int) {
	t := attnPool.Get().(*attnTask)
	*t = attnTask{ks: ks, k: kernels.Serial(k), fused: fused, dqkv: dqkv, dout: dout, lse: lse, qkv: qkv, B: B, T: T, C: C, NH: NH, backward: true}
	kernels.Run(t, B*NH)
	*t = attnTask{}
	attnPool.Put(t)
}

// attnTask is one attention call, run by kernels.Run over (b, h).
type attnTask struct {
	ks                        *kernels.Set
	k                         kernels.Kernel
	out, lse, qkv, dout, dqkv []float32
	B, T, C, NH               int
	backward                  bool
	fused                     bool // the set's fused kernels when the head size is 16
}

var attnPool = sync.Pool{New: func() any { return new(attnTask) }}

// scratchPool holds per-part scratch buffers (*[]float32).
var scratchPool = sync.Pool{New: func() any { return new([]float32) }}

func getScratch(n int) *[]float32 {
	p := scratchPool.Get().(*[]float32)
	if cap(*p) < n {
		*p = make([]float32, n)
	}
	*p = (*p)[:n]
	return p
}

// RunPart does the (b, h) pair bh. The pairs go window-major, as the
// rows of qkv: the caller takes the first windows and a helper the last
// ones (kernels.Run), those whose rows of qkv the same cores wrote.
func (a *attnTask) RunPart(bh int) {
	T, C, NH, k := a.T, a.C, a.NH, a.k
	b, h := bh/NH, bh%NH
	hs, C3 := C/NH, 3*C
	scale := float32(1 / math.Sqrt(float64(hs)))
	base := b*T*C3 + h*hs // the head's first row in qkv and dqkv
	ob := b*T*C + h*hs    // and in out and dout
	q, kk, v := a.qkv[base:], a.qkv[base+C:], a.qkv[base+2*C:]
	var lse []float32
	if a.lse != nil {
		lse = a.lse[bh*T : (bh+1)*T]
	}
	if a.fused && hs == 16 {
		a.runFused16(base, ob, lse, q, kk, v, scale)
		return
	}
	rbMax := min(attnRB, T)
	scr := getScratch(2*rbMax*T + 2*hs*T)
	defer scratchPool.Put(scr)
	sc := *scr
	p, ds := sc[:rbMax*T], sc[rbMax*T:2*rbMax*T]
	kt, vt := sc[2*rbMax*T:2*rbMax*T+hs*T], sc[2*rbMax*T+hs*T:]
	// S = Q·Kᵀ with Kᵀ (hs, T) transposed once, so that the kernel reads
	// it in place for every block
	transposeHead(a.ks, kt, kk, T, hs, C3)
	if !a.backward {
		out := a.out[ob:]
		for r0 := 0; r0 < T; r0 += attnRB {
			r1 := min(T, r0+attnRB)
			rb := r1 - r0
			k.Gemm(false, false, rb, r1, hs, q[r0*C3:], C3, kt, T, 0, p, T)
			for i := 0; i < rb; i++ {
				row := p[i*T : i*T+r1]
				l := a.ks.Softmax(row[:r0+i+1], scale)
				if lse != nil {
					lse[r0+i] = l
				}
				clear(row[r0+i+1:])
			}
			k.Gemm(false, false, rb, hs, r1, p, T, v, C3, 0, out[r0*C:], C)
		}
		return
	}
	dq, dk, dv := a.dqkv[base:], a.dqkv[base+C:], a.dqkv[base+2*C:]
	for t := 0; t < T; t++ { // the products below add to them
		clear(dq[t*C3 : t*C3+hs])
		clear(dk[t*C3 : t*C3+hs])
		clear(dv[t*C3 : t*C3+hs])
	}
	do := a.dout[ob:]
	transposeHead(a.ks, vt, v, T, hs, C3)
	for r0 := 0; r0 < T; r0 += attnRB {
		r1 := min(T, r0+attnRB)
		rb := r1 - r0
		k.Gemm(false, false, rb, r1, hs, q[r0*C3:], C3, kt, T, 0, p, T)
		for i := 0; i < rb; i++ {
			row := p[i*T : i*T+r1]
			a.ks.ScaledExp(row[:r0+i+1], scale, lse[r0+i])
			clear(row[r0+i+1:])
		}
		k.Gemm(true, false, r1, hs, rb, p, T, do[r0*C:], C, 1, dv, C3)
		k.Gemm(false, false, rb, r1, hs, do[r0*C:], C, vt, T, 0, ds, T)
		for i := 0; i < rb; i++ {
			row := ds[i*T : i*T+r1]
			a.ks.SoftmaxBackward(p[i*T:i*T+r0+i+1], row[:r0+i+1], scale)
			clear(row[r0+i+1:])
		}
		k.Gemm(false, false, rb, hs, r1, ds, T, kk, C3, 1, dq[r0*C3:], C3)
		k.Gemm(true, false, r1, hs, rb, ds, T, q[r0*C3:], C3, 1, dk, C3)
	}
}

// runFused16 does one (b, h) pair of head size 16 with the set's fused
// kernels: base and ob are the head's first row in qkv (and dqkv) and in
// out (and dout), q, kk and v its views of qkv, lse its T log-sum-exps.
func (a *attnTask) runFused16(base, ob int, lse, q, kk, v []float32, scale float32) {
	T, C := a.T, a.C
	scr := getScratch(kernels.Attention16Scratch(T))
	defer scratchPool.Put(scr)
	if !a.backward {
		a.ks.AttentionHead16Forward(a.out[ob:], C, lse, q, kk, v, 3*C, T, scale, *scr)
		return
	}
	a.ks.AttentionHead16Backward(a.dqkv[base:], a.dqkv[base+C:], a.dqkv[base+2*C:], a.dout[ob:], C,
		q, kk, v, 3*C, lse, T, scale, *scr)
}

// attentionWeights writes out (B,NH,T,T): per (b, h), in parallel, the
// scores S = Q·Kᵀ (a product of the kernel k, run serially, on strided
// views of qkv), then each row i's softmax over columns 0..i (Set.Softmax)
// and zeros above the diagonal.
func attentionWeights(ks *kernels.Set, k kernels.Kernel, out, qkv []float32, B, T, C, NH int) {
	t := weightsPool.Get().(*weightsTask)
	*t = weightsTask{ks: ks, k: kernels.Serial(k), out: out, qkv: qkv, T: T, C: C, NH: NH}
	kernels.Run(t, B*NH)
	*t = weightsTask{}
	weightsPool.Put(t)
}

// weightsTask is one attentionWeights call, run by kernels.Run over (b, h).
type weightsTask struct {
	ks       *kernels.Set
	k        kernels.Kernel
	out, qkv []float32
	T, C, NH int
}

var weightsPool = sync.Pool{New: func() any { return new(weightsTask) }}

// RunPart does the (b, h) pair bh.
func (w *weightsTask) RunPart(bh int) {
	T, C, NH := w.T, w.C, w.NH
	b, h := bh/NH, bh%NH
	hs, C3 := C/NH, 3*C
	scale := float32(1 / math.Sqrt(float64(hs)))
	base := b*T*C3 + h*hs
	p := w.out[bh*T*T : (bh+1)*T*T]
	w.k.Gemm(false, true, T, T, hs, w.qkv[base:], C3, w.qkv[base+C:], C3, 0, p, T)
	for i := 0; i < T; i++ {
		row := p[i*T : (i+1)*T]
		w.ks.Softmax(row[:i+1], scale)
		clear(row[i+1:])
	}
}

// transposeHead writes dst (hs, T) = xᵀ for the head view x (T rows of hs
// values, row stride ld).
func transposeHead(ks *kernels.Set, dst, x []float32, T, hs, ld int) {
	ks.Transpose(dst, T, x, ld, T, hs)
}

// reluForward: out = max(x, 0) elementwise.
func reluForward(out, inp []float32) {
	for i, v := range inp {
		out[i] = max(v, 0)
	}
}

// reluBackwardSet OVERWRITES dinp = dout·[x > 0].
func reluBackwardSet(dinp, inp, dout []float32) {
	dinp, dout = dinp[:len(inp)], dout[:len(inp)]
	for i, v := range inp {
		if v > 0 {
			dinp[i] = dout[i]
		} else {
			dinp[i] = 0
		}
	}
}

// geluForward is the erf GELU out = x·Φ(x) = ½x(1 + erf(x/√2)), with a
// float32 erf approximation (|error of Φ| ≤ 3e-7; Set.GeluForward),
// in parallel chunks.
func geluForward(ks *kernels.Set, out, inp []float32) {
	runElementwise(ks, opGeluForward, out, inp, nil)
}

// geluBackwardSet OVERWRITES dinp = dout·(Φ(x) + x·φ(x)).
func geluBackwardSet(ks *kernels.Set, dinp, inp, dout []float32) {
	runElementwise(ks, opGeluBackwardSet, dinp, inp, dout)
}

// elemOp is an elementwise operation run by runElementwise.
type elemOp int

const (
	opGeluForward elemOp = iota
	opGeluBackwardSet
)

// elemChunk is the number of elements per part of an elementwise op.
const elemChunk = 1 << 15

// elemTask is one elementwise call, split into chunks of elemChunk.
type elemTask struct {
	ks      *kernels.Set
	op      elemOp
	x, y, z []float32
}

var elemPool = sync.Pool{New: func() any { return new(elemTask) }}

// runElementwise applies op to x (len n), y, z in parallel chunks.
func runElementwise(ks *kernels.Set, op elemOp, x, y, z []float32) {
	n := len(y)
	t := elemPool.Get().(*elemTask)
	*t = elemTask{ks: ks, op: op, x: x[:n], y: y, z: z}
	kernels.Run(t, (n+elemChunk-1)/elemChunk)
	*t = elemTask{}
	elemPool.Put(t)
}

// RunPart does chunk i.
func (t *elemTask) RunPart(i int) {
	lo, hi := i*elemChunk, min(len(t.y), (i+1)*elemChunk)
	switch t.op {
	case opGeluForward:
		t.ks.GeluForward(t.x[lo:hi], t.y[lo:hi])
	case opGeluBackwardSet:
		t.ks.GeluBackwardSet(t.x[lo:hi], t.y[lo:hi], t.z[lo:hi])
	}
}

// crossEntropyForward computes probs (B,T,A) = softmax(logits) at every
// position and losses (B,T): losses[b,t] = −ln probs[b,t,inp[b,t+1]] in
// nats for t < T−1 and 0 at t = T−1 (no target). It returns the sum of the
// losses. Rows are done in parallel chunks, each row's loss kept in
// float64, and the losses are summed in row order.
func crossEntropyForward(probs, losses, logits []float32, inp []byte, B, T, A int) float64 {
	scr := getScratch64(B * T)
	t := getChunkTask(opCEFwd)
	t.x, t.y, t.z, t.f64, t.tok, t.T, t.C = probs, losses, logits, *scr, inp, T, A
	t.run(B*T, ceChunk)
	total := 0.0
	for b := 0; b < B; b++ {
		for _, loss := range (*scr)[b*T : b*T+T-1] {
			total += loss
		}
	}
	scratch64Pool.Put(scr)
	return total
}

func (t *chunkTask) crossEntropyForward(lo, hi int) {
	A, T, probs, losses, logits, rl := t.C, t.T, t.x, t.y, t.z, t.f64
	for r, tt := lo, lo%T; r < hi; r, tt = r+1, tt+1 {
		if tt == T {
			tt = 0
		}
		l := logits[r*A : (r+1)*A]
		p := probs[r*A : (r+1)*A]
		maxv := l[0]
		for _, v := range l {
			maxv = max(maxv, v)
		}
		var sum float64
		for i, v := range l {
			e := math.Exp(float64(v - maxv))
			p[i] = float32(e)
			sum += e
		}
		inv := 1 / sum
		for i := range p {
			p[i] = float32(float64(p[i]) * inv)
		}
		if tt == T-1 {
			losses[r], rl[r] = 0, 0
			continue
		}
		y := int(t.tok[r+1])
		loss := math.Log(sum) - float64(l[y]-maxv)
		losses[r], rl[r] = float32(loss), loss
	}
}

// scratch64Pool holds float64 scratch buffers (*[]float64).
var scratch64Pool = sync.Pool{New: func() any { return new([]float64) }}

func getScratch64(n int) *[]float64 {
	p := scratch64Pool.Get().(*[]float64)
	if cap(*p) < n {
		*p = make([]float64, n)
	}
	*p = (*p)[:n]
	return p
}

// crossEntropyBackward OVERWRITES dlogits (B,T,A) with the gradient of
// scale·Σ losses: scale·(probs − onehot(target)) for t < T−1, 0 at T−1.
// Rows are done in parallel chunks.
func crossEntropyBackward(dlogits, probs []float32, inp []byte, scale float32, B, T, A int) {
	t := getChunkTask(opCEBwd)
	t.x, t.y, t.tok, t.s, t.T, t.C = dlogits, probs, inp, scale, T, A
	t.run(B*T, ceChunk)
}

func (t *chunkTask) crossEntropyBackward(lo, hi int) {
	A, T, scale := t.C, t.T, t.s
	for r, tt := lo, lo%T; r < hi; r, tt = r+1, tt+1 {
		if tt == T {
			tt = 0
		}
		d := t.x[r*A : (r+1)*A]
		if tt == T-1 {
			clear(d)
			continue
		}
		p := t.y[r*A : (r+1)*A]
		for i, v := range p {
			d[i] = scale * v
		}
		d[int(t.tok[r+1])] -= scale
	}
}
