// Package cpu is the CPU backend of the transformer engine: buffers are
// host []float32 slices, GEMMs and vector operations come from the kernel
// set the backend is made with (transformer/kernels: AVX-512, AVX2, NEON or
// portable Go; New takes it as a value, NewDefault uses kernels.Default,
// the start-up choice of CPU features or VOMC_KERNELS), and parallel work
// runs on the kernels' goroutine pool. Every result is independent of the
// number of goroutines, so training is bit-reproducible on one machine.
package cpu

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/kernels"
)

// Backend is the CPU backend. It is safe for concurrent use (the ops of
// one model's pass run in order; different passes on different buffers
// may run at once). The zero value is not usable: use New.
type Backend struct {
	ks     *kernels.Set
	kern   kernels.Kernel // the GEMM: ks's, parallel over GOMAXPROCS, unless WithGemm
	fused  bool           // attention of head size 16 by ks's fused kernels (HasAttention16), unless WithGemm or WithoutFusedAttention
	limit  int64          // bytes; 0: none
	inUse  atomic.Int64   // bytes of live allocations
	closed atomic.Bool
}

var _ backend.Backend = (*Backend)(nil)

// An Option configures New.
type Option func(*Backend)

// WithGemm makes the backend's GEMM k instead of the set's (the vector
// kernels stay the set's), also for attention (no fused attention
// kernels): for tests comparing GEMMs.
func WithGemm(k kernels.Kernel) Option { return func(be *Backend) { be.kern, be.fused = k, false } }

// WithoutFusedAttention makes attention of head size 16 use the GEMM and
// vector kernels, as other head sizes do, instead of the set's fused
// kernels (kernels.Set.HasAttention16): for tests and benchmarks that
// compare the two.
func WithoutFusedAttention() Option { return func(be *Backend) { be.fused = false } }

// WithMemoryLimit makes Alloc and AllocTokens fail with
// backend.ErrOutOfMemory when the live allocations (not freed, not yet
// collected) would exceed bytes (≤ 0: no limit), as a GPU's memory would.
func WithMemoryLimit(bytes int64) Option { return func(be *Backend) { be.limit = max(bytes, 0) } }

// New returns a CPU backend running the kernel set ks (non-nil; e.g.
// kernels.Best(), kernels.Lookup(name) or kernels.FromEnv(), chosen once
// by the caller).
func New(ks *kernels.Set, opts ...Option) *Backend {
	if ks == nil {
		panic("cpu.New: nil kernel set")
	}
	be := &Backend{ks: ks, kern: ks.GEMM(0), fused: ks.HasAttention16()}
	for _, o := range opts {
		o(be)
	}
	return be
}

// NewDefault returns New(kernels.Default()): the backend of callers that
// are not given one.
func NewDefault() *Backend { return New(kernels.Default()) }

// Kernels returns the backend's kernel set.
func (be *Backend) Kernels() *kernels.Set { return be.ks }

// Name returns "cpu/" and the kernel set's name.
func (be *Backend) Name() string { return "cpu/" + be.ks.Name() }

// InUse returns the bytes of the backend's live allocations: allocated,
// not freed, not yet garbage-collected.
func (be *Backend) InUse() int64 { return be.inUse.Load() }

// buffer is host storage (a pointer, so that tensors compare by identity).
// owner is the backend that accounts for it (nil for Wrap); stop cancels
// the accounting cleanup.
type buffer struct {
	data  []float32
	freed bool
	alloc
}

func (b *buffer) Len() int { return len(b.data) }

// tokens is host symbol storage.
type tokens struct {
	data  []byte
	freed bool
	alloc
}

func (t *tokens) Len() int { return len(t.data) }

// alloc is the accounting of one allocation.
type alloc struct {
	owner *Backend
	bytes int64
	stop  func()
}

// maxBytes bounds one allocation: beyond the Go heap's address space.
const maxBytes = 1 << 46

// bigBytes is the size from which an allocation is checked against the
// memory the system has available (sysmem.Available).
const bigBytes = 1 << 30

// reserve accounts for an allocation of n elements of size bytes each
// and returns its bytes, or why it cannot be made.
func (be *Backend) reserve(n int, size int64, what string) (int64, error) {
	if be.closed.Load() {
		return 0, fmt.Errorf("cpu backend: %s of %d: %w", what, n, backend.ErrClosed)
	}
	if n < 0 {
		return 0, fmt.Errorf("cpu backend: %s of %d elements", what, n)
	}
	if int64(n) > maxBytes/size {
		return 0, fmt.Errorf("cpu backend: %s of %d elements: %w", what, n, backend.ErrOutOfMemory)
	}
	bytes := int64(n) * size
	if bytes >= bigBytes {
		if avail := sysmem.Available(); avail > 0 && bytes > avail {
			return 0, fmt.Errorf("cpu backend: %s of %s, %s available: %w", what, sysmem.GiB(float64(bytes)), sysmem.GiB(float64(avail)), backend.ErrOutOfMemory)
		}
	}
	used := be.inUse.Add(bytes)
	if be.limit > 0 && used > be.limit {
		be.inUse.Add(-bytes)
		return 0, fmt.Errorf("cpu backend: %s of %d bytes with %d of %d in use: %w", what, bytes, used-bytes, be.limit, backend.ErrOutOfMemory)
	}
	return bytes, nil
}

// track registers the release of a's bytes when obj is collected without
// being freed.
func track[T any](be *Backend, obj *T, a *alloc, bytes int64) {
	*a = alloc{owner: be, bytes: bytes}
	if bytes == 0 {
		return
	}
	c := runtime.AddCleanup(obj, func(n int64) { be.inUse.Add(-n) }, bytes)
	a.stop = c.Stop
}

// release undoes the accounting of a (at Free).
func (a *alloc) release() {
	if a.owner == nil {
		return
	}
	if a.stop != nil {
		a.stop()
	}
	a.owner.inUse.Add(-a.bytes)
}

// Alloc implements backend.Backend.
func (be *Backend) Alloc(n int) (backend.Buffer, error) {
	bytes, err := be.reserve(n, 4, "allocation")
	if err != nil {
		return nil, err
	}
	b := &buffer{data: make([]float32, n)}
	track(be, b, &b.alloc, bytes)
	return b, nil
}

// AllocTokens implements backend.Backend.
func (be *Backend) AllocTokens(n int) (backend.Tokens, error) {
	bytes, err := be.reserve(n, 1, "token allocation")
	if err != nil {
		return nil, err
	}
	t := &tokens{data: make([]byte, n)}
	track(be, t, &t.alloc, bytes)
	return t, nil
}

// Free implements backend.Backend. The buffer may come from any CPU
// backend (or Wrap).
func (be *Backend) Free(b backend.Buffer) error {
	if b == nil {
		return nil
	}
	buf, ok := b.(*buffer)
	if !ok {
		return fmt.Errorf("cpu backend: free of a %T: %w", b, backend.ErrForeign)
	}
	if buf.freed {
		return fmt.Errorf("cpu backend: free of a buffer: %w", backend.ErrFreed)
	}
	buf.freed, buf.data = true, nil
	buf.release()
	return nil
}

// FreeTokens implements backend.Backend.
func (be *Backend) FreeTokens(t backend.Tokens) error {
	if t == nil {
		return nil
	}
	tk, ok := t.(*tokens)
	if !ok {
		return fmt.Errorf("cpu backend: free of %T: %w", t, backend.ErrForeign)
	}
	if tk.freed {
		return fmt.Errorf("cpu backend: free of tokens: %w", backend.ErrFreed)
	}
	tk.freed, tk.data = true, nil
	tk.release()
	return nil
}

// Close implements backend.Backend: later allocations fail with
// backend.ErrClosed; host buffers not freed are left to the garbage
// collector.
func (be *Backend) Close() error {
	be.closed.Store(true)
	return nil
}

// Wrap returns a buffer of this backend that IS data (no copy): the
// caller's writes to data are the buffer's contents. Freeing it only
// detaches it.
func Wrap(data []float32) backend.Buffer { return &buffer{data: data} }

// f32 returns the host slice of t; nil for an absent tensor.
func f32(t backend.Tensor) []float32 {
	if t.Buf == nil {
		return nil
	}
	b, ok := t.Buf.(*buffer)
	if !ok {
		panic(fmt.Sprintf("cpu backend: a tensor of another backend (%T)", t.Buf))
	}
	if b.freed {
		panic("cpu backend: use of a freed buffer")
	}
	return b.data[t.Off : t.Off+t.Len]
}

// Host returns the host slice behind t (no copy) when t is a CPU-backend
// tensor; ok is false otherwise. For code paths that run only on the CPU
// backend (tests).
func Host(t backend.Tensor) (s []float32, ok bool) {
	if b, isCPU := t.Buf.(*buffer); isCPU && !b.freed {
		return b.data[t.Off : t.Off+t.Len], true
	}
	return nil, false
}

func toks(t backend.Tokens, n int) []byte {
	b, ok := t.(*tokens)
	if !ok {
		panic(fmt.Sprintf("cpu backend: tokens of another backend (%T)", t))
	}
	if b.freed {
		panic("cpu backend: use of freed tokens")
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

// Zero implements backend.Backend (in parallel chunks).
func (be *Backend) Zero(t backend.Tensor) {
	zero(f32(t))
}

// Copy implements backend.Backend (in parallel chunks).
func (be *Backend) Copy(dst, src backend.Tensor) {
	copyVec(f32(dst), f32(src))
}

// EncoderForward implements backend.Backend.
func (be *Backend) EncoderForward(out backend.Tensor, tok backend.Tokens, wte, pos backend.Tensor, B, T, C int) {
	encoderForward(f32(out), toks(tok, B*T), f32(wte), f32(pos), B, T, C)
}

// EncoderBackward implements backend.Backend.
func (be *Backend) EncoderBackward(dwte, dpos, dout backend.Tensor, tok backend.Tokens, B, T, C int) {
	encoderBackward(be.ks, f32(dwte), f32(dpos), f32(dout), toks(tok, B*T), B, T, C)
}

// LayerNormForward implements backend.Backend.
func (be *Backend) LayerNormForward(out, mean, rstd, inp, w, b backend.Tensor, rows, C int) {
	layernormForward(be.ks, f32(out), f32(mean), f32(rstd), f32(inp), f32(w), f32(b), rows, C)
}

// LayerNormBackward implements backend.Backend.
func (be *Backend) LayerNormBackward(dinp, dw, db, dout, inp, w, mean, rstd backend.Tensor, rows, C int) {
	layernormBackward(be.ks, f32(dinp), f32(dw), f32(db), f32(dout), f32(inp), f32(w), f32(mean), f32(rstd), rows, C)
}

// MatmulForward implements backend.Backend.
func (be *Backend) MatmulForward(out, inp, w, bias backend.Tensor, rows, C, OC int) {
	matmulForward(be.ks, be.kern, f32(out), f32(inp), f32(w), f32(bias), rows, C, OC)
}

// MatmulBackward implements backend.Backend.
func (be *Backend) MatmulBackward(dinp, dw, dbias, dout, inp, w backend.Tensor, rows, C, OC int, setDinp bool) {
	beta := float32(1)
	if setDinp {
		beta = 0
	}
	matmulBackwardBeta(be.ks, be.kern, beta, f32(dinp), f32(dw), f32(dbias), f32(dout), f32(inp), f32(w), rows, C, OC)
}

// AttentionForward implements backend.Backend.
func (be *Backend) AttentionForward(out, lse, qkv backend.Tensor, B, T, C, NH int) {
	attentionForward(be.ks, be.kern, be.fused, f32(out), f32(lse), f32(qkv), B, T, C, NH)
}

// AttentionBackward implements backend.Backend.
func (be *Backend) AttentionBackward(dqkv, dout, qkv, lse backend.Tensor, B, T, C, NH int) {
	attentionBackward(be.ks, be.kern, be.fused, f32(dqkv), f32(dout), f32(qkv), f32(lse), B, T, C, NH)
}

// AttentionWeights implements backend.Backend.
func (be *Backend) AttentionWeights(out, qkv backend.Tensor, B, T, C, NH int) {
	attentionWeights(be.ks, be.kern, f32(out), f32(qkv), B, T, C, NH)
}

// ActivationForward implements backend.Backend.
func (be *Backend) ActivationForward(act backend.Activation, out, inp backend.Tensor) {
	if act == backend.ReLU {
		reluForward(f32(out), f32(inp))
		return
	}
	geluForward(be.ks, f32(out), f32(inp))
}

// ActivationBackward implements backend.Backend.
func (be *Backend) ActivationBackward(act backend.Activation, dinp, inp, dout backend.Tensor) {
	if act == backend.ReLU {
		reluBackwardSet(f32(dinp), f32(inp), f32(dout))
		return
	}
	geluBackwardSet(be.ks, f32(dinp), f32(inp), f32(dout))
}

// Add implements backend.Backend (in parallel chunks).
func (be *Backend) Add(out, a, b backend.Tensor) {
	addVec(be.ks, f32(out), f32(a), f32(b))
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

// Scale implements backend.Backend (in parallel chunks).
func (be *Backend) Scale(t backend.Tensor, s float32) {
	scaleVec(f32(t), s)
}

// AdamW implements backend.Backend (the update of backend.AdamWStep,
// bias corrections in float64), in parallel chunks of 4096 parameters.
func (be *Backend) AdamW(params, grads, m, v backend.Tensor, h backend.AdamWStep) {
	p, g, mm, vv := f32(params), f32(grads), f32(m), f32(v)
	adamW(p, g[:len(p)], mm[:len(p)], vv[:len(p)], h)
}
