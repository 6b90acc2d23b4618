package experiment

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestRunEvalBackend: a tf method's model is built on EvalOptions.Backend.
func TestRunEvalBackend(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: 4, NK: 16, N: 16, Fresh: true, Seed: 1}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(p("ds"), false); err != nil {
		t.Fatal(err)
	}
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(1, 2, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(p("m.safetensors")); err != nil {
		t.Fatal(err)
	}
	o := EvalOptions{Data: p("ds"), Methods: methods.MustParse("ctw,tf:path=" + p("m.safetensors")), Out: p("small"),
		Backend: cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<10))}
	if _, err := RunEval(context.Background(), o); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 1 KiB backend: %v, want out of memory", err)
	}
	o.Out, o.Backend = p("roomy"), cpu.New(kernels.Default())
	if _, err := RunEval(context.Background(), o); err != nil {
		t.Fatal(err)
	}
}
