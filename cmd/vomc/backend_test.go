package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/backend/cuda"
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

// TestBackendFlag: --backend is checked before any output; a CUDA device
// that cannot be opened is an error of train, bench train and eval with a
// method whose model runs on the backend (tf, synth; on this machine when
// it has no GPU), and eval without one (ctw, construct) refuses a
// --backend other than cpu, which would have no effect (issue 46: a flag
// that is accepted takes effect).
func TestBackendFlag(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "2", "-D", "1", "-K", "4", "-N", "16", "--out", p("ds"))
	for _, args := range [][]string{
		{"train", "--backend", "gpu", "--data", p("ds"), "--out", p("t1")},
		{"train", "--backend", "cuda:x", "--data", p("ds"), "--out", p("t2")},
		{"train", "--engine", "torch", "--backend", "cuda", "--data", p("ds"), "--out", p("t3")},
		{"bench", "train", "--backend", "tpu"},
		{"eval", "--backend", "gpu", "--data", p("ds"), "--methods", "ctw", "--out", p("e1")},
	} {
		if code := run(args); code != 2 {
			t.Errorf("vomc %s: exit %d, want 2 (usage)", strings.Join(args, " "), code)
		}
	}
	for _, d := range []string{"t1", "t2", "t3", "e1"} {
		if _, err := os.Stat(p(d)); err == nil {
			t.Errorf("%s was written by a command with a bad --backend", d)
		}
	}
	// ctw and construct do not run on a backend: --backend cuda would do
	// nothing, and is refused
	if code, out := stderrOf(t, "eval", "--backend", "cuda", "--data", p("ds"), "--methods", "ctw,construct", "--out", p("e2")); code != 2 || !strings.Contains(out, `--backend "cuda" has no effect`) {
		t.Errorf("eval --backend cuda --methods ctw,construct: exit %d\n%s", code, out)
	}
	runOK(t, "eval", "--backend", "cpu", "--data", p("ds"), "--methods", "ctw,construct", "--out", p("e2"))
	// a synth method's model runs on the backend (as a tf method's)
	sm, err := synth.NewOn(cpu.NewDefault(), synth.Config{Variant: synth.TF20, A: 2, D: 1, Context: 16}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sm.Save(p("synth.safetensors")); err != nil {
		t.Fatal(err)
	}
	synthMethod := "ctw,synth:path=" + p("synth.safetensors")
	runOK(t, "eval", "--data", p("ds"), "--methods", synthMethod, "--out", p("e3"))
	if be, err := cuda.New(); err == nil {
		be.Close()
		t.Log("a CUDA device is present: not checking the error path")
		return
	}
	runFail(t, "train", "--backend", "cuda", "--data", p("ds"), "--out", p("t4"), "--max-steps", "1", "-E", "8", "--heads", "1")
	runFail(t, "eval", "--backend", "cuda", "--data", p("ds"), "--methods", synthMethod, "--out", p("e4"))
	for _, d := range []string{"t4", "e4"} {
		if _, err := os.Stat(p(d)); err == nil {
			t.Errorf("%s was written by a command with --backend cuda and no device", d)
		}
	}
}
