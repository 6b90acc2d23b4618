package trainrun

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

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
