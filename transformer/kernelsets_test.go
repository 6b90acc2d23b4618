package transformer

import (
	"math"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestKernelSetsTrainingLosses trains the same model from the same
// initialisation on the same batches with every kernel set this CPU runs
// and checks that each step's loss equals the portable set's to float32
// tolerance (relative 1e-4: the sets sum in different orders, and the
// differences grow slowly over training). Sets that cannot run here are
// reported as skipped.
func TestKernelSetsTrainingLosses(t *testing.T) {
	cfg := DefaultConfig(2, 2, 32, 64, 3)
	P := [][]float64{{0.8, 0.1, 0.1}, {0.2, 0.3, 0.5}, {0.6, 0.3, 0.1}}
	windows, _, _ := markovWindows(P, 64, cfg.Context, 5)
	train := func(set string) []float64 {
		ks, err := kernels.Lookup(set)
		if err != nil {
			t.Fatal(err)
		}
		m, err := NewOn(cpu.New(ks), cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		tc := DefaultTrainConfig()
		tc.BatchSize, tc.Epochs, tc.Seed, tc.LR, tc.WarmupSteps = 8, 3, 4, 3e-3, 2
		tr, err := NewTrainer(m, tc, windows, nil)
		if err != nil {
			t.Fatal(err)
		}
		var losses []float64
		inputs := make([]byte, tc.BatchSize*cfg.Context)
		for s := 0; s+tc.BatchSize <= len(windows)*tc.Epochs; s += tc.BatchSize {
			for i := 0; i < tc.BatchSize; i++ {
				copy(inputs[i*cfg.Context:], windows[(s+i)%len(windows)])
			}
			loss, _ := tr.TrainStep(inputs, tc.BatchSize)
			losses = append(losses, loss)
		}
		return losses
	}
	want := train("portable")
	for _, info := range kernels.Sets() {
		if info.Name == "portable" {
			continue
		}
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			got := train(info.Name)
			worst := 0.0
			for i := range want {
				d := math.Abs(got[i]-want[i]) / want[i]
				worst = math.Max(worst, d)
				if d > 1e-4 {
					t.Fatalf("step %d: loss %.9g, portable set %.9g", i, got[i], want[i])
				}
			}
			t.Logf("%d steps, first loss %.6f, last %.6f, worst relative difference from portable %.2g", len(want), want[0], want[len(want)-1], worst)
		})
	}
}
