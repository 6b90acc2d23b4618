//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/npy"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// gruModule is the tiny GRU factory module of the custom-architecture
// tests (python/tests/models/gru.py).
var gruModule = filepath.Join("..", "..", "python", "tests", "models", "gru.py")

// copyGRU copies gru.py to dir/name and returns its path and SHA-256.
func copyGRU(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	b, err := os.ReadFile(gruModule)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return p, hex.EncodeToString(h[:])
}

// TestTorchCustomArch: 'vomc train --engine torch --arch gru:make' trains a
// module found in the current directory, records its file and hash, and
// is resumed (after an interruption), predicted and evaluated from another
// directory without PYTHONPATH; a changed or vanished module is refused
// naming the recorded file and hash and where the record is.
func TestTorchCustomArch(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	mod, sum := copyGRU(t, p("models"), "gru.py")
	t.Setenv("PYTHONPATH", "")
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "20", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "6", "--out", p("data"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "6", "-N", "32", "--seed", "7", "--out", p("test"))

	// trained from the module's folder, interrupted after a checkpoint
	t.Chdir(p("models"))
	t.Setenv("VOMC_TORCH_TEST_DELAY", "0.05")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trainContext = func() context.Context { return ctx }
	defer func() { trainContext = context.Background }()
	go func() {
		for ctx.Err() == nil {
			if c, err := transformer.LoadCheckpoint(p("gru/" + trainCheckpoint)); err == nil && c.State.Step >= 3 {
				cancel()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	runFail(t, "train", "--engine", "torch", "--device", "cpu", "--arch", "gru:make", "--layers", "1", "-E", "8", "--hidden", "12",
		"--data", p("data"), "--out", p("gru"), "--batch", "8", "--max-steps", "40", "--checkpoint-every", "1", "--lr", "0.01")
	trainContext = context.Background
	os.Unsetenv("VOMC_TORCH_TEST_DELAY")
	c, err := transformer.LoadCheckpoint(p("gru/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelFormat != trainrun.TorchModuleFormat || c.State.Step >= 40 {
		t.Fatalf("interrupted run: checkpoint of a %q model at step %d", c.ModelFormat, c.State.Step)
	}
	var conf struct {
		Arch   string              `json:"arch"`
		Hidden int                 `json:"hidden"`
		Source trainrun.ArchSource `json:"arch_source"`
	}
	if err := json.Unmarshal([]byte(c.ModelConfig), &conf); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(mod)
	if want := (trainrun.ArchSource{Module: "gru", Factory: "make", File: real, Root: filepath.Dir(real), SHA256: sum}); conf.Source != want || conf.Arch != "gru:make" || conf.Hidden != 12 {
		t.Fatalf("recorded %+v (arch %q, hidden %d), want %+v", conf.Source, conf.Arch, conf.Hidden, want)
	}

	// resumed, predicted and evaluated from elsewhere, no PYTHONPATH
	t.Chdir(dir)
	runOK(t, "train", "--out", p("gru"), "--resume")
	if c, err := transformer.LoadCheckpoint(p("gru/" + trainCheckpoint)); err != nil || c.State.Step != 40 {
		t.Fatalf("resumed run: %v, step %d", err, c.State.Step)
	}
	runOK(t, "predict", "--model", p("gru"), "--data", p("test"), "--out", p("gru.npy"), "--device", "cpu")
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,npy:path="+p("gru.npy")+":name=GRU", "--pairs", "GRU,ctw", "--out", p("eval"))
	npyRes, err := os.ReadFile(p("eval/results.json"))
	if err != nil || !strings.Contains(string(npyRes), `"GRU"`) {
		t.Fatalf("results.json without the GRU (%v)", err)
	}
	// evaluated directly (torch:path=): the engine's own predictions, the
	// same numbers as predict's file, and so the npy route's results
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,torch:path="+p("gru")+":name=GRU", "--pairs", "GRU,ctw",
		"--out", p("eval-torch"), "--export", p("export"))
	if b, err := os.ReadFile(p("eval-torch/results.json")); err != nil || !bytes.Equal(withoutLabels(t, b), withoutLabels(t, npyRes)) {
		t.Errorf("torch:path= results differ from npy:path='s (%v)", err)
	}
	want, err := npy.ReadFile(p("gru.npy"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := npy.ReadFile(p("export/GRU.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if want.Descr != "<f4" || !slices.Equal(got.Shape, want.Shape) || !slices.Equal(got.Data, want.Data) {
		t.Errorf("torch:path= distributions (%s %v) differ from vomc predict's (%s %v)", got.Descr, got.Shape, want.Descr, want.Shape)
	}
	// named by the run's --arch and directory without :name=
	runOK(t, "eval", "--data", p("test"), "--methods", "torch:path="+p("gru"), "--out", p("eval-name"))
	if b, _ := os.ReadFile(p("eval-name/results.json")); !strings.Contains(string(b), `"gru:make@gru"`) {
		t.Errorf("torch:path= without a name: %s", b)
	}

	// a changed module, then a vanished one
	b, _ := os.ReadFile(mod)
	os.WriteFile(mod, append(b, "# changed\n"...), 0o644)
	s := captureStderr(t, func() {
		runFail(t, "predict", "--model", p("gru"), "--data", p("test"), "--out", p("x.npy"), "--device", "cpu")
	})
	for _, want := range []string{"has changed since", sum, real, "gru/model.safetensors's metadata"} {
		if !strings.Contains(s, want) {
			t.Errorf("predict with a changed module: %q does not say %q", s, want)
		}
	}
	if s := captureStderr(t, func() { runFail(t, "train", "--out", p("gru"), "--resume") }); !strings.Contains(s, "has changed since") || !strings.Contains(s, "config.json") {
		t.Errorf("resume with a changed module: %q", s)
	}
	s = captureStderr(t, func() {
		runFail(t, "eval", "--data", p("test"), "--methods", "ctw,torch:path="+p("gru"), "--out", p("eval-changed"))
	})
	for _, want := range []string{"has changed since", sum, real, "torch:path="} {
		if !strings.Contains(s, want) {
			t.Errorf("eval with a changed module: %q does not say %q", s, want)
		}
	}
	os.Remove(mod)
	if s := captureStderr(t, func() {
		runFail(t, "predict", "--model", p("gru"), "--data", p("test"), "--out", p("x.npy"), "--device", "cpu")
	}); !strings.Contains(s, "no longer exists") || !strings.Contains(s, real) {
		t.Errorf("predict with a vanished module: %q", s)
	}
	exists(t, p("gru/"+trainModel))
	if _, err := os.Stat(p("x.npy")); err == nil {
		t.Error("a refused predict wrote its output")
	}
}

// withoutLabels is a results.json without its labels (the methods'
// notes, which say where the distributions came from), re-encoded.
func withoutLabels(t *testing.T, b []byte) []byte {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	delete(r["config"].(map[string]any), "labels")
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTorchCustomArchErrors: a module or factory that is not there, a
// module that fails to import (naming the interpreter and VOMC_PYTHON),
// and a custom module on the Go engine are refused before anything is
// written.
func TestTorchCustomArchErrors(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "32", "--seed", "1", "--out", p("data"))
	fail := badTrain(t, p)
	fail("want transformer, lstm or MODULE:FACTORY", nil, "--arch", "gru")
	fail("--arch \"gru:make\" needs --engine torch", nil, "--arch", "gru:make")
	if testing.Short() {
		t.Skip("-short: the rest starts the torch engine")
	}
	needTorch(t)
	mod, _ := copyGRU(t, p("m"), "gru.py")
	os.WriteFile(p("m/broken.py"), []byte("import no_such_package_xyz\n"), 0o644)
	t.Setenv("PYTHONPATH", "")
	torch := []string{"--engine", "torch", "--device", "cpu"}
	fail("no module 'nosuch'", nil, append(torch, "--arch", "nosuch:make")...)
	fail("there is no file", nil, append(torch, "--arch", p("m/nosuch.py")+":make")...)
	fail("has no function 'build'", nil, append(torch, "--arch", mod+":build")...)
	fail("set VOMC_PYTHON to choose another", nil, append(torch, "--arch", p("m/broken.py")+":make")...)
	fail("No module named 'no_such_package_xyz'", nil, append(torch, "--arch", p("m/broken.py")+":make")...)
}

// TestExploreTorchModule: explore refuses a model of a torch-engine
// module saying what it shows and how to compare the model otherwise,
// without a doubled "explore: " prefix.
func TestExploreTorchModule(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "4", "-N", "16", "--seed", "1", "--out", p("data"))
	os.MkdirAll(p("gru"), 0o755)
	f, err := os.Create(p("gru/" + trainModel))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{"format": trainrun.TorchModuleFormat, "config": `{"alphabet":3,"arch":"gru:make"}`}
	if err := safetensors.Write(f, meta, []safetensors.Tensor{{Name: "head.bias", DType: "F32", Shape: []int{3}, Data: make([]byte, 12)}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := captureStderr(t, func() { runFail(t, "explore", "--model", p("gru"), "--data", p("data"), "--static", p("x.html")) })
	for _, want := range []string{"is a PyTorch module of the torch engine (--arch gru:make)", "explore shows vomc transformers", "--methods bayes,ctw,torch:path=" + p("gru")} {
		if !strings.Contains(s, want) {
			t.Errorf("explore of a torch module: %q does not say %q", s, want)
		}
	}
	if strings.Contains(s, "explore: explore:") {
		t.Errorf("doubled prefix: %q", s)
	}
}

// TestEvalTorchNoPython: 'vomc eval --methods torch:path=RUN' with an
// interpreter without torch (VOMC_PYTHON, here a stand-in that answers as
// one would) is refused naming the interpreter, what it lacks and
// VOMC_PYTHON, and writes no output.
func TestEvalTorchNoPython(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "4", "-N", "16", "--seed", "1", "--out", p("data"))
	os.MkdirAll(p("gru"), 0o755)
	f, err := os.Create(p("gru/" + trainModel))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{"format": trainrun.TorchModuleFormat, "config": `{"alphabet":3,"arch":"gru:make"}`}
	if err := safetensors.Write(f, meta, []safetensors.Tensor{{Name: "head.bias", DType: "F32", Shape: []int{3}, Data: make([]byte, 12)}}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	py := p("python-without-torch")
	os.WriteFile(py, []byte("#!/bin/sh\necho \"vomc_torch: cannot import torch (No module named 'torch'): install it\" >&2\nexit 4\n"), 0o755)
	t.Setenv("VOMC_PYTHON", py)
	s := captureStderr(t, func() {
		runFail(t, "eval", "--data", p("data"), "--methods", "ctw,torch:path="+p("gru"), "--out", p("eval"))
	})
	for _, want := range []string{"torch:path=" + p("gru"), "VOMC_PYTHON=" + py + " tried", py + ": No module named 'torch'"} {
		if !strings.Contains(s, want) {
			t.Errorf("eval without torch: %q does not say %q", s, want)
		}
	}
	if _, err := os.Stat(p("eval/results.json")); err == nil {
		t.Error("a refused eval wrote its results")
	}
}
