package cuda

import (
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/backendtest"
)

// openGPU opens device 0, or skips the test (no driver, no GPU) saying
// why.
func openGPU(t *testing.T) *Backend {
	t.Helper()
	be, err := New()
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	return be
}

// TestConformance runs the backend conformance suite on the GPU.
func TestConformance(t *testing.T) {
	openGPU(t).Close()
	backendtest.Run(t, func() (backend.Backend, error) { return New() })
}

// gpuConfigs are the architectures compared with the CPU: full models,
// attention-only, ReLU with sinusoidal positions, and head sizes 8 to 64
// (every attention instance).
func gpuConfigs() []transformer.Config {
	c1 := transformer.DefaultConfig(2, 4, 64, 256, 3)
	attn := transformer.DefaultConfig(2, 4, 64, 256, 3)
	attn.FeedForward, attn.LayerNorm = false, false
	sin := transformer.DefaultConfig(2, 8, 64, 200, 5)
	sin.Positional, sin.Activation = transformer.Sinusoidal, transformer.ReLU
	wide := transformer.DefaultConfig(3, 1, 64, 130, 3)
	wide.Heads = []int{1, 2, 8}
	big := transformer.DefaultConfig(1, 1, 128, 100, 4)
	return []transformer.Config{c1, attn, sin, wide, big}
}

// TestTrainingMatchesCPU: from the same initial parameters and batches,
// 50 training steps on the GPU give the CPU backend's losses to float32
// tolerance.
func TestTrainingMatchesCPU(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	compareTraining(t, be, 50, 1e-4, gpuConfigs(), 8)
}

// TestDeterministic: two identical training runs on the GPU give
// bit-identical losses and gradient norms.
func TestDeterministic(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	cfg := gpuConfigs()[0]
	l1, g1 := trainLosses(t, be, cfg, 8, 20)
	l2, g2 := trainLosses(t, be, cfg, 8, 20)
	for i := range l1 {
		if l1[i] != l2[i] || g1[i] != g2[i] {
			t.Fatalf("step %d: loss %v vs %v, gradient norm %v vs %v", i+1, l1[i], l2[i], g1[i], g2[i])
		}
	}
}
