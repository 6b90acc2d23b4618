//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestEvalMemoryTF compares the peak memory of `vomc eval` of a
// transformer at the paper's width and context (E=128, 8 heads, N=1536;
// 2 layers) with its estimate, which counts per worker the model's
// forward-only buffers and its batch's distributions.
func TestEvalMemoryTF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 8, 128, 1536, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "tf.safetensors")
	if err := m.SaveSafetensors(model); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "test")
	const K, N = 8, 1536
	runOK(t, "data", "-A", "3", "-D", "3", "-K", "8", "-N", "1536", "--out", data)
	spec := "tf:path=" + model
	est := experiment.EvalMemoryEstimate(methods.MustParse(spec), K*N+4*K, methods.Workload{A: 3, D: 3, Windows: K, N: N, Workers: 2})
	within2(t, "eval tf E=128 N=1536, 8 windows, 2 workers", est,
		peakOf(t, "eval", "--data", data, "--methods", spec, "--workers", "2", "--force", "--out", filepath.Join(dir, "out")))
}
