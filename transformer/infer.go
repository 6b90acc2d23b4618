package transformer

import (
	"fmt"
	"io"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/transformer/backend"
)

// InferRows is the number of rows (window positions, summed over the
// windows of a batch) that the model's pooled forward-only buffers hold
// at least: a batch of PredictBatch is ⌊rows / T⌋ windows of T symbols.
// The buffers hold max(InferRows, N) rows, so one window of the whole
// context always fits. At E=128, A=3 a row is 11·128+6 floats (5.7 kB),
// so the buffers of one concurrent prediction are ≈ 24 MB.
const InferRows = 4096

// inferRows is the row capacity of the model's pooled forward-only
// buffers.
func (c Config) inferRows() int { return max(InferRows, c.Context) }

// Inference holds the buffers of forward passes that are never
// back-propagated: evaluation and prediction. Unlike Activations (which
// keep every layer's intermediate tensors, as Backward and attention maps
// need), it keeps one layer's worth, reused layer after layer — the
// residual stream and the attention sum, one LayerNorm output with its
// statistics, one work area for q/k/v and the attention output or for the
// feed-forward hidden layer (and finally the logits) — and the
// probabilities: 11·E + A + 3 floats per row, whatever the depth, and no
// gradient, log-sum-exp or optimiser buffer. The buffers are one
// allocation on the model's backend, made once and reused; an Inference
// is not safe for concurrent use. Free releases it.
type Inference struct {
	// Rows is the capacity: a pass over B windows of T symbols needs
	// B·T ≤ Rows (and T ≤ N).
	Rows int

	be     backend.Backend
	A, N   int
	whole  backend.Tensor
	tokens backend.Tokens
	// (Rows, ·) regions of whole
	resid, sum, ln, mean, rstd, work, probs, losses backend.Tensor
	// state of the last forward pass
	B, T int
	// host copies (reused)
	hostProbs, hostRow []float32
	// scratch of the batched predictor (reused, see predict_batch.go)
	scratch batchScratch
	// host copies of an intervened layer (reused, see intervened.go)
	patch patchScratch
	// streams, when set, receive rows streamRows (nil: all) of the
	// residual stream (see residual.go)
	streams    [][]float32
	streamRows []int
}

// InferenceFloats is the number of float32 elements of an Inference of
// rows rows (its memory is 4 bytes times this, plus rows bytes of
// tokens).
func (c Config) InferenceFloats(rows int) int {
	C, A := c.Embed, c.Alphabet
	return rows * (3*C + 2 + c.workWidth() + A + 1)
}

// workWidth is the per-row width of an Inference's work area: q, k, v
// and the attention output (4E), the feed-forward layer before and after
// its activation (8E), the logits (A).
func (c Config) workWidth() int {
	w := 4 * c.Embed
	if c.FeedForward {
		w = 8 * c.Embed
	}
	return max(w, c.Alphabet)
}

// AllocInference allocates forward-only buffers for passes of up to rows
// window positions (B·T ≤ rows, T ≤ N) on the model's backend. An
// allocation the backend cannot make is an error.
func (m *Model) AllocInference(rows int) (*Inference, error) {
	if rows < 1 {
		return nil, fmt.Errorf("transformer: forward-only buffers of %d rows", rows)
	}
	c := m.Config
	if float64(rows)*float64(c.InferenceFloats(1)) > 1<<46 {
		return nil, fmt.Errorf("transformer: forward-only buffers of %d rows: %w", rows, backend.ErrOutOfMemory)
	}
	in := &Inference{Rows: rows, be: m.be, A: c.Alphabet, N: c.Context}
	var err error
	if in.whole, err = backend.AllocTensor(m.be, c.InferenceFloats(rows)); err == nil {
		in.tokens, err = m.be.AllocTokens(rows)
	}
	if err != nil {
		in.Free()
		return nil, fmt.Errorf("transformer: forward-only buffers of %d rows: %w", rows, err)
	}
	C, off := c.Embed, 0
	take := func(width int) backend.Tensor {
		t := in.whole.Slice(off, rows*width)
		off += rows * width
		return t
	}
	in.resid, in.sum, in.ln = take(C), take(C), take(C)
	in.mean, in.rstd = take(1), take(1)
	in.work = take(c.workWidth())
	in.probs, in.losses = take(c.Alphabet), take(1)
	return in, nil
}

// Free releases the buffers; in must not be used afterwards.
func (in *Inference) Free() error {
	if in.be == nil {
		return nil
	}
	err := backend.FreeAll(in.be, in.whole)
	if terr := in.be.FreeTokens(in.tokens); err == nil {
		err = terr
	}
	in.whole, in.tokens = backend.Tensor{}, nil
	in.resid, in.sum, in.ln, in.mean, in.rstd, in.work, in.probs, in.losses = backend.Tensor{}, backend.Tensor{}, backend.Tensor{}, backend.Tensor{}, backend.Tensor{}, backend.Tensor{}, backend.Tensor{}, backend.Tensor{}
	return err
}

// ForwardInfer runs the model on B windows of T symbols (inputs,
// row-major (B,T), symbols < A, B·T ≤ in.Rows, T ≤ N) and leaves the
// next-symbol probabilities of every position in in (see Probs, ProbRow).
// It makes the same op calls with the same operands as Forward, only on
// buffers shared between layers, so the probabilities are those of
// Forward bit for bit on a backend whose ops do not depend on where their
// operands lie (the CPU and CUDA backends).
func (m *Model) ForwardInfer(in *Inference, inputs []byte, B, T int) {
	m.forwardInfer(in, inputs, B, T, nil)
}

// forwardInfer is ForwardInfer with an attention hook: when hook is not
// nil, it sees each layer's attention output (heads concatenated) before
// the layer's output projection, and may change it (an intervention) or
// copy it (the reference pass of one). With a nil hook the op calls are
// ForwardInfer's.
func (m *Model) forwardInfer(in *Inference, inputs []byte, B, T int, hook attentionHook) {
	c := m.Config
	if B < 1 || T < 1 || T > c.Context || B*T > in.Rows || len(inputs) != B*T {
		panic(fmt.Sprintf("transformer: ForwardInfer on (%d,%d) with %d inputs, buffers hold %d rows of up to %d", B, T, len(inputs), in.Rows, c.Context))
	}
	be := m.be
	in.B, in.T = B, T
	be.UploadTokens(in.tokens, inputs)
	BT, C, A := B*T, c.Embed, c.Alphabet
	p, tok := &m.p, in.tokens
	x, y := in.resid.Prefix(BT*C), in.sum.Prefix(BT*C)
	ln, mean, rstd := in.ln.Prefix(BT*C), in.mean.Prefix(BT), in.rstd.Prefix(BT)
	qkv, atty := in.work.Slice(0, BT*3*C), in.work.Slice(BT*3*C, BT*C)
	be.EncoderForward(x, tok, p.wte, m.pos, B, T, C)
	for l := range c.Layers {
		in.keepStream(l, x)
		lp := &p.layers[l]
		// y = x + proj(attn(qkv(ln1(x))))
		if c.LayerNorm {
			be.LayerNormForward(ln, mean, rstd, x, lp.ln1w, lp.ln1b, BT, C)
			be.MatmulForward(qkv, ln, lp.qkvw, lp.qkvb, BT, C, 3*C)
		} else {
			be.MatmulForward(qkv, x, lp.qkvw, lp.qkvb, BT, C, 3*C)
		}
		be.AttentionForward(atty, backend.Tensor{}, qkv, B, T, C, c.Heads[l])
		if hook != nil {
			hook.attention(in, l, atty, qkv, inputs, B, T)
		}
		be.MatmulForward(y, atty, lp.projw, lp.projb, BT, C, C)
		be.Add(y, x, y)
		if !c.FeedForward {
			x, y = y, x
			continue
		}
		// x = y + proj(act(fc(ln2(y)))): the layer's input x is dead
		ffIn := y
		if c.LayerNorm {
			be.LayerNormForward(ln, mean, rstd, y, lp.ln2w, lp.ln2b, BT, C)
			ffIn = ln
		}
		fch, fcha := in.work.Slice(0, BT*4*C), in.work.Slice(BT*4*C, BT*4*C)
		be.MatmulForward(fch, ffIn, lp.fcw, lp.fcb, BT, C, 4*C)
		be.ActivationForward(c.activation(), fcha, fch)
		be.MatmulForward(x, fcha, lp.fcprojw, lp.fcprojb, BT, 4*C, C)
		be.Add(x, y, x)
	}
	in.keepStream(c.Layers, x)
	if c.LayerNorm {
		be.LayerNormForward(ln, mean, rstd, x, p.lnfw, p.lnfb, BT, C)
		x = ln
	}
	logits := in.work.Slice(0, BT*A)
	be.MatmulForward(logits, x, p.headw, p.headb, BT, C, A)
	be.CrossEntropyForward(in.probs.Prefix(BT*A), in.losses.Prefix(BT), logits, tok, B, T, A)
}

// Probs returns a host copy of the (B,T,A) next-symbol probabilities of
// the last ForwardInfer: row (b,t) is P(x_{t+2} | x_1..x_{t+1}) of window
// b (0-based t). The slice is reused by the next call.
func (in *Inference) Probs() []float32 {
	n := in.B * in.T * in.A
	if cap(in.hostProbs) < n {
		in.hostProbs = make([]float32, n)
	}
	in.hostProbs = in.hostProbs[:n]
	in.be.Download(in.hostProbs, in.probs.Prefix(n))
	return in.hostProbs
}

// ProbRow returns a host copy of one row of the probabilities of the last
// ForwardInfer (window b, 0-based position t), A values; only that row is
// copied, into a slice the next call reuses.
func (in *Inference) ProbRow(b, t int) []float32 {
	if b < 0 || b >= in.B || t < 0 || t >= in.T {
		panic(fmt.Sprintf("transformer: probability row (%d,%d) of a pass over (%d,%d)", b, t, in.B, in.T))
	}
	if cap(in.hostRow) < in.A {
		in.hostRow = make([]float32, in.A)
	}
	in.hostRow = in.hostRow[:in.A]
	in.be.Download(in.hostRow, in.probs.Slice((b*in.T+t)*in.A, in.A))
	return in.hostRow
}

// PredictionBytes estimates the memory that prediction (PredictBatch,
// PredictSequence, a state's Predict) adds to a model of c per
// concurrent caller: one set of forward-only buffers of the pool
// (Inference: max(InferRows, N) rows of 11·E + A + 3 floats and a token
// each) and its host copy of the probabilities.
func (c Config) PredictionBytes() float64 {
	rows := float64(c.inferRows())
	return 4*float64(c.InferenceFloats(1))*rows + rows + 4*rows*float64(c.Alphabet)
}

// ReadModelConfig returns the configuration of the model file path (as
// SaveSafetensors writes it) from its header, without reading the
// weights.
func ReadModelConfig(path string) (Config, error) {
	return fsutil.ReadSized(path, func(r io.Reader, size int64) (Config, error) {
		_, cfg, err := readModelHeader(r, size)
		return cfg, err
	})
}
