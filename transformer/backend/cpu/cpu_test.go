package cpu_test

import (
	"testing"

	"github.com/vomc/vomc/transformer/backend/backendtest"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestConformance runs the backend conformance suite on the CPU backend
// with every kernel set; sets this machine cannot run are reported as
// skipped.
func TestConformance(t *testing.T) {
	prev := kernels.Active()
	defer kernels.Use(prev)
	for _, info := range kernels.Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			if err := kernels.Use(info.Name); err != nil {
				t.Fatal(err)
			}
			backendtest.Run(t, cpu.New())
		})
	}
}
