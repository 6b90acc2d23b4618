package dynamics

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
	"github.com/vomc/vomc/transformer/trainrun"
)

// TestRunBackend: Run loads the snapshots on the backend it is given.
func TestRunBackend(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: 4, NK: 16, N: 16, Fresh: true, Seed: 1}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(data, false); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Dir(trainrun.SnapshotPath(run, 5)), 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := transformer.New(transformer.DefaultConfig(1, 1, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(trainrun.SnapshotPath(run, 5)); err != nil {
		t.Fatal(err)
	}
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<10))
	_, err = Run(context.Background(), RunConfig{Run: run, Data: data, Windows: 4, Backend: small, HeadWindows: -1})
	if !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 1 KiB backend: %v, want out of memory", err)
	}
	if _, err := Run(context.Background(), RunConfig{Run: run, Data: data, Windows: 4, Backend: cpu.New(kernels.Default()), HeadWindows: -1}); err != nil {
		t.Fatal(err)
	}
}
