package dynamics

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestRunBackend: Run loads the snapshots on the backend it is given.
func TestRunBackend(t *testing.T) {
	data, run := testRun(t, t.TempDir(), 4, transformer.DefaultConfig(1, 1, 8, 16, 3), 5)
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<10))
	_, err := Run(context.Background(), RunConfig{Run: run, Data: data, Windows: 4, Backend: small, HeadWindows: -1})
	if !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 1 KiB backend: %v, want out of memory", err)
	}
	if _, err := Run(context.Background(), RunConfig{Run: run, Data: data, Windows: 4, Backend: cpu.New(kernels.Default()), HeadWindows: -1}); err != nil {
		t.Fatal(err)
	}
	// no backend of its own (issue 46, item 3)
	if _, err := Run(context.Background(), RunConfig{Run: run, Data: data, Windows: 4, HeadWindows: -1}); !errors.Is(err, transformer.ErrNoBackend) {
		t.Errorf("no backend: %v, want transformer.ErrNoBackend", err)
	}
}

// testRun writes, under dir, a test set of K fresh windows of N = 16 from
// the depth-2 prior (data) and a run directory with a snapshot of a new
// model of configuration c at each of steps (run), the i-th seeded i+1.
func testRun(t *testing.T, dir string, K int, c transformer.Config, steps ...int) (data, run string) {
	t.Helper()
	data, run = filepath.Join(dir, "data"), filepath.Join(dir, "run")
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: K, NK: 16, N: 16, Fresh: true, Seed: 1}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(data, false); err != nil {
		t.Fatal(err)
	}
	for i, step := range steps {
		p := trainrun.SnapshotPath(run, step)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		m, err := transformer.NewOn(cpu.NewDefault(), c, uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SaveSafetensors(p); err != nil {
			t.Fatal(err)
		}
	}
	return data, run
}
