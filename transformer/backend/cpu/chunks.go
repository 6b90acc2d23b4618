package cpu

import (
	"math"
	"runtime"
	"sync"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/kernels"
)

// The ops that are loops over elements, rows or columns run in chunks on
// the kernels' goroutine pool (kernels.Run): a chunkTask holds one call's
// operands (pooled: a call allocates nothing) and does chunks [lo, hi) of
// its index range. A chunk goes to whichever goroutine is free (the
// caller takes them from the first on, helpers from the last back:
// kernels.Run), so a helper that starts late costs at most a chunk, the
// rows a core writes in one op are mostly those it reads in the next,
// and every index's result
// is the same whatever the split (elementwise ops; column sums split by
// columns, each summed over the rows in row order; the cross-entropy's
// row losses summed afterwards in row order).

// chunkOp is the loop a chunkTask runs.
type chunkOp int

const (
	opZero     chunkOp = iota // x = 0
	opCopy                    // x = y
	opAdd                     // x = y + z
	opScale                   // x *= s
	opAdamW                   // AdamW on x (params), y (grads), z (m), w (v)
	opEncFwd                  // x = wte[tok] + pos: rows
	opEncBwd                  // y (dwte) += x (dout) by token (part 0), z (dwpe) by position (parts ≥ 1)
	opBiasAdd                 // rows of x (n × C) += y (bias)
	opBiasGrad                // x (dbias) += Σ rows of y (B rows × C): columns
	opCEFwd                   // softmax and losses: rows
	opCEBwd                   // dlogits: rows
)

type chunkTask struct {
	op         chunkOp
	ks         *kernels.Set
	x, y, z, w []float32
	f64        []float64
	tok        []byte
	s          float32
	B, T, C    int
	n, chunk   int
	adam       adamConsts
}

// adamConsts are one AdamW step's constants.
type adamConsts struct {
	b1, b2, decay float32
	c1, c2, lr    float64
	eps           float64
}

var chunkPool = sync.Pool{New: func() any { return new(chunkTask) }}

// getChunkTask returns a cleared task from the pool.
func getChunkTask(op chunkOp) *chunkTask {
	t := chunkPool.Get().(*chunkTask)
	t.op = op
	return t
}

// run does t over [0, n) in chunks of chunk (one call with one chunk or
// GOMAXPROCS = 1), then returns t to the pool.
func (t *chunkTask) run(n, chunk int) {
	t.n, t.chunk = n, chunk
	parts := (n + chunk - 1) / chunk
	switch {
	case n <= 0:
	case parts <= 1 || runtime.GOMAXPROCS(0) <= 1:
		t.do(0, n)
	default:
		kernels.Run(t, parts)
	}
	*t = chunkTask{}
	chunkPool.Put(t)
}

// RunPart does chunk i.
func (t *chunkTask) RunPart(i int) {
	if t.op == opEncBwd {
		if i == 0 {
			t.encoderBackwardTok()
		} else {
			t.encoderBackwardPos((i-1)*t.chunk, min(t.T, i*t.chunk))
		}
		return
	}
	t.do(i*t.chunk, min(t.n, (i+1)*t.chunk))
}

func (t *chunkTask) do(lo, hi int) {
	switch t.op {
	case opZero:
		clear(t.x[lo:hi])
	case opCopy:
		copy(t.x[lo:hi], t.y[lo:hi])
	case opAdd:
		t.ks.Add(t.x[lo:hi], t.y[lo:hi], t.z[lo:hi])
	case opScale:
		g, s := t.x[lo:hi], t.s
		for i := range g {
			g[i] *= s
		}
	case opAdamW:
		t.adamW(lo, hi)
	case opEncFwd:
		t.encoderForward(lo, hi)
	case opBiasAdd:
		C := t.C
		for r := lo; r < hi; r++ {
			o := t.x[r*C : (r+1)*C]
			t.ks.Add(o, o, t.y)
		}
	case opBiasGrad:
		// in a private copy of the block (see colAcc)
		scr, acc := colAcc(hi - lo)
		copy(acc, t.x[lo:hi])
		if n := hi - lo; n < colBlock {
			// a few columns (the logits' bias): no call per row
			for r := 0; r < t.B; r++ {
				for i, v := range t.y[r*t.C+lo : r*t.C+hi] {
					acc[i] += v
				}
			}
		} else {
			t.ks.AddRows(acc, t.y[lo:], t.B, n, t.C)
		}
		copy(t.x[lo:hi], acc)
		scratchPool.Put(scr)
	case opCEFwd:
		t.crossEntropyForward(lo, hi)
	case opCEBwd:
		t.crossEntropyBackward(lo, hi)
	}
}

// vecChunk is the number of elements per chunk of the elementwise ops
// (zeroing, copies, residual additions, scaling): 256 KiB, so that claiming a
// chunk (an atomic operation on a line the other cores also write) costs
// well under 1% of doing it.
const vecChunk = 1 << 16

// rowChunk is the number of rows of C values per chunk of a row-wise op
// (about vecChunk values).
func rowChunk(C int) int { return max(1, vecChunk/max(C, 1)) }

// colBlock is the quantum of the column blocks into which column sums
// (the encoder's gradients, bias gradients) are split: one cache line.
const colBlock = 16

// colAcc returns scratch for a part's sums of n columns: the sums are
// made in a private copy, padded by 128 bytes on each side, not in place,
// so that two cores never write the same or an adjacent (prefetched
// together) cache line at every row, whatever the alignment of the
// gradient they add to. Each sum starts from the gradient's value and
// adds the rows in order, as in place.
func colAcc(n int) (*[]float32, []float32) {
	scr := getScratch(n + 64)
	return scr, (*scr)[32 : 32+n]
}

// colBlocks is the width of the blocks into which C columns are split: two
// per goroutine (fewer, wider blocks make fewer, longer vector additions
// per row), a multiple of colBlock. Each column is summed over the rows in
// row order whatever the width.
func colBlocks(C int) int {
	parts := min(2*runtime.GOMAXPROCS(0), (C+colBlock-1)/colBlock)
	return (C + parts*colBlock - 1) / (parts * colBlock) * colBlock
}

// ceChunk is the number of rows per chunk of the cross-entropy ops.
const ceChunk = 512

// zero sets x to 0.
func zero(x []float32) {
	t := getChunkTask(opZero)
	t.x = x
	t.run(len(x), vecChunk)
}

// copyVec sets dst = src (the shorter length).
func copyVec(dst, src []float32) {
	n := min(len(dst), len(src))
	t := getChunkTask(opCopy)
	t.x, t.y = dst[:n], src[:n]
	t.run(n, vecChunk)
}

// addVec sets dst = a + b elementwise (len(dst) values).
func addVec(ks *kernels.Set, dst, a, b []float32) {
	n := len(dst)
	t := getChunkTask(opAdd)
	t.ks, t.x, t.y, t.z = ks, dst, a[:n], b[:n]
	t.run(n, vecChunk)
}

// scaleVec multiplies g by s.
func scaleVec(g []float32, s float32) {
	t := getChunkTask(opScale)
	t.x, t.s = g, s
	t.run(len(g), vecChunk)
}

// biasAdd adds bias (C) to each of the rows of out (rows × C).
func biasAdd(ks *kernels.Set, out, bias []float32, rows, C int) {
	t := getChunkTask(opBiasAdd)
	t.ks, t.x, t.y, t.C = ks, out, bias, C
	t.run(rows, rowChunk(C))
}

// biasGrad accumulates into dbias (C) the rows of dout (rows × C), in
// blocks of columns, each summed over the rows in row order.
func biasGrad(ks *kernels.Set, dbias, dout []float32, rows, C int) {
	t := getChunkTask(opBiasGrad)
	t.ks, t.x, t.y, t.C, t.B = ks, dbias, dout, C, rows
	t.run(C, colBlocks(C))
}

// adamW applies the AdamW step h, in chunks of 4096 parameters.
func adamW(params, grads, m, v []float32, h backend.AdamWStep) {
	t := getChunkTask(opAdamW)
	t.x, t.y, t.z, t.w = params, grads, m, v
	t.adam = adamConsts{
		b1: float32(h.Beta1), b2: float32(h.Beta2),
		c1:    1 / (1 - math.Pow(h.Beta1, float64(h.T))),
		c2:    1 / (1 - math.Pow(h.Beta2, float64(h.T))),
		lr:    h.LR,
		decay: float32(1 - h.LR*h.WeightDecay),
		eps:   h.Eps,
	}
	t.run(len(params), 4096)
}

func (t *chunkTask) adamW(lo, hi int) {
	a := t.adam
	b1, b2, c1, c2, lr, decay, eps := a.b1, a.b2, a.c1, a.c2, a.lr, a.decay, a.eps
	params, grads, m, v := t.x[lo:hi], t.y[lo:hi], t.z[lo:hi], t.w[lo:hi]
	for i := range params {
		g := grads[i]
		mi := b1*m[i] + (1-b1)*g
		vi := b2*v[i] + (1-b2)*g*g
		m[i], v[i] = mi, vi
		upd := float64(mi) * c1 / (math.Sqrt(float64(vi)*c2) + eps)
		params[i] = params[i]*decay - float32(lr*upd)
	}
}
