package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestTrainFlagChecks: bad flags of 'vomc train' are refused with a
// message naming the flag, before any output is written.
func TestTrainFlagChecks(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "1", "-K", "12", "-N", "16", "--NK", "64", "--fresh=false", "--seed", "1", "--out", p("train"))
	common := []string{"--data", p("train"), "--layers", "1", "--heads", "2", "-E", "8", "--batch", "8", "--epochs", "1", "--out", p("run")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr", "NaN"}, "--lr NaN: want a finite number"},
		{[]string{"--lr", "Inf"}, "--lr +Inf: want a finite number"},
		{[]string{"--lr", "-1"}, "--lr -1: want"},
		{[]string{"--lr", "1e3"}, "--lr 1000 with --wd 0.01: want lr·wd < 1"},
		{[]string{"--clip", "-1"}, "--clip -1: want"},
		{[]string{"--wd", "-5"}, "--wd -5: want"},
		{[]string{"--warmup", "-3"}, "--warmup -3: want ≥ 0"},
		{[]string{"--min-lr", "5"}, "--min-lr 5: want"},
		{[]string{"--epochs", "-1"}, "--epochs -1: want"},
		{[]string{"--max-steps", "-1"}, "--max-steps -1: want"},
		{[]string{"--batch", "0"}, "--batch 0: want 1.."},
		{[]string{"--patience", "-2"}, "--patience -2: want"},
		{[]string{"--log-every", "-1"}, "--log-every -1: want"},
		{[]string{"--layers", "100000"}, "--layers 100000 outside 0..1024"},
		{[]string{"-E", "2147483648"}, "-E 2147483648 outside 1..65536"},
		{[]string{"--val-frac", "2"}, "--val-frac 2 outside [0, 1)"},
		{[]string{"--val-frac", "NaN"}, "--val-frac NaN outside [0, 1)"},
		{[]string{"--checkpoint-every", "-1"}, "--checkpoint-every -1"},
	} {
		err := runTrain(append(append([]string{}, common...), tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(p("run")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v: the output directory was created", tc.args)
		}
	}
	// A model that cannot fit in memory: refused with the estimate.
	big := []string{"--layers", "80", "--heads", "8", "-E", "2048"}
	cfg := transformer.DefaultConfig(80, 8, 2048, 16, 3)
	if avail := sysmem.Available(); avail > 0 && float64(avail) > cfg.TrainingBytes(8, 16, kernels.Default()) {
		t.Skipf("this machine has %d bytes available, more than the huge model's estimate", avail)
	}
	err := runTrain(append(append([]string{}, common...), big...))
	if err == nil || !strings.Contains(err.Error(), "training L=80, E=2048, N=16") || !strings.Contains(err.Error(), "GiB of memory, more than the") {
		t.Errorf("huge model: %v", err)
	}
	if _, err := os.Stat(p("run")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the output directory was created for a model that does not fit")
	}
}

// TestTrainDivergesAndResumeChecks: a learning rate that blows up stops
// with the divergence message and leaves the last good checkpoint; a
// checkpoint whose metadata holds val_frac 2 or no checksum is refused on
// --resume with a message; the data path is absolute, so a run resumes
// from another working directory.
func TestTrainDivergesAndResumeChecks(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "1", "-K", "12", "-N", "16", "--NK", "64", "--fresh=false", "--seed", "1", "--out", p("train"))
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	common := []string{"--data", "train", "--layers", "1", "--heads", "2", "-E", "8", "--batch", "8", "--warmup", "0", "--clip", "0", "--wd", "0", "--min-lr", "0"}

	err := runTrain(append(append([]string{}, common...), "--out", p("div"), "--lr", "1e30", "--epochs", "3"))
	if err == nil || !strings.Contains(err.Error(), "training diverged at step") || !strings.Contains(err.Error(), "lower --lr") ||
		!strings.Contains(err.Error(), "the last good checkpoint is "+filepath.Join(p("div"), trainCheckpoint)) {
		t.Fatalf("diverging run: %v", err)
	}
	c, err := transformer.LoadCheckpoint(p("div/" + trainCheckpoint))
	if err != nil {
		t.Fatalf("the last good checkpoint: %v", err)
	}
	for i, v := range c.Params {
		if v != v {
			t.Fatalf("checkpoint parameter %d is NaN", i)
		}
	}
	if _, err := os.Stat(p("div/" + trainModel)); err == nil {
		t.Error("a diverged run wrote model.safetensors")
	}

	runOK(t, append(append([]string{"train"}, common...), "--out", "run", "--lr", "0.01", "--epochs", "2", "--max-steps", "3")...)
	c, err = transformer.LoadCheckpoint(p("run/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta["data"] != p("train") {
		t.Errorf("checkpoint data path %q, want %q", c.Meta["data"], p("train"))
	}
	os.Chdir(t.TempDir())
	if err := runTrain([]string{"--out", p("run"), "--resume"}); err != nil {
		t.Fatalf("resume from another directory: %v", err)
	}

	// val_frac 2 in the checkpoint's metadata (a valid checksum).
	m := map[string]string{}
	for k, v := range c.Meta {
		m[k] = v
	}
	m["val_frac"] = "2"
	tr, err := c.ResumeOn(cpu.NewDefault(), fakeData(c.TrainWindows, c.WindowLen), fakeData(c.ValWindows, c.WindowLen))
	if err == nil {
		err = tr.SaveCheckpoint(p("run/"+trainCheckpoint), m)
	}
	if err != nil {
		t.Fatal(err)
	}
	err = runTrain([]string{"--out", p("run"), "--resume"})
	if err == nil || !strings.Contains(err.Error(), `val_frac "2" is not a number in [0, 1)`) {
		t.Errorf("val_frac 2: %v", err)
	}
	// An earlier version's checkpoint (no checksum).
	b, _ := os.ReadFile(p("run/" + trainCheckpoint))
	os.WriteFile(p("run/"+trainCheckpoint), stripChecksumFile(t, b), 0o644)
	err = runTrain([]string{"--out", p("run"), "--resume"})
	if err == nil || !strings.Contains(err.Error(), "no checksum") || !strings.Contains(err.Error(), "--allow-unverified") {
		t.Errorf("no checksum: %v", err)
	}
	err = runTrain([]string{"--out", p("run"), "--resume", "--allow-unverified"})
	if err == nil || !strings.Contains(err.Error(), "val_frac") {
		t.Errorf("no checksum, allowed: got past the checksum? %v", err)
	}
}

// fakeData returns n windows of T zeros (for rewriting a checkpoint).
func fakeData(n, T int) transformer.Windows {
	ws := make(fakeWindows, n)
	for i := range ws {
		ws[i] = make([]byte, T)
	}
	return ws
}

type fakeWindows [][]byte

func (f fakeWindows) Windows() int        { return len(f) }
func (f fakeWindows) Window(i int) []byte { return f[i] }

// stripChecksumFile rewrites a safetensors file without its checksum, as
// vomc wrote files before checksums.
func stripChecksumFile(t *testing.T, b []byte) []byte {
	t.Helper()
	h, err := safetensors.ReadHeader(strings.NewReader(string(b)), 0, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	n := h.Size - h.DataSize - 8
	hdr := string(b[8 : 8+n])
	key := `,"` + safetensors.ChecksumKey + `":"` + h.Checksum + `"`
	if !strings.Contains(hdr, key) {
		key = `"` + safetensors.ChecksumKey + `":"` + h.Checksum + `",`
	}
	hdr = strings.Replace(hdr, key, "", 1)
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	out := []byte{byte(len(hdr)), byte(len(hdr) >> 8), byte(len(hdr) >> 16), byte(len(hdr) >> 24), 0, 0, 0, 0}
	return append(append(out, hdr...), b[8+n:]...)
}

// TestBenchAndAttentionChecks: 'vomc bench train' refuses a configuration
// that cannot fit in memory (with the estimate) and 'vomc attention' a
// crafted model file and a bad --gamma.
func TestBenchAndAttentionChecks(t *testing.T) {
	cfg := transformer.DefaultConfig(2, 8, 4096, 65536, 3)
	if avail := sysmem.Available(); avail > 0 && float64(avail) > cfg.TrainingBytes(64, 65536, kernels.Default()) {
		t.Skip("this machine has more memory than the huge configuration's estimate")
	}
	err := runBenchTrain([]string{"--configs", "L=2:H=8:E=4096:N=65536:B=64"})
	if err == nil || !strings.Contains(err.Error(), "needs ≈") {
		t.Errorf("bench train, huge: %v", err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "m.safetensors")
	var buf strings.Builder
	safetensors.Write(&buf, map[string]string{"format": "vomc-transformer",
		"config": `{"layers":1,"heads":[1],"embed":2147483648,"context":8,"alphabet":3,"activation":"gelu","positional":"learned"}`}, nil)
	os.WriteFile(p, []byte(buf.String()), 0o644)
	err = runAttention([]string{"--model", p, "--file", p, "--out", filepath.Join(dir, "a")})
	if err == nil || !strings.Contains(err.Error(), "embedding dimension 2147483648 outside 1..65536") {
		t.Errorf("attention, embed 2^31: %v", err)
	}
	err = runAttention([]string{"--model", p, "--file", p, "--out", filepath.Join(dir, "a"), "--gamma", "Inf"})
	if err == nil || !strings.Contains(err.Error(), "--gamma") {
		t.Errorf("attention, gamma Inf: %v", err)
	}
}
