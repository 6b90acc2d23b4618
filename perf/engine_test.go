package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

func TestParseTrainBenches(t *testing.T) {
	for _, tc := range []struct {
		list   string
		names  []string
		config bool // the error is a *ConfigError
	}{
		{"C1, c2", []string{"C1", "C2"}, false},
		{"L=1:H=2:E=8:N=16:B=4", []string{"L=1:H=2:E=8:N=16:B=4"}, false},
		{"C1,C9", nil, true},
		{"L=1:H=1:E=8:N=16:B=100000000", nil, true},
		{"L=2:H=8:E=4096:N=65536:B=64", nil, false}, // too big for memory on the Go engine
	} {
		if big := transformer.DefaultConfig(2, 8, 4096, 65536, 3); strings.HasPrefix(tc.list, "L=2:H=8:E=4096") &&
			float64(sysmem.Available()) > big.TrainingBytes(64, 65536, kernels.Default()) {
			continue // this machine has the memory
		}
		bs, err := ParseTrainBenches(tc.list, trainrun.GoEngine(cpu.NewDefault()))
		var ce *ConfigError
		if tc.names == nil {
			if err == nil || errors.As(err, &ce) != tc.config {
				t.Errorf("%q: %v (config error %v)", tc.list, err, tc.config)
			}
			continue
		}
		if err != nil || len(bs) != len(tc.names) {
			t.Fatalf("%q: %v, %v", tc.list, bs, err)
		}
		for i, b := range bs {
			if b.Name != tc.names[i] {
				t.Errorf("%q: configuration %d is %q, want %q", tc.list, i, b.Name, tc.names[i])
			}
		}
	}
	// the torch engine checks no host memory
	if _, err := ParseTrainBenches("L=2:H=8:E=4096:N=65536:B=64", trainrun.TorchEngine(&trainrun.Torch{}, nil)); err != nil {
		t.Errorf("torch engine: %v", err)
	}
}

// TestBenchEngineGo times a tiny model on the Go engine and prints it
// both ways.
func TestBenchEngineGo(t *testing.T) {
	bs, err := ParseTrainBenches("L=1:H=2:E=8:N=16:B=4", trainrun.GoEngine(cpu.NewDefault()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := BenchEngine(context.Background(), trainrun.GoEngine(cpu.NewDefault()), bs, EngineBenchOptions{Steps: 2, Warmup: 1, Threads: 1, Seed: 1})
	if err != nil || len(r.Go) != 1 || r.Env != nil || r.Go[0].Threads != 1 || r.Go[0].Steps != 2 {
		t.Fatalf("%+v, %v", r, err)
	}
	var table, js bytes.Buffer
	if err := r.Write(&table, false); err != nil || !strings.Contains(table.String(), "kernel set") || !strings.Contains(table.String(), "L=1 H=[2] E=8 N=16") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
	var reps []TrainReport
	if err := r.Write(&js, true); err != nil || json.Unmarshal(js.Bytes(), &reps) != nil || len(reps) != 1 || reps[0].Batch != 4 {
		t.Errorf("JSON (%v):\n%s", err, js.String())
	}
}

// TestEngineBenchTorchTable prints torch reports (no torch needed).
func TestEngineBenchTorchTable(t *testing.T) {
	rep := func(mode string, tps float64, f map[string]any) trainrun.TorchBench {
		return trainrun.TorchBench{Mode: mode, Batch: 4, Params: 100, MeanStep: 0.5, TokensPerSec: tps, Features: f}
	}
	r := &EngineBench{Env: &trainrun.TorchEnv{PythonVersion: "3.11", Torch: "2.1", Device: "cuda", GPU: "H100"},
		Torch: []TorchTrainRow{{"C1", transformer.DefaultConfig(2, 4, 64, 256, 3), []trainrun.TorchBench{
			rep("engine", 300, map[string]any{"amp": "bf16", "sdpa": true, "tf32": false}), rep("plain", 100, nil)}}}}
	var b bytes.Buffer
	if err := r.Write(&b, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"device cuda (H100)", "amp=bf16,sdpa", "none (float32, explicit attention)", "C1     engine / plain eager float32: 3.00×"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestFeatures(t *testing.T) {
	for _, tc := range []struct {
		f    map[string]any
		want string
	}{
		{nil, "none (float32, explicit attention)"},
		{map[string]any{"amp": "off", "sdpa": false}, "none (float32, explicit attention)"},
		{map[string]any{"compile": true, "amp": "bf16", "fused_adamw": true, "other": true}, "amp=bf16,fused_adamw,compile"},
	} {
		if got := features(tc.f); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.f, got, tc.want)
		}
	}
}

// TestModelLogits: the logits of a saved model, its run directory and
// bad inputs.
func TestModelLogits(t *testing.T) {
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(1, 1, 8, 4, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.SaveSafetensors(filepath.Join(dir, trainrun.ModelFile)); err != nil {
		t.Fatal(err)
	}
	l, err := ModelLogits(cpu.NewDefault(), dir, "0, 2,1")
	if err != nil || len(l.Logits) != 3 || len(l.Logits[0]) != 3 || l.Input[1] != 2 || l.Config.Embed != 8 {
		t.Fatalf("%+v, %v", l, err)
	}
	b, err := l.JSON()
	if err != nil || !bytes.HasPrefix(b, []byte(`{"config":{`)) || !bytes.Contains(b, []byte(`"input":[0,2,1],"logits":[[`)) || b[len(b)-1] != '\n' {
		t.Errorf("JSON %s, %v", b, err)
	}
	for in, want := range map[string]string{"0,3": `input: "3" is not a symbol of 0..2`, "0,1,2,0,1": "input has 5 symbols, the model's context is N=4"} {
		_, err := ModelLogits(cpu.NewDefault(), filepath.Join(dir, trainrun.ModelFile), in)
		var ie *InputError
		if !errors.As(err, &ie) || err.Error() != want {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if _, err := ModelLogits(cpu.NewDefault(), filepath.Join(dir, "none"), "0"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing model: %v", err)
	}
}
