package perf

import (
	"context"
	"errors"
	"testing"

	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestBenchEngineBackend: the Go engine's benchmark runs on the engine's
// backend (one holding 4 KiB fails with out of memory) and reports it.
func TestBenchEngineBackend(t *testing.T) {
	bs, err := ParseTrainBenches("L=1:H=2:E=8:N=16:B=4", trainrun.GoEngine(cpu.NewDefault()))
	if err != nil {
		t.Fatal(err)
	}
	o := EngineBenchOptions{Steps: 1, Warmup: 0, Threads: 1, Seed: 1}
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(4<<10))
	if _, err := BenchEngine(context.Background(), trainrun.GoEngine(small), bs, o); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 4 KiB backend: %v, want out of memory", err)
	}
	portable, err := kernels.Lookup("portable")
	if err != nil {
		t.Fatal(err)
	}
	r, err := BenchEngine(context.Background(), trainrun.GoEngine(cpu.New(portable)), bs, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Go[0].Backend; got != "cpu/portable" {
		t.Errorf("reported backend %q, want cpu/portable", got)
	}
}

// TestNoDefaultBackend: the benchmarks make no backend of their own
// (issue 46, item 3): given none, BenchTrain (also with its op profile)
// is transformer.ErrNoBackend.
func TestNoDefaultBackend(t *testing.T) {
	b, err := ParseTrainBench("L=1:H=2:E=8:N=16:B=4")
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []bool{false, true} {
		if _, err := benchTrain(nil, b, 1, 0, 1, profile); !errors.Is(err, transformer.ErrNoBackend) {
			t.Errorf("profile %v, no backend: %v, want transformer.ErrNoBackend", profile, err)
		}
	}
}
