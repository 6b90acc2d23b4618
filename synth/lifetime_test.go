package synth

import (
	"errors"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestAllocationErrorsAndFree checks that a backend out of memory gives
// errors from FromParamsOn and AllocActivations (not panics), and that
// Activations.Free returns the memory.
func TestAllocationErrorsAndFree(t *testing.T) {
	cfg := Config{Variant: TF20, A: 3, D: 2, Context: 16}.withDefaults()
	pb := int64(4 * cfg.NumParams())
	if _, err := NewOn(cpu.New(kernels.Default(), cpu.WithMemoryLimit(pb-4)), cfg, 1); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("NewOn beyond the memory: %v, want ErrOutOfMemory", err)
	}
	be := cpu.New(kernels.Default(), cpu.WithMemoryLimit(pb+1<<20))
	m, err := NewOn(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.AllocActivations(512, 16, true); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("AllocActivations beyond the memory: %v, want ErrOutOfMemory", err)
	}
	if be.InUse() != pb {
		t.Fatalf("InUse %d after a failed allocation, want %d", be.InUse(), pb)
	}
	a, err := m.AllocActivations(4, 16, true)
	if err != nil {
		t.Fatal(err)
	}
	if be.InUse() <= pb {
		t.Fatalf("InUse %d with activations", be.InUse())
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if be.InUse() != pb {
		t.Fatalf("InUse %d after Free, want %d", be.InUse(), pb)
	}
}
