//go:build linux && (amd64 || arm64)

package cuda

import (
	"testing"

	"github.com/vomc/vomc/transformer"
)

// TestEmulatorPredictBatch: batched prediction on forward-only buffers
// on the emulated device equals the CPU backend's to float32 tolerance.
func TestEmulatorPredictBatch(t *testing.T) {
	be := emuBackend(t)
	small := transformer.DefaultConfig(2, 2, 16, 12, 3)
	noff := small
	noff.FeedForward, noff.LayerNorm = false, false
	for _, cfg := range []transformer.Config{small, noff} {
		comparePredict(t, be, cfg, 1e-5)
	}
}

// TestEmulatorIntervene: an intervened model (every ablation mode, both
// patterns) predicts on the emulated device what it predicts on the CPU
// backend, to float32 tolerance.
func TestEmulatorIntervene(t *testing.T) {
	be := emuBackend(t)
	small := transformer.DefaultConfig(2, 2, 16, 12, 3)
	noff := small
	noff.FeedForward, noff.LayerNorm = false, false
	for _, cfg := range []transformer.Config{small, noff} {
		compareIntervened(t, be, cfg, 1e-5)
	}
}
