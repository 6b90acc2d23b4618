package reproduce

import (
	"context"
	"errors"
	"testing"

	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestOptionsBackend: the study's transformers and TF 2-0 models are
// built on the Go backend of Options.Engine, chosen by the caller: on a backend that holds
// 4 KiB their training stages fail with out of memory (with a backend of
// their own they would not).
func TestOptionsBackend(t *testing.T) {
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 20, 20, 2
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(4<<10))
	for _, stage := range []string{results.TrainStageName(study.Model{Spec: "2", Heads: []int{2}, FF: true, LN: true}, 0), "synth-tf20"} {
		out := t.TempDir()
		opts := Options{Out: out, Version: "test", CodeKey: "test", Events: testLog(t), Engine: trainrun.GoEngine(small)}
		for _, dep := range []string{results.StageTrainData, results.StageTestData} {
			if _, err := RunStage(context.Background(), cfg, opts, dep); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := RunStage(context.Background(), cfg, opts, stage); !errors.Is(err, backend.ErrOutOfMemory) {
			t.Errorf("%s on a 4 KiB backend: %v, want out of memory", stage, err)
		}
	}
}

// testEngine is the engine of the tests' runs: the Go engine on a CPU
// backend, chosen here as a command chooses it (no library makes one).
var testEngine = trainrun.GoEngine(cpu.NewDefault())
