package transformer

import (
	"runtime"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestTrainingIndependentOfGOMAXPROCS checks that a few training steps
// give bit-identical parameters for 1, 2, 3 and 7 goroutines: every
// parallel split (GEMM tiles, attention (b,h) pairs, LayerNorm and GELU
// chunks) fixes each result's summation order.
func TestTrainingIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	cfg := DefaultConfig(2, 4, 64, 100, 3)
	B, T := 8, 100
	x := randomInputs(3, B*T, 3)
	train := sliceWindows{}
	for i := 0; i < B; i++ {
		train = append(train, x[i*T:(i+1)*T])
	}
	var want []float32
	for _, procs := range []int{1, 2, 3, 7} {
		runtime.GOMAXPROCS(procs)
		m, err := NewOn(cpu.NewDefault(), cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		tc := DefaultTrainConfig()
		tc.BatchSize = B
		tr, err := NewTrainer(m, tc, train, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			tr.TrainStep(x, B)
		}
		if want == nil {
			want = append([]float32(nil), liveParams(m)...)
			continue
		}
		for i, v := range liveParams(m) {
			if v != want[i] {
				t.Fatalf("GOMAXPROCS=%d: parameter %d = %v, with 1: %v", procs, i, v, want[i])
			}
		}
	}
}

// TestBackwardReusesBuffers checks that a backward pass on reused
// activations (after a pass on other inputs, with other B and T) gives
// bit-identically the gradient of one on fresh activations: every
// gradient buffer that zeroBufs does not clear must be overwritten.
func TestBackwardReusesBuffers(t *testing.T) {
	cfgs := tinyConfigs()
	big := DefaultConfig(2, 4, 32, 60, 5)
	for _, act := range []string{GELU, ReLU} {
		c := big
		c.Activation = act
		cfgs = append(cfgs, c)
	}
	for ci, cfg := range cfgs {
		m := randomModel(t, cfg, uint64(ci+7), 0.3)
		B, T := 3, cfg.Context
		x1 := randomInputs(uint64(ci+50), B*T, cfg.Alphabet)
		x2 := randomInputs(uint64(ci+60), B*T, cfg.Alphabet)
		grad := func(acts *Activations, x []byte, B, T int) []float32 {
			m.Forward(acts, x, B, T)
			g := make([]float32, len(liveParams(m)))
			m.Backward(acts, hostTensor(g), 0.1)
			return g
		}
		reused := m.NewActivations(B, T, true)
		grad(reused, x1, B, T)
		grad(reused, x2[:2*(T-1)], 2, T-1)
		got := grad(reused, x2, B, T)
		want := grad(m.NewActivations(B, T, true), x2, B, T)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: gradient %d with reused buffers %v, fresh %v", cfg, i, got[i], want[i])
			}
		}
	}
}
