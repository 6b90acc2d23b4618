package main

import (
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestComputeChosenOnce: every command gets the same backend, the CPU
// backend with the kernel set of VOMC_KERNELS.
func TestComputeChosenOnce(t *testing.T) {
	a, b := compute(), compute()
	if a != b {
		t.Fatal("two backends")
	}
	c, ok := a.(*cpu.Backend)
	if !ok || c.Kernels() != kernels.Default() {
		t.Fatalf("backend %T %v, want the CPU backend with %s", a, a.Name(), kernels.Default().Name())
	}
}
