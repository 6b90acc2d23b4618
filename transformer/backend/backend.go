// Package backend is the seam between the transformer engine's one model
// definition (package transformer: Forward and Backward as a readable list
// of op calls, the trainer, checkpoints, predictor and attention maps) and
// the machine that runs it. A Backend owns every float32 buffer of a model
// — parameters, gradients, optimiser moments, activations — and implements
// the operations on them, each a forward/backward pair in the manner of
// Karpathy's llm.c (train_gpt2.c / train_gpt2.cu): package backend/cpu is
// the CPU implementation (the kernel sets of transformer/kernels: AVX-512,
// AVX2, NEON or portable Go); a GPU backend implements the same interface
// and needs no change to the model or anything built on it.
//
// Buffers never leave their backend implicitly: host data goes in with
// Upload/UploadTokens and comes back with Download, both explicit copies.
//
// Lifetime: Alloc and AllocTokens report failure as an error (ErrOutOfMemory
// when memory — host or device — runs out, ErrClosed after Close) instead
// of panicking; Free and FreeTokens release one allocation, Close the
// backend and whatever it still holds (worker goroutines, a device
// context). A buffer must not be used after it is freed, and no buffer
// after its backend is closed.
//
// Conventions for every op: tensors are row-major float32; "rows" is B·T;
// B windows of T positions, C = embedding width, NH heads, A alphabet
// size. Unless an op says otherwise, backward ops ACCUMULATE (+=) into the
// gradients they are given (the caller zeroes them first), which lets
// residual branches share one gradient buffer. Losses are in nats. An op
// given a zero Tensor (Buf == nil) for an optional operand skips it.
// Results must not depend on the number of threads a backend uses, so that
// training is reproducible on one machine whatever its load.
package backend

import (
	"errors"
	"fmt"
)

// Errors of the lifetime methods. Backends wrap them with what was asked
// (errors.Is finds them).
var (
	// ErrOutOfMemory: the backend cannot hold the requested allocation
	// (host memory for the CPU backend, device memory for a GPU backend).
	ErrOutOfMemory = errors.New("out of memory")
	// ErrClosed: the backend has been closed.
	ErrClosed = errors.New("backend closed")
	// ErrFreed: the buffer was freed already.
	ErrFreed = errors.New("buffer already freed")
	// ErrForeign: the buffer or tokens belong to another kind of backend.
	ErrForeign = errors.New("buffer of another backend")
)

// Buffer is float32 storage owned by a backend (host memory for the CPU
// backend, device memory for a GPU backend).
type Buffer interface {
	// Len is the number of float32 elements.
	Len() int
}

// Tensor is the view [Off, Off+Len) of a Buffer. The zero Tensor (Buf
// nil) is "absent".
type Tensor struct {
	Buf      Buffer
	Off, Len int
}

// Whole returns the view of all of b.
func Whole(b Buffer) Tensor { return Tensor{Buf: b, Len: b.Len()} }

// Slice returns the view of elements [off, off+n) of t.
func (t Tensor) Slice(off, n int) Tensor {
	if off < 0 || n < 0 || off+n > t.Len {
		panic(fmt.Sprintf("backend: slice [%d, %d) of a tensor of %d elements", off, off+n, t.Len))
	}
	return Tensor{Buf: t.Buf, Off: t.Off + off, Len: n}
}

// Prefix returns the first n elements of t.
func (t Tensor) Prefix(n int) Tensor { return t.Slice(0, n) }

// Absent reports whether t is the zero Tensor.
func (t Tensor) Absent() bool { return t.Buf == nil }

// Tokens is symbol storage (one byte per symbol) owned by a backend: the
// inputs of a forward pass.
type Tokens interface {
	// Len is the number of symbols.
	Len() int
}

// Activation selects the feed-forward non-linearity.
type Activation int

const (
	// ReLU is max(x, 0).
	ReLU Activation = iota
	// GELU is the exact (erf) GELU x·Φ(x) = ½x(1 + erf(x/√2)).
	GELU
)

// AdamWStep is one AdamW update's hyper-parameters (PyTorch's
// torch.optim.AdamW semantics), for step T = 1, 2, …:
//
//	θ ← θ·(1 − LR·WeightDecay)
//	m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
//	θ ← θ − LR·(m/(1−β1^T)) / (√(v/(1−β2^T)) + ε)
type AdamWStep struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	T                                  int
}

// Backend runs the engine's operations on buffers it owns. Implementations
// are not safe for concurrent use unless they say so; one model's forward
// and backward passes run in order on one goroutine. The results of every
// op must not depend on the number of threads the backend uses
// (bit-identical: backendtest checks it).
type Backend interface {
	// Name identifies the backend and its kernels, e.g. "cpu/avx512".
	Name() string

	// Alloc returns a zeroed buffer of n ≥ 0 float32 elements, or an
	// error: n < 0, ErrOutOfMemory (wrapped) when the backend's memory
	// cannot hold it, ErrClosed after Close.
	Alloc(n int) (Buffer, error)
	// AllocTokens returns symbol storage for n ≥ 0 symbols, or an error
	// as Alloc.
	AllocTokens(n int) (Tokens, error)
	// Free releases b (nil: nothing to do); b, and every Tensor viewing
	// it, must not be used afterwards (an op given one panics). Freeing a
	// buffer twice is an error wrapping ErrFreed, a buffer of another
	// kind of backend one wrapping ErrForeign.
	Free(b Buffer) error
	// FreeTokens releases t as Free releases a buffer.
	FreeTokens(t Tokens) error
	// Close releases the backend: later allocations fail with ErrClosed,
	// and buffers not yet freed must not be used any more (a GPU backend
	// frees them with its device context). Closing twice does nothing.
	Close() error
	// Upload copies src (len = dst.Len) from the host into dst.
	Upload(dst Tensor, src []float32)
	// Download copies src into dst (len = src.Len) on the host.
	Download(dst []float32, src Tensor)
	// UploadTokens copies src into the first len(src) symbols of dst.
	UploadTokens(dst Tokens, src []byte)
	// Zero sets every element of t to 0.
	Zero(t Tensor)
	// Copy sets dst = src (equal lengths, no overlap).
	Copy(dst, src Tensor)

	// EncoderForward: out[b,t,:] = wte[tok[b,t],:] + pos[t,:]; out
	// (B,T,C), wte (A,C), pos (≥T,C).
	EncoderForward(out Tensor, tok Tokens, wte, pos Tensor, B, T, C int)
	// EncoderBackward accumulates dwte[tok[b,t],:] += dout[b,t,:] and,
	// unless dpos is absent, dpos[t,:] += dout[b,t,:].
	EncoderBackward(dwte, dpos, dout Tensor, tok Tokens, B, T, C int)

	// LayerNormForward normalises each row of inp (rows, C): out = (x −
	// mean)·rstd·w + b with rstd = 1/√(var + 1e-5) (biased variance),
	// keeping mean and rstd (rows) for the backward pass.
	LayerNormForward(out, mean, rstd, inp, w, b Tensor, rows, C int)
	// LayerNormBackward accumulates dinp, dw, db from dout: with x̂ the
	// normalised input and g = dout·w, dinp += rstd·(g − mean(g) −
	// x̂·mean(g·x̂)), dw += Σ_rows dout·x̂, db += Σ_rows dout.
	LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd Tensor, rows, C int)

	// MatmulForward: out (rows, OC) = inp (rows, C)·wᵀ + bias, w (OC, C),
	// bias (OC) or absent; out is overwritten.
	MatmulForward(out, inp, w, bias Tensor, rows, C, OC int)
	// MatmulBackward: dinp (rows, C) += dout·w — or, with setDinp, dinp =
	// dout·w (for a dinp with no other contribution, which then need not
	// be zeroed) — dw (OC, C) += doutᵀ·inp, and dbias += Σ_rows dout unless
	// dbias is absent. An absent dinp (the gradient of an input that needs
	// none, e.g. a model's host-computed features) is skipped.
	MatmulBackward(dinp, dw, dbias, dout, inp, w Tensor, rows, C, OC int, setDinp bool)

	// AttentionForward is causal multi-head scaled dot-product attention:
	// qkv (B,T,3C) holds per position the C query, C key and C value
	// entries, head h using entries h·hs..(h+1)·hs−1 of each (hs = C/NH);
	// out (B,T,C) (heads concatenated) row t of head h is Σ_{t2≤t}
	// softmax_{t2≤t}(q_t·k_{t2}/√hs)·v_{t2}. Unless lse is absent
	// (inference) it keeps lse (B,NH,T), each row's log-sum-exp ln Σ_{t2≤t}
	// e^{q_t·k_{t2}/√hs}, from which the backward pass recomputes the
	// weights: no B·NH·T² matrix is kept.
	AttentionForward(out, lse, qkv Tensor, B, T, C, NH int)
	// AttentionBackward sets dqkv (B,T,3C) to the gradient from dout
	// (B,T,C) with the forward's qkv and lse (what dqkv held is not
	// read).
	AttentionBackward(dqkv, dout, qkv, lse Tensor, B, T, C, NH int)
	// AttentionWeights writes the weights of AttentionForward: out
	// (B,NH,T,T), whose row i of window b, head h holds
	// softmax_{j≤i}(q_i·k_j/√hs) in columns j ≤ i and 0 in columns j > i
	// (every row sums to 1). For analysis (attention maps; O(B·NH·T²)
	// memory); training never calls it.
	AttentionWeights(out, qkv Tensor, B, T, C, NH int)

	// ActivationForward: out = act(inp) elementwise.
	ActivationForward(act Activation, out, inp Tensor)
	// ActivationBackward OVERWRITES dinp = dout·act'(inp).
	ActivationBackward(act Activation, dinp, inp, dout Tensor)

	// Add: out = a + b elementwise (out may be a or b); the residual
	// forward, and with out = a the accumulation a += b of residual
	// gradients.
	Add(out, a, b Tensor)

	// CrossEntropyForward sets probs (B,T,A) = softmax(logits) at every
	// position and losses (B,T): losses[b,t] = −ln probs[b,t,tok[b,t+1]]
	// (nats) for t < T−1 and 0 at t = T−1 (no target); it returns the sum
	// of the losses (in float64).
	CrossEntropyForward(probs, losses, logits Tensor, tok Tokens, B, T, A int) float64
	// CrossEntropyBackward OVERWRITES dlogits with the gradient of
	// scale·Σ losses: scale·(probs − onehot(target)) for t < T−1, 0 at
	// t = T−1.
	CrossEntropyBackward(dlogits, probs Tensor, tok Tokens, scale float32, B, T, A int)

	// SumSquares returns Σ t[i]² (float64 accumulation), the square of
	// the global gradient norm.
	SumSquares(t Tensor) float64
	// Scale multiplies every element of t by s (gradient clipping).
	Scale(t Tensor, s float32)
	// AdamW applies one AdamW step to params with grads, updating the
	// moments m and v in place (all of one length).
	AdamW(params, grads, m, v Tensor, h AdamWStep)
}

// HeadSizeLimiter is implemented by a backend whose attention runs head
// sizes (embedding width / heads) up to MaxHeadSize only; a model is
// checked against it when it is made on the backend, before any work.
type HeadSizeLimiter interface {
	MaxHeadSize() int
}

// MemoryReporter is implemented by a backend whose buffers live in memory
// of its own (a GPU's): MemoryAvailable is the number of bytes it can
// still allocate, so callers check a model's needs against it instead of
// the host's memory.
type MemoryReporter interface {
	MemoryAvailable() (int64, error)
}

// AllocTensor returns a zeroed tensor of n elements on be (the whole of a
// fresh buffer).
func AllocTensor(be Backend, n int) (Tensor, error) {
	b, err := be.Alloc(n)
	if err != nil {
		return Tensor{}, err
	}
	return Whole(b), nil
}

// FreeAll frees the buffers behind ts (absent ones and repeats of a
// buffer are skipped) and returns the first error.
func FreeAll(be Backend, ts ...Tensor) error {
	var first error
	for i, t := range ts {
		if t.Buf == nil || seen(ts[:i], t.Buf) {
			continue
		}
		if err := be.Free(t.Buf); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func seen(ts []Tensor, b Buffer) bool {
	for _, t := range ts {
		if t.Buf == b {
			return true
		}
	}
	return false
}

// ToHost returns a host copy of t (an explicit download).
func ToHost(be Backend, t Tensor) []float32 {
	out := make([]float32, t.Len)
	be.Download(out, t)
	return out
}

// FromHost copies src into t (an explicit upload), or returns an error
// naming what when the lengths differ.
func FromHost(be Backend, t Tensor, src []float32, what string) error {
	if len(src) != t.Len {
		return fmt.Errorf("%s: %d values, want %d", what, len(src), t.Len)
	}
	be.Upload(t, src)
	return nil
}
