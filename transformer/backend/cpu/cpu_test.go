package cpu_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/backendtest"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestConformance runs the backend conformance suite on the CPU backend
// with every kernel set; sets this machine cannot run are reported as
// skipped.
func TestConformance(t *testing.T) {
	for _, info := range kernels.Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			ks, err := kernels.Lookup(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			backendtest.Run(t, func() (backend.Backend, error) { return cpu.New(ks), nil })
		})
	}
}

// TestKernelSetIsAField checks that two CPU backends with different
// kernel sets coexist, each naming and using its own.
func TestKernelSetIsAField(t *testing.T) {
	p, err := kernels.Lookup("portable")
	if err != nil {
		t.Fatal(err)
	}
	a, b := cpu.New(p), cpu.New(kernels.Best())
	if a.Name() != "cpu/portable" || a.Kernels() != p || b.Kernels() != kernels.Best() {
		t.Fatalf("names %s, %s", a.Name(), b.Name())
	}
	if d := cpu.NewDefault(); d.Kernels() != kernels.Default() {
		t.Fatalf("NewDefault uses %s, Default is %s", d.Name(), kernels.Default().Name())
	}
	if !panicked(func() { cpu.New(nil) }) {
		t.Fatal("cpu.New(nil) did not panic")
	}
}

func panicked(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// TestMemoryLimit checks the accounting of live allocations: a backend
// with a limit refuses what does not fit (ErrOutOfMemory), takes it again
// once enough is freed, and counts tokens; InUse follows Alloc and Free.
func TestMemoryLimit(t *testing.T) {
	be := cpu.New(kernels.Best(), cpu.WithMemoryLimit(1000))
	a, err := be.Alloc(200) // 800 bytes
	if err != nil {
		t.Fatal(err)
	}
	if be.InUse() != 800 {
		t.Fatalf("InUse %d after 800 bytes", be.InUse())
	}
	if _, err := be.Alloc(51); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("Alloc over the limit: %v", err)
	}
	if be.InUse() != 800 {
		t.Fatalf("InUse %d after a refused allocation", be.InUse())
	}
	tok, err := be.AllocTokens(200)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := be.AllocTokens(1); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("AllocTokens over the limit: %v", err)
	}
	if err := be.Free(a); err != nil {
		t.Fatal(err)
	}
	if err := be.FreeTokens(tok); err != nil {
		t.Fatal(err)
	}
	if be.InUse() != 0 {
		t.Fatalf("InUse %d after freeing everything", be.InUse())
	}
	b, err := be.Alloc(250)
	if err != nil {
		t.Fatalf("Alloc after Free: %v", err)
	}
	if _, ok := cpu.Host(backend.Whole(b)); !ok {
		t.Fatal("Host of a live buffer")
	}
	if err := be.Free(b); err != nil {
		t.Fatal(err)
	}
	if _, ok := cpu.Host(backend.Whole(b)); ok {
		t.Fatal("Host of a freed buffer")
	}
	// a wrapped host slice is not accounted for; freeing it detaches it
	w := cpu.Wrap(make([]float32, 10))
	if err := be.Free(w); err != nil || be.InUse() != 0 {
		t.Fatalf("Free of a wrapped buffer: %v, InUse %d", err, be.InUse())
	}
}

// TestCollectedBuffersAreReleased checks that buffers dropped without
// Free stop counting once the garbage collector has taken them.
func TestCollectedBuffersAreReleased(t *testing.T) {
	be := cpu.New(kernels.Best(), cpu.WithMemoryLimit(4<<20))
	for i := 0; i < 10; i++ { // 10 × 256 KiB
		if _, err := be.Alloc(1 << 16); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 20 && be.InUse() > 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if be.InUse() != 0 {
		t.Fatalf("InUse %d after the buffers were collected", be.InUse())
	}
	if _, err := be.Alloc(1 << 20); err != nil {
		t.Fatalf("Alloc of the whole limit: %v", err)
	}
}
