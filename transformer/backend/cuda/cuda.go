// Package cuda is the engine's NVIDIA GPU backend: backend.Backend on
// device memory, its ops as CUDA kernels (kernels.cu, compiled to PTX for
// compute capability 7.0 and embedded; the driver JIT-compiles it for the
// GPU at hand). It loads the driver library (libcuda.so.1) at run time
// through the driver API, so the vomc binary stays pure Go and needs no CUDA toolkit: on a
// machine without the NVIDIA driver, New returns an error saying so.
//
// Every op is deterministic: no atomics; sums over rows (bias, LayerNorm
// and embedding gradients, split-K matrix products, the gradient norm, the
// loss) are computed in fixed chunks added in order, so a run repeats bit
// for bit on the same GPU. Matrix products and attention are float32
// (FMA on the CUDA cores; no TF32), so results agree with the CPU backend
// to float32 rounding, not bit for bit. Attention is one fused causal
// kernel per pass that never writes the T×T matrix (head size ≤ 128).
//
// Only Linux on amd64 or arm64 (where purego calls C without cgo) can
// load the driver; elsewhere New returns an error.
package cuda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/vomc/vomc/transformer/backend"
)

// Backend is the CUDA backend of one device. Safe for concurrent use:
// every method holds the backend's lock (the device runs one op at a
// time anyway).
type Backend struct {
	mu     sync.Mutex
	d      driver
	name   string
	fns    map[string]kernel
	closed bool
	live   map[*buffer]struct{}
	ltok   map[*tokens]struct{}
	p      *params // Go heap memory does not move: its address stays valid for the driver
	ws     uint64  // workspace (partial sums, split-K products, attention's D)
	wsSize uint64
	host   []float64 // host copy of partial sums
}

// buffer is device memory of n float32 (ptr 0 when n = 0).
type buffer struct {
	be    *Backend
	ptr   uint64
	n     int
	freed bool
}

func (b *buffer) Len() int { return b.n }

// tokens is device memory of n symbols.
type tokens struct {
	be    *Backend
	ptr   uint64
	n     int
	freed bool
}

func (t *tokens) Len() int { return t.n }

// New opens device 0. It fails, with an error naming the cause, when the
// NVIDIA driver cannot be loaded, there is no device, or the kernels do
// not load on it.
func New() (*Backend, error) { return Open(0) }

// Open opens the device of the given ordinal.
func Open(ordinal int) (*Backend, error) {
	d, err := openDriver(ordinal)
	if err != nil {
		return nil, err
	}
	return newBackend(d)
}

// newBackend wraps an opened driver: it loads the kernels' functions.
func newBackend(d driver) (*Backend, error) {
	be := &Backend{d: d, name: "cuda/" + d.device(), fns: map[string]kernel{},
		live: map[*buffer]struct{}{}, ltok: map[*tokens]struct{}{}, p: new(params)}
	for i := range be.p.ptrs {
		be.p.ptrs[i] = uintptr(unsafe.Pointer(&be.p.vals[i]))
	}
	return be, nil
}

// Name is "cuda/" and the device's name.
func (be *Backend) Name() string { return be.name }

// enter takes the backend's lock and makes its context current on this
// goroutine's OS thread (locked to it until exit).
func (be *Backend) enter() {
	be.mu.Lock()
	runtime.LockOSThread()
	if be.closed {
		return
	}
	if err := be.d.enter(); err != nil {
		runtime.UnlockOSThread()
		be.mu.Unlock()
		panic(fmt.Sprintf("cuda: %v", err))
	}
}

func (be *Backend) exit() {
	if !be.closed {
		be.d.exit()
	}
	runtime.UnlockOSThread()
	be.mu.Unlock()
}

// must panics with a CUDA error: ops have no error result, and an error
// there (an illegal address, a lost device) leaves the context unusable.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("cuda: %v", err))
	}
}

// maxBytes bounds an allocation before it is asked of the device (so that
// n·4 cannot overflow).
const maxBytes = 1 << 56

// Alloc returns a zeroed buffer of n float32 in device memory.
func (be *Backend) Alloc(n int) (backend.Buffer, error) {
	be.enter()
	defer be.exit()
	ptr, err := be.devAlloc(n, 4, "Alloc")
	if err != nil {
		return nil, err
	}
	b := &buffer{be: be, ptr: ptr, n: n}
	be.live[b] = struct{}{}
	return b, nil
}

// AllocTokens returns zeroed device storage of n symbols.
func (be *Backend) AllocTokens(n int) (backend.Tokens, error) {
	be.enter()
	defer be.exit()
	ptr, err := be.devAlloc(n, 1, "AllocTokens")
	if err != nil {
		return nil, err
	}
	t := &tokens{be: be, ptr: ptr, n: n}
	be.ltok[t] = struct{}{}
	return t, nil
}

// devAlloc allocates and zeroes n elements of size bytes (entered).
func (be *Backend) devAlloc(n, size int, what string) (uint64, error) {
	if n < 0 {
		return 0, fmt.Errorf("cuda: %s(%d): negative size", what, n)
	}
	if be.closed {
		return 0, fmt.Errorf("cuda: %s(%d): %w", what, n, backend.ErrClosed)
	}
	if n == 0 {
		return 0, nil
	}
	if uint64(n) > maxBytes/uint64(size) {
		return 0, fmt.Errorf("cuda: %s(%d): %w (%d bytes)", what, n, backend.ErrOutOfMemory, uint64(n)*uint64(size))
	}
	bytes := uint64(n) * uint64(size)
	ptr, err := be.d.alloc(bytes)
	if err != nil {
		if errors.Is(err, errDeviceOOM) {
			return 0, fmt.Errorf("cuda: %s(%d): %w of %s (%d bytes)", what, n, backend.ErrOutOfMemory, be.d.device(), bytes)
		}
		return 0, fmt.Errorf("cuda: %s(%d): %w", what, n, err)
	}
	if size == 4 {
		err = be.d.memset32(ptr, 0, uint64(n))
	} else {
		err = be.d.memset8(ptr, 0, bytes)
	}
	if err != nil {
		be.d.free(ptr)
		return 0, fmt.Errorf("cuda: %s(%d): %w", what, n, err)
	}
	return ptr, nil
}

// Free releases b.
func (be *Backend) Free(b backend.Buffer) error {
	if b == nil {
		return nil
	}
	cb, ok := b.(*buffer)
	if !ok || cb.be != be {
		return fmt.Errorf("cuda: Free: %w", backend.ErrForeign)
	}
	be.enter()
	defer be.exit()
	if be.closed {
		return nil // Close released it
	}
	if cb.freed {
		return fmt.Errorf("cuda: Free: %w", backend.ErrFreed)
	}
	cb.freed = true
	delete(be.live, cb)
	if cb.ptr == 0 || be.closed {
		return nil
	}
	return be.d.free(cb.ptr)
}

// FreeTokens releases t.
func (be *Backend) FreeTokens(t backend.Tokens) error {
	if t == nil {
		return nil
	}
	ct, ok := t.(*tokens)
	if !ok || ct.be != be {
		return fmt.Errorf("cuda: FreeTokens: %w", backend.ErrForeign)
	}
	be.enter()
	defer be.exit()
	if be.closed {
		return nil // Close released them
	}
	if ct.freed {
		return fmt.Errorf("cuda: FreeTokens: %w", backend.ErrFreed)
	}
	ct.freed = true
	delete(be.ltok, ct)
	if ct.ptr == 0 || be.closed {
		return nil
	}
	return be.d.free(ct.ptr)
}

// Close frees every buffer still held, the workspace and the context.
func (be *Backend) Close() error {
	be.enter()
	defer be.exit()
	if be.closed {
		return nil
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	keep(be.d.sync())
	for b := range be.live {
		if b.ptr != 0 {
			keep(be.d.free(b.ptr))
		}
		b.freed = true
	}
	for t := range be.ltok {
		if t.ptr != 0 {
			keep(be.d.free(t.ptr))
		}
		t.freed = true
	}
	if be.ws != 0 {
		keep(be.d.free(be.ws))
		be.ws, be.wsSize = 0, 0
	}
	be.d.exit()
	keep(be.d.close())
	be.live, be.ltok = nil, nil
	be.closed = true
	return first
}

// MemoryAvailable is the device memory the backend can still allocate,
// in bytes (the driver's free memory less a margin for its own use and
// the workspace): backend.MemoryReporter.
func (be *Backend) MemoryAvailable() (int64, error) {
	be.enter()
	defer be.exit()
	if be.closed {
		return 0, fmt.Errorf("cuda: %w", backend.ErrClosed)
	}
	free, _, err := be.d.memInfo()
	if err != nil {
		return 0, fmt.Errorf("cuda: device memory of %s: %w", be.d.device(), err)
	}
	const margin = 256 << 20
	if free < margin {
		return 0, nil
	}
	return int64(free - margin), nil
}

// MemInUse is the device memory of the live buffers, tokens and the
// workspace, in bytes.
func (be *Backend) MemInUse() int64 {
	be.mu.Lock()
	defer be.mu.Unlock()
	var n int64
	for b := range be.live {
		n += 4 * int64(b.n)
	}
	for t := range be.ltok {
		n += int64(t.n)
	}
	return n + int64(be.wsSize)
}

// dev returns the device address of t's first element (0 when t is
// absent), panicking on a buffer that is freed, foreign or too short.
// The caller has entered.
func (be *Backend) dev(t backend.Tensor) uint64 {
	if t.Buf == nil {
		return 0
	}
	b, ok := t.Buf.(*buffer)
	if !ok || b.be != be {
		panic("cuda: a tensor of another backend")
	}
	if b.freed || be.closed {
		panic("cuda: use of a freed buffer")
	}
	if t.Off < 0 || t.Len < 0 || t.Off+t.Len > b.n {
		panic(fmt.Sprintf("cuda: view [%d, %d) of a buffer of %d elements", t.Off, t.Off+t.Len, b.n))
	}
	return b.ptr + 4*uint64(t.Off)
}

func (be *Backend) devTok(t backend.Tokens, n int) uint64 {
	ct, ok := t.(*tokens)
	if !ok || ct.be != be {
		panic("cuda: tokens of another backend")
	}
	if ct.freed || be.closed {
		panic("cuda: use of freed tokens")
	}
	if n > ct.n {
		panic(fmt.Sprintf("cuda: %d symbols asked of tokens of %d", n, ct.n))
	}
	return ct.ptr
}

// Upload copies src into dst.
func (be *Backend) Upload(dst backend.Tensor, src []float32) {
	be.enter()
	defer be.exit()
	p := be.dev(dst)
	if len(src) != dst.Len {
		panic(fmt.Sprintf("cuda: Upload of %d values into %d", len(src), dst.Len))
	}
	if len(src) == 0 {
		return
	}
	must(be.d.htod(p, unsafe.Pointer(&src[0]), 4*uint64(len(src))))
	runtime.KeepAlive(src)
}

// Download copies src into dst.
func (be *Backend) Download(dst []float32, src backend.Tensor) {
	be.enter()
	defer be.exit()
	p := be.dev(src)
	if len(dst) != src.Len {
		panic(fmt.Sprintf("cuda: Download of %d values into %d", src.Len, len(dst)))
	}
	if len(dst) == 0 {
		return
	}
	must(be.d.dtoh(unsafe.Pointer(&dst[0]), p, 4*uint64(len(dst))))
	runtime.KeepAlive(dst)
}

// UploadTokens copies src into the first len(src) symbols of dst.
func (be *Backend) UploadTokens(dst backend.Tokens, src []byte) {
	be.enter()
	defer be.exit()
	p := be.devTok(dst, len(src))
	if len(src) == 0 {
		return
	}
	must(be.d.htod(p, unsafe.Pointer(&src[0]), uint64(len(src))))
	runtime.KeepAlive(src)
}

// Zero sets t to 0.
func (be *Backend) Zero(t backend.Tensor) {
	be.enter()
	defer be.exit()
	p := be.dev(t)
	if t.Len == 0 {
		return
	}
	must(be.d.memset32(p, 0, uint64(t.Len)))
}

// Copy sets dst = src.
func (be *Backend) Copy(dst, src backend.Tensor) {
	be.enter()
	defer be.exit()
	pd, ps := be.dev(dst), be.dev(src)
	if dst.Len != src.Len {
		panic(fmt.Sprintf("cuda: Copy of %d values into %d", src.Len, dst.Len))
	}
	if dst.Len == 0 {
		return
	}
	must(be.d.dtod(pd, ps, 4*uint64(dst.Len)))
}

// workspace returns at least bytes of device scratch memory, valid until
// the next call (ops run in order on one stream, so consecutive ops can
// share it). Growing it waits for the kernels that may still use it.
func (be *Backend) workspace(bytes uint64) uint64 {
	if bytes <= be.wsSize {
		return be.ws
	}
	must(be.d.sync())
	if be.ws != 0 {
		must(be.d.free(be.ws))
		be.ws, be.wsSize = 0, 0
	}
	size := max(bytes, 1<<20)
	p, err := be.d.alloc(size)
	if err != nil {
		panic(fmt.Sprintf("cuda: workspace of %d bytes: %v", size, err))
	}
	be.ws, be.wsSize = p, size
	return p
}

// arg kinds of launch
type (
	ptr uint64 // device address
	i32 int32
	i64 int64
)

// launch runs kernel name (loaded on first use) with the arguments, each
// a ptr, i32, i64, float32 or float64. The caller has entered.
func (be *Backend) launch(name string, grid, block [3]uint32, args ...any) {
	k, ok := be.fns[name]
	if !ok {
		var err error
		if k, err = be.d.function(name); err != nil {
			panic(fmt.Sprintf("cuda: kernel %s: %v", name, err))
		}
		be.fns[name] = k
	}
	if len(args) > maxArgs {
		panic("cuda: too many kernel arguments")
	}
	var kinds [maxArgs]byte
	for i, a := range args {
		switch v := a.(type) {
		case ptr:
			be.p.vals[i], kinds[i] = uint64(v), 'p'
		case i32:
			be.p.vals[i], kinds[i] = uint64(uint32(v)), 'i'
		case i64:
			be.p.vals[i], kinds[i] = uint64(v), 'l'
		case float32:
			be.p.vals[i], kinds[i] = uint64(math.Float32bits(v)), 'f'
		case float64:
			be.p.vals[i], kinds[i] = math.Float64bits(v), 'd'
		default:
			panic(fmt.Sprintf("cuda: kernel %s: argument %d of type %T", name, i, a))
		}
	}
	if grid[0] == 0 || grid[1] == 0 || grid[2] == 0 {
		return // nothing to do
	}
	must(be.d.launch(k, grid, block, unsafe.Pointer(&be.p.ptrs[0]), string(kinds[:len(args)])))
	runtime.KeepAlive(be.p)
}

// grid1 is the grid of n threads in blocks of bs.
func grid1(n int, bs int) [3]uint32 {
	return [3]uint32{uint32((n + bs - 1) / bs), 1, 1}
}

var block256 = [3]uint32{256, 1, 1}

// partialSums downloads n double partial sums from dev and adds them in
// order.
func (be *Backend) partialSums(dev uint64, n int) float64 {
	if cap(be.host) < n {
		be.host = make([]float64, n)
	}
	h := be.host[:n]
	must(be.d.dtoh(unsafe.Pointer(&h[0]), dev, 8*uint64(n)))
	s := 0.0
	for _, v := range h {
		s += v
	}
	return s
}

var _ backend.Backend = (*Backend)(nil)
