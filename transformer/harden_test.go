package transformer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// craftModel writes a model file whose metadata config is cfgJSON and
// whose tensors are ts (a valid checksum: the attacker writes it too).
func craftModel(t *testing.T, cfgJSON string, ts []safetensors.Tensor) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, map[string]string{"format": safetensorsFormat, "config": cfgJSON}, ts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// heapGrowth runs f and returns the bytes it allocated.
func heapGrowth(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestCraftedModelMetadata: the crafted configs of the audit (embed 2^31,
// embed = context = 65536, 3 million layers, …) are refused with a
// message naming the problem, without a panic and without allocating in
// proportion to the claimed sizes.
func TestCraftedModelMetadata(t *testing.T) {
	small := DefaultConfig(1, 1, 4, 8, 3)
	m, _ := NewOn(cpu.NewDefault(), small, 1)
	var good bytes.Buffer
	if err := m.WriteSafetensors(&good); err != nil {
		t.Fatal(err)
	}
	_, goodTs, err := safetensors.Read(bytes.NewReader(good.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	withCfg := func(f func(c *Config)) string {
		c := small
		c.Heads = append([]int(nil), c.Heads...)
		f(&c)
		return c.String()
	}
	threeM := `{"layers":3000000,"heads":[` + strings.Repeat("1,", 2999999) + `1],"embed":4,"context":8,"alphabet":3,"feed_forward":true,"layer_norm":true,"activation":"gelu","positional":"learned"}`
	for _, tc := range []struct {
		name, cfg string
		ts        []safetensors.Tensor
		want      string
	}{
		{"embed 2^31", withCfg(func(c *Config) { c.Embed = 1 << 31 }), goodTs, "embedding dimension 2147483648 outside 1..65536"},
		{"embed = context = 65536", withCfg(func(c *Config) { c.Embed, c.Context = 65536, 65536 }), goodTs, "parameters"},
		{"context 2^40", withCfg(func(c *Config) { c.Context = 1 << 40 }), goodTs, "context length 1099511627776 outside"},
		{"3 million layers", threeM, goodTs, "header of 6001584 bytes exceeds the limit of 4194304"},
		{"100000 layers", strings.Replace(threeM[:len(`{"layers":3000000,"heads":[`)+200000], "3000000", "100000", 1), goodTs, "config metadata of 200026 bytes, longer than the limit"},
		{"negative layers", withCfg(func(c *Config) { c.Layers, c.Heads = -1, nil }), goodTs, "layers outside"},
		{"1024 layers, tiny file", withCfg(func(c *Config) {
			c.Layers, c.Heads = 1024, make([]int, 1024)
			for i := range c.Heads {
				c.Heads[i] = 1
			}
		}), goodTs, "the file has 18 tensors, its config (L=1024) has 12294"},
		{"embed 4096, small tensors", withCfg(func(c *Config) { c.Embed = 4096 }), goodTs, "want F32 [3 4096]"},
		{"wrong dtype", small.String(), append([]safetensors.Tensor{{Name: "wte", DType: "F64", Shape: []int{3, 2}, Data: make([]byte, 48)}}, goodTs[1:]...), "tensor wte is F64 [3 2], want F32 [3 4]"},
		{"missing tensor", small.String(), goodTs[1:], "the file has 17 tensors, its config (L=1) has 18"},
		{"renamed tensor", small.String(), append([]safetensors.Tensor{{Name: "wtf", DType: "F32", Shape: []int{3, 4}, Data: goodTs[0].Data}}, goodTs[1:]...), "no tensor wte"},
		{"sinusoidal table of 2^36 floats", `{"layers":0,"heads":[],"embed":65536,"context":1048576,"alphabet":3,"activation":"gelu","positional":"sinusoidal"}`,
			[]safetensors.Tensor{{Name: "wte", DType: "F32", Shape: []int{3, 65536}, Data: make([]byte, 4*3*65536)},
				{Name: "head.weight", DType: "F32", Shape: []int{3, 65536}, Data: make([]byte, 4*3*65536)},
				{Name: "head.bias", DType: "F32", Shape: []int{3}, Data: make([]byte, 12)}},
			"loading a model of 393219 parameters, context N=1048576, E=65536 needs ≈"},
		{"bad activation", withCfg(func(c *Config) { c.Activation = "tanh" }), goodTs, "activation"},
		{"not json", "{", goodTs, "transformer: config: unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := craftModel(t, tc.cfg, tc.ts)
			p := filepath.Join(t.TempDir(), "model.safetensors")
			os.WriteFile(p, in, 0o644)
			var err1, err2 error
			grew := heapGrowth(func() {
				_, err1 = ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(in))
				_, err2 = LoadSafetensorsOn(cpu.NewDefault(), p)
			})
			for _, err := range []error{err1, err2} {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v, want one containing %q", err, tc.want)
				}
			}
			if err2 != nil && !strings.HasPrefix(err2.Error(), p+": ") {
				t.Errorf("error %v does not name the file", err2)
			}
			if limit := 32*uint64(len(in)) + 2<<20; grew > limit {
				t.Errorf("allocated %d bytes for a file of %d", grew, len(in))
			}
		})
	}
}

// TestConfigBounds: Validate's upper bounds, and size estimates that do
// not overflow whatever the batch.
func TestConfigBounds(t *testing.T) {
	ok := DefaultConfig(MaxLayers, 1, 8, 16, 3)
	if err := ok.Validate(); err != nil {
		t.Errorf("L = MaxLayers refused: %v", err)
	}
	big := DefaultConfig(1, 1, MaxEmbed, 16, 3) // 12·2^32 > MaxParams
	if err := big.Validate(); err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("E = MaxEmbed: %v", err)
	}
	c := DefaultConfig(2, 2, 8, 16, 3)
	for _, cc := range []Config{c, {Layers: 1, Heads: []int{2}, Embed: 8, Context: 5, Alphabet: 4, Activation: ReLU, Positional: Sinusoidal},
		{Layers: 3, Heads: []int{2, 1, 2}, Embed: 4, Context: 5, Alphabet: 2, LayerNorm: true, Activation: ReLU, Positional: Learned}} {
		if got, want := cc.paramCount(), float64(cc.NumParams()); got != want {
			t.Errorf("%v: paramCount %g, NumParams %g", cc, got, want)
		}
		if got, want := cc.numTensors(), len(cc.Layout()); got != want {
			t.Errorf("%v: numTensors %d, Layout has %d", cc, got, want)
		}
	}
	if b := c.TrainingBytes(MaxBatch, MaxContext, kernels.Default()); math.IsNaN(b) || b < 1e12 {
		t.Errorf("TrainingBytes(MaxBatch, MaxContext, kernels.Default()) = %g", b)
	}
	if b := c.TrainingBytes(math.MaxInt, math.MaxInt, kernels.Default()); !math.IsInf(b, 1) {
		t.Errorf("TrainingBytes(MaxInt, MaxInt, kernels.Default()) = %g, want +Inf", b)
	}
}

// TestTrainConfigValidate: every field against its meaning.
func TestTrainConfigValidate(t *testing.T) {
	if err := DefaultTrainConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		set   func(c *TrainConfig)
	}{
		{"lr", func(c *TrainConfig) { c.LR = math.NaN() }},
		{"lr", func(c *TrainConfig) { c.LR = math.Inf(1) }},
		{"lr", func(c *TrainConfig) { c.LR = -1 }},
		{"min_lr", func(c *TrainConfig) { c.MinLR = 5 }},
		{"min_lr", func(c *TrainConfig) { c.MinLR = -1e-9 }},
		{"clip_norm", func(c *TrainConfig) { c.ClipNorm = -1 }},
		{"clip_norm", func(c *TrainConfig) { c.ClipNorm = math.NaN() }},
		{"weight_decay", func(c *TrainConfig) { c.WeightDecay = -5 }},
		{"lr", func(c *TrainConfig) { c.WeightDecay = 1000 }},
		{"lr", func(c *TrainConfig) { c.LR = 1e3 }},
		{"warmup_steps", func(c *TrainConfig) { c.WarmupSteps = -3 }},
		{"epochs", func(c *TrainConfig) { c.Epochs = -1 }},
		{"epochs", func(c *TrainConfig) { c.Epochs = 0 }},
		{"max_steps", func(c *TrainConfig) { c.MaxSteps = -1 }},
		{"batch_size", func(c *TrainConfig) { c.BatchSize = 0 }},
		{"batch_size", func(c *TrainConfig) { c.BatchSize = MaxBatch + 1 }},
		{"beta1", func(c *TrainConfig) { c.Beta1 = 1 }},
		{"beta2", func(c *TrainConfig) { c.Beta2 = -0.1 }},
		{"eps", func(c *TrainConfig) { c.Eps = 0 }},
		{"patience", func(c *TrainConfig) { c.Patience = -1 }},
		{"log_every", func(c *TrainConfig) { c.LogEvery = -1 }},
	} {
		c := DefaultTrainConfig()
		tc.set(&c)
		err := c.Validate()
		var fe *TrainConfigError
		if !errors.As(err, &fe) || fe.Option != tc.field {
			t.Errorf("%+v: error %v, want one about %s", c, err, tc.field)
		}
	}
	train, _, _ := markovWindows(testChain, 8, 8, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 8, 3), 1)
	bad := DefaultTrainConfig()
	bad.LR = math.NaN()
	if _, err := NewTrainer(m, bad, train, nil); err == nil {
		t.Error("NewTrainer accepted lr NaN")
	}
}

// TestDivergence: a learning rate that blows the model up stops Run with
// a DivergedError before the bad update: the parameters stay finite and
// the last checkpoint saved is the one from before.
func TestDivergence(t *testing.T) {
	train, _, _ := markovWindows(testChain, 32, 8, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 8, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.LR, tc.MinLR, tc.WeightDecay, tc.ClipNorm = 4, 50, 0, 1e30, 0, 0, 0
	tr, err := NewTrainer(m, tc, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	saved := -1
	tr.CheckpointEvery = 1
	tr.OnCheckpoint = func() error { saved = tr.Step; return nil }
	_, err = tr.Run(context.Background())
	var de *DivergedError
	if !errors.As(err, &de) {
		t.Fatalf("Run: %v, want a DivergedError", err)
	}
	if de.Step != tr.Step || saved > tr.Step || !strings.Contains(err.Error(), fmt.Sprintf("training diverged at step %d", tr.Step+1)) {
		t.Errorf("%v: trainer at step %d, last checkpoint at %d", err, tr.Step, saved)
	}
	for i, v := range m.HostParams() {
		if math.IsNaN(float64(v)) {
			t.Fatalf("parameter %d is NaN after the diverged step", i)
		}
	}
	for _, e := range tr.History {
		if _, err := json.Marshal(e); err != nil {
			t.Errorf("log entry %+v: %v", e, err)
		}
	}
}

// TestModelIntegrity: bit flips anywhere in a model file, trailing junk
// and truncation are refused; a file without a checksum (an earlier
// version's) loads with a warning.
func TestModelIntegrity(t *testing.T) {
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 2, 4, 6, 3), 2)
	var buf bytes.Buffer
	m.WriteSafetensors(&buf)
	in := buf.Bytes()
	if _, err := ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 8*len(in); k += 7 { // every 7th bit: 1/7 of all flips
		b := bytes.Clone(in)
		b[k/8] ^= 1 << (k % 8)
		if _, err := ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(b)); err == nil {
			t.Errorf("flip of bit %d of byte %d accepted", k%8, k/8)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "m.safetensors")
	os.WriteFile(p, append(bytes.Clone(in), "junk"...), 0o644)
	if _, err := LoadSafetensorsOn(cpu.NewDefault(), p); err == nil || !strings.Contains(err.Error(), "trailing junk after the data section: 4 extra bytes") || !strings.Contains(err.Error(), p) {
		t.Errorf("trailing junk: %v", err)
	}
	if _, err := ReadSafetensorsOn(cpu.NewDefault(), bytes.NewReader(append(bytes.Clone(in), "junk"...))); err == nil || !strings.Contains(err.Error(), "trailing junk") {
		t.Errorf("trailing junk (stream): %v", err)
	}
	// An earlier version's file: the same without the checksum key.
	old := stripChecksum(t, in)
	var warned []string
	defer func(f func(string, ...any)) { safetensors.Warnf = f }(safetensors.Warnf)
	safetensors.Warnf = func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }
	os.WriteFile(p, old, 0o644)
	m2, err := LoadSafetensorsOn(cpu.NewDefault(), p)
	if err != nil || len(warned) != 1 || !strings.Contains(warned[0], p+" has no checksum") {
		t.Fatalf("old file: %v, warnings %q", err, warned)
	}
	if fmt.Sprint(m2.HostParams()) != fmt.Sprint(m.HostParams()) {
		t.Error("old file loads other parameters")
	}
}

// stripChecksum rewrites a safetensors file without its checksum key, as
// vomc wrote files before checksums.
func stripChecksum(t *testing.T, in []byte) []byte {
	t.Helper()
	n := int(uint64(in[0]) | uint64(in[1])<<8 | uint64(in[2])<<16 | uint64(in[3])<<24)
	var hdr map[string]json.RawMessage
	if err := json.Unmarshal(in[8:8+n], &hdr); err != nil {
		t.Fatal(err)
	}
	var md map[string]string
	json.Unmarshal(hdr[safetensors.MetadataKey], &md)
	delete(md, safetensors.ChecksumKey)
	hdr[safetensors.MetadataKey], _ = json.Marshal(md)
	h, _ := json.Marshal(hdr)
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := []byte{byte(len(h)), byte(len(h) >> 8), byte(len(h) >> 16), byte(len(h) >> 24), 0, 0, 0, 0}
	return append(append(out, h...), in[8+n:]...)
}

// TestCheckpointIntegrity: flips, junk, missing checksum and crafted
// states in checkpoints are refused with messages; LoadCheckpointWith
// allowUnverified reads an earlier version's checkpoint.
func TestCheckpointIntegrity(t *testing.T) {
	train, _, _ := markovWindows(testChain, 16, 8, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 8, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 4, 1
	tr, err := NewTrainer(m, tc, train, train[:4])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteCheckpoint(&buf, map[string]string{"data": "/d"}); err != nil {
		t.Fatal(err)
	}
	in := buf.Bytes()
	if _, err := ReadCheckpoint(bytes.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 8*len(in); k += 97 {
		b := bytes.Clone(in)
		b[k/8] ^= 1 << (k % 8)
		if _, err := ReadCheckpoint(bytes.NewReader(b)); err == nil {
			t.Errorf("flip of bit %d of byte %d accepted", k%8, k/8)
		}
	}
	if _, err := ReadCheckpoint(bytes.NewReader(append(bytes.Clone(in), 0))); err == nil || !strings.Contains(err.Error(), "trailing junk") {
		t.Errorf("trailing junk: %v", err)
	}
	old := stripChecksum(t, in)
	p := filepath.Join(t.TempDir(), "checkpoint.safetensors")
	os.WriteFile(p, old, 0o644)
	if _, err := LoadCheckpoint(p); !errors.Is(err, ErrNoChecksum) || !strings.Contains(err.Error(), p) {
		t.Errorf("no checksum: %v", err)
	}
	if c, err := LoadCheckpointWith(p, true); err != nil || c.State.Step != tr.Step {
		t.Errorf("no checksum, allowed: %v", err)
	}
	// Crafted states (with valid checksums).
	rewrite := func(key string, f func(v map[string]any)) []byte {
		h, err := safetensors.ReadHeader(bytes.NewReader(in), 0, int64(len(in)))
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := h.ReadData(bytes.NewReader(in[h.Size-h.DataSize:]))
		var v map[string]any
		json.Unmarshal([]byte(h.Meta[key]), &v)
		f(v)
		b, _ := json.Marshal(v)
		h.Meta[key] = string(b)
		var out bytes.Buffer
		if err := safetensors.Write(&out, h.Meta, ts); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	for _, tc := range []struct {
		name, key string
		f         func(v map[string]any)
		want      string
	}{
		{"lr -1", "train_config", func(v map[string]any) { v["lr"] = -1 }, "train_config: transformer: lr -1: want"},
		{"batch 0", "train_config", func(v map[string]any) { v["batch_size"] = 0 }, "batch_size 0: want"},
		{"index past the data", "state", func(v map[string]any) { v["index"] = 1000 }, "window index 1000 outside 0..15"},
		{"index at the end", "state", func(v map[string]any) { v["index"] = 16 }, "window index 16 outside 0..15"},
		{"targets", "state", func(v map[string]any) { v["epoch_targets"] = 5 }, "5 targets this epoch"},
		{"negative step", "state", func(v map[string]any) { v["step"] = -5 }, "step -5"},
		{"epoch past the end", "state", func(v map[string]any) { v["epoch"] = 7 }, "epoch 7 outside 0..1"},
		{"window too long", "state", func(v map[string]any) { v["window_len"] = 100 }, "windows of 100 symbols"},
		{"no training windows", "state", func(v map[string]any) { v["train_windows"] = 0 }, "0 training windows"},
		{"NaN loss", "state", func(v map[string]any) { v["epoch_loss"] = "NaN" }, "epoch_loss NaN"},
		{"negative best", "state", func(v map[string]any) { v["best_val"] = -1 }, "best validation loss -1"},
		{"embed 2^31", "config", func(v map[string]any) { v["embed"] = 1 << 31 }, "embedding dimension 2147483648"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := rewrite(tc.key, tc.f)
			_, err := ReadCheckpoint(bytes.NewReader(b))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestTrainingBytesVsPeak: TrainingBytes is within 2× of the heap peak
// measured over training steps, a validation pass and a checkpoint, on
// small models.
func TestTrainingBytesVsPeak(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		B, T int
	}{
		{DefaultConfig(2, 4, 32, 32, 3), 16, 32},
		{DefaultConfig(1, 2, 64, 64, 3), 8, 64},
		{DefaultConfig(4, 2, 16, 16, 4), 32, 16},
	} {
		train, _, _ := markovWindows(testChain, 2*c.B, c.T, 1)
		val := train[:c.B]
		// Two collections empty the kernels' sync.Pools (the second clears
		// their victim caches), so that the packing scratch a previous
		// case left pooled is not in the base but counted when this model
		// allocates it.
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, peak := ms.HeapAlloc, uint64(0)
		sample := func() {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base {
				peak = max(peak, ms.HeapAlloc-base)
			}
		}
		m, _ := NewOn(cpu.NewDefault(), c.cfg, 1)
		tc := DefaultTrainConfig()
		tc.BatchSize, tc.Epochs = c.B, 2
		tr, err := NewTrainer(m, tc, train, val)
		if err != nil {
			t.Fatal(err)
		}
		tr.OnStep = func(int, float64) { sample() }
		tr.OnCheckpoint = func() error { return tr.WriteCheckpoint(sampleWriter(sample), nil) }
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		sample()
		est := c.cfg.TrainingBytes(c.B, c.T, kernels.Default())
		t.Logf("%v B=%d T=%d: estimate %.0f KiB, measured peak %.0f KiB (ratio %.2f)", c.cfg.String(), c.B, c.T, est/1024, float64(peak)/1024, est/float64(peak))
		if est < float64(peak)/2 || est > 2*float64(peak) {
			t.Errorf("estimate %.0f bytes, peak %d: not within 2×", est, peak)
		}
		runtime.KeepAlive(tr)
	}
}

// sampleWriter discards what is written and calls sample on every write.
type sampleWriter func()

func (s sampleWriter) Write(p []byte) (int, error) { s(); return len(p), nil }
