package methods

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestTFBackend: a tf method's model is loaded on Defaults.Backend.
func TestTFBackend(t *testing.T) {
	m, err := transformer.New(transformer.DefaultConfig(1, 2, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.SaveSafetensors(file); err != nil {
		t.Fatal(err)
	}
	d := Defaults{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, Backend: cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<10))}
	if _, err := Build("tf:path="+file, d); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 1 KiB backend: %v, want out of memory", err)
	}
	d.Backend = cpu.New(kernels.Default())
	if _, err := Build("tf:path="+file, d); err != nil {
		t.Fatal(err)
	}
}
