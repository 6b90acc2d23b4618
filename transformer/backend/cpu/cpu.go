// Package cpu is the CPU backend of the transformer engine: buffers are
// host []float32 slices, GEMMs and vector operations come from the active
// kernel set of transformer/kernels (AVX-512, AVX2, NEON or portable Go,
// chosen by CPU features or VOMC_KERNELS), and parallel work runs on the
// kernels' goroutine pool. Every result is independent of the number of
// goroutines, so training is bit-reproducible on one machine.
package cpu

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/kernels"
)

// Backend is the CPU backend. The zero value is not usable: use New.
type Backend struct {
	kern kernels.Kernel // nil: kernels.Default at call time
}

var _ backend.Backend = (*Backend)(nil)

// New returns a CPU backend using the active kernel set's GEMM
// (kernels.Default, read at every call, so kernels.Use takes effect).
func New() *Backend { return &Backend{} }

// WithKernel returns a CPU backend whose GEMM is k (the vector kernels are
// still the active set's), for tests comparing kernels.
func WithKernel(k kernels.Kernel) *Backend { return &Backend{kern: k} }

func (be *Backend) k() kernels.Kernel {
	if be.kern != nil {
		return be.kern
	}
	return kernels.Default
}

// Name returns "cpu/" and the active kernel set.
func (be *Backend) Name() string { return "cpu/" + kernels.Active() }

// buffer is host storage (a pointer, so that tensors compare by identity).
type buffer struct{ data []float32 }

func (b *buffer) Len() int { return len(b.data) }

// tokens is host symbol storage.
type tokens struct{ data []byte }

func (t *tokens) Len() int { return len(t.data) }

// Alloc implements backend.Backend.
func (be *Backend) Alloc(n int) backend.Buffer { return &buffer{make([]float32, n)} }

// AllocTokens implements backend.Backend.
func (be *Backend) AllocTokens(n int) backend.Tokens { return &tokens{make([]byte, n)} }

// Wrap returns a buffer of this backend that IS data (no copy): the
// caller's writes to data are the buffer's contents.
func Wrap(data []float32) backend.Buffer { return &buffer{data} }

// f32 returns the host slice of t; nil for an absent tensor.
func f32(t backend.Tensor) []float32 {
	if t.Buf == nil {
		return nil
	}
	b, ok := t.Buf.(*buffer)
	if !ok {
		panic(fmt.Sprintf("cpu backend: a tensor of another backend (%T)", t.Buf))
	}
	return b.data[t.Off : t.Off+t.Len]
}

// Host returns the host slice behind t (no copy) when t is a CPU-backend
// tensor; ok is false otherwise. For code paths that run only on the CPU
// backend (tests, the attention-map fast path).
func Host(t backend.Tensor) (s []float32, ok bool) {
	if b, isCPU := t.Buf.(*buffer); isCPU {
		return b.data[t.Off : t.Off+t.Len], true
	}
	return nil, false
}

func toks(t backend.Tokens, n int) []byte {
	b, ok := t.(*tokens)
	if !ok {
		panic(fmt.Sprintf("cpu backend: tokens of another backend (%T)", t))
	}
	return b.data[:n]
}

// Upload implements backend.Backend.
func (be *Backend) Upload(dst backend.Tensor, src []float32) {
	d := f32(dst)
	if len(src) != len(d) {
		panic(fmt.Sprintf("cpu backend: upload of %d elements into %d", len(src), len(d)))
	}
	copy(d, src)
}

// Download implements backend.Backend.
func (be *Backend) Download(dst []float32, src backend.Tensor) {
	s := f32(src)
	if len(dst) != len(s) {
		panic(fmt.Sprintf("cpu backend: download of %d elements into %d", len(s), len(dst)))
	}
	copy(dst, s)
}

// UploadTokens implements backend.Backend.
func (be *Backend) UploadTokens(dst backend.Tokens, src []byte) { copy(toks(dst, len(src)), src) }

// Zero implements backend.Backend.
func (be *Backend) Zero(t backend.Tensor) { clear(f32(t)) }

// Copy implements backend.Backend.
func (be *Backend) Copy(dst, src backend.Tensor) { copy(f32(dst), f32(src)) }

// EncoderForward implements backend.Backend.
func (be *Backend) EncoderForward(out backend.Tensor, tok backend.Tokens, wte, pos backend.Tensor, B, T, C int) {
	encoderForward(f32(out), toks(tok, B*T), f32(wte), f32(pos), B, T, C)
}

// EncoderBackward implements backend.Backend.
func (be *Backend) EncoderBackward(dwte, dpos, dout backend.Tensor, tok backend.Tokens, B, T, C int) {
	encoderBackward(f32(dwte), f32(dpos), f32(dout), toks(tok, B*T), B, T, C)
}

// LayerNormForward implements backend.Backend.
func (be *Backend) LayerNormForward(out, mean, rstd, inp, w, b backend.Tensor, rows, C int) {
	layernormForward(f32(out), f32(mean), f32(rstd), f32(inp), f32(w), f32(b), rows, C)
}

// LayerNormBackward implements backend.Backend.
func (be *Backend) LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd backend.Tensor, rows, C int) {
	layernormBackward(f32(dinp), f32(dw), f32(db), f32(dout), f32(inp), f32(w), f32(mean), f32(rstd), rows, C)
}

// MatmulForward implements backend.Backend.
func (be *Backend) MatmulForward(out, inp, w, bias backend.Tensor, rows, C, OC int) {
	matmulForward(be.k(), f32(out), f32(inp), f32(w), f32(bias), rows, C, OC)
}

// MatmulBackward implements backend.Backend.
func (be *Backend) MatmulBackward(dinp, dw, dbias, dout, inp, w backend.Tensor, rows, C, OC int, setDinp bool) {
	beta := float32(1)
	if setDinp {
		beta = 0
	}
	matmulBackwardBeta(be.k(), beta, f32(dinp), f32(dw), f32(dbias), f32(dout), f32(inp), f32(w), rows, C, OC)
}

// AttentionForward implements backend.Backend.
func (be *Backend) AttentionForward(out, lse, qkv backend.Tensor, B, T, C, NH int) {
	attentionForward(be.k(), f32(out), f32(lse), f32(qkv), B, T, C, NH)
}

// AttentionBackward implements backend.Backend.
func (be *Backend) AttentionBackward(dqkv, dout, qkv, lse backend.Tensor, B, T, C, NH int) {
	attentionBackward(be.k(), f32(dqkv), f32(dout), f32(qkv), f32(lse), B, T, C, NH)
}

// ActivationForward implements backend.Backend.
func (be *Backend) ActivationForward(act backend.Activation, out, inp backend.Tensor) {
	if act == backend.ReLU {
		reluForward(f32(out), f32(inp))
		return
	}
	geluForward(f32(out), f32(inp))
}

// ActivationBackward implements backend.Backend.
func (be *Backend) ActivationBackward(act backend.Activation, dinp, inp, dout backend.Tensor) {
	if act == backend.ReLU {
		reluBackwardSet(f32(dinp), f32(inp), f32(dout))
		return
	}
	geluBackwardSet(f32(dinp), f32(inp), f32(dout))
}

// Add implements backend.Backend.
func (be *Backend) Add(out, a, b backend.Tensor) {
	o := f32(out)
	kernels.Add(o, f32(a)[:len(o)], f32(b))
}

// CrossEntropyForward implements backend.Backend.
func (be *Backend) CrossEntropyForward(probs, losses, logits backend.Tensor, tok backend.Tokens, B, T, A int) float64 {
	return crossEntropyForward(f32(probs), f32(losses), f32(logits), toks(tok, B*T), B, T, A)
}

// CrossEntropyBackward implements backend.Backend.
func (be *Backend) CrossEntropyBackward(dlogits, probs backend.Tensor, tok backend.Tokens, scale float32, B, T, A int) {
	crossEntropyBackward(f32(dlogits), f32(probs), toks(tok, B*T), scale, B, T, A)
}

// SumSquares implements backend.Backend: a sequential float64 sum (one
// fixed order).
func (be *Backend) SumSquares(t backend.Tensor) float64 {
	s := 0.0
	for _, v := range f32(t) {
		s += float64(v) * float64(v)
	}
	return s
}

// Scale implements backend.Backend.
func (be *Backend) Scale(t backend.Tensor, s float32) {
	g := f32(t)
	for i := range g {
		g[i] *= s
	}
}

// AdamW implements backend.Backend (the update of backend.AdamWStep,
// bias corrections in float64), in parallel chunks of 4096 parameters.
func (be *Backend) AdamW(params, grads, m, v backend.Tensor, h backend.AdamWStep) {
	p, g, mm, vv := f32(params), f32(grads), f32(m), f32(v)
	adamW(p, g[:len(p)], mm[:len(p)], vv[:len(p)], h)
}

func adamW(params, grads, m, v []float32, h backend.AdamWStep) {
	b1, b2 := float32(h.Beta1), float32(h.Beta2)
	c1 := 1 / (1 - math.Pow(h.Beta1, float64(h.T)))
	c2 := 1 / (1 - math.Pow(h.Beta2, float64(h.T)))
	lr := h.LR
	decay := float32(1 - lr*h.WeightDecay)
	eps := h.Eps
	parallelFor(len(params)/4096+1, func(lo, hi int) {
		for i := lo * 4096; i < min(hi*4096, len(params)); i++ {
			g := grads[i]
			mi := b1*m[i] + (1-b1)*g
			vi := b2*v[i] + (1-b2)*g*g
			m[i], v[i] = mi, vi
			upd := float64(mi) * c1 / (math.Sqrt(float64(vi)*c2) + eps)
			params[i] = params[i]*decay - float32(lr*upd)
		}
	})
}
