package trainrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestGoEngineBackend: the Go engine trains on the backend it is given
// (a backend that holds 4 KiB makes training fail with out of memory),
// and on a roomy one trains as on its own.
func TestGoEngineBackend(t *testing.T) {
	meta := testData(t, "0", "")
	base := t.TempDir()
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(4<<10))
	if _, err := GoEngine(small).Train(context.Background(), trainOptions(meta, filepath.Join(base, "small"))); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 4 KiB backend: %v, want out of memory", err)
	}
	be := cpu.New(kernels.Default())
	s, err := GoEngine(be).Train(context.Background(), trainOptions(meta, filepath.Join(base, "given")))
	if err != nil {
		t.Fatal(err)
	}
	if s.Step != 6 {
		t.Errorf("trained %d steps", s.Step)
	}
}

// TestNoDefaultBackend: the run driver makes no backend of its own (issue
// 46, item 3): NewEngine refuses a spec without its CPU backend, and an
// engine without a backend refuses to train before anything is written.
func TestNoDefaultBackend(t *testing.T) {
	for _, s := range []Spec{{}, {Name: EngineTorch}, {Backend: "cpu"}} {
		if _, err := NewEngine(s); !errors.Is(err, transformer.ErrNoBackend) {
			t.Errorf("NewEngine(%+v): %v, want ErrNoBackend", s, err)
		}
	}
	meta := testData(t, "0", "")
	dir := filepath.Join(t.TempDir(), "run")
	for _, e := range []*Engine{nil, GoEngine(nil), TorchEngine(&Torch{}, nil)} {
		if _, err := e.Train(context.Background(), trainOptions(meta, dir)); !errors.Is(err, transformer.ErrNoBackend) {
			t.Errorf("%s engine without a backend: %v, want ErrNoBackend", e.Name(), err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s engine without a backend wrote %s", e.Name(), dir)
		}
	}
}
