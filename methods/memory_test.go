package methods

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/leafprior"
	"github.com/vomc/vomc/transformer"
)

func TestMemoryEstimate(t *testing.T) {
	w := Workload{A: 3, D: 3, Windows: 10, N: 100, Workers: 1}
	one := MemoryEstimate(MustParse("ctw"), w)
	kn := MemoryEstimate(MustParse("ctw,kn"), w)
	knFixed := MemoryEstimate(MustParse("ctw,kn:delta=0.5"), w)
	w.Workers = 2
	two := MemoryEstimate(MustParse("ctw"), w)
	if !(0 < one && one < two && one < kn && knFixed < kn) {
		t.Errorf("1 worker %d, 2 workers %d, +kn %d, +kn with δ %d", one, two, kn, knFixed)
	}
	w.Workers = 1
	if d, s := MemoryEstimate(MustParse("ctw:D=1"), w), MemoryEstimate(MustParse("ctw:D=2"), w); d >= s || s >= one {
		t.Errorf("depth 1: %d, 2: %d, 3: %d", d, s, one)
	}
	if u := MemoryEstimate(MustParse("unigram"), w); u != 0 {
		t.Errorf("unigram: %d", u)
	}
	if n := MemoryEstimate(MustParse("npy:path=x.npy"), w); n != 10*100*3*8 {
		t.Errorf("npy: %d", n)
	}
	// torch: the distributions as float64s and float32s, and the windows
	if n := MemoryEstimate(MustParse("torch:path=run"), w); n != 10*100*(3*(8+4+4)+1) {
		t.Errorf("torch: %d", n)
	}
	// bayes: a CTW state per depth 0..D and the sparse memo's cap
	if b := MemoryEstimate(MustParse("bayes"), w); b <= one+leafprior.MemoEntries*(64+8*3) {
		t.Errorf("bayes: %d, CTW at D=3 %d", b, one)
	}
}

func TestPathBytes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 100), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), make([]byte, 20), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if n := pathBytes(dir); n != 120 {
		t.Errorf("dir: %d", n)
	}
	if n := pathBytes(filepath.Join(dir, "a")); n != 100 {
		t.Errorf("file: %d", n)
	}
	if n := pathBytes(filepath.Join(dir, "missing")); n != 0 {
		t.Errorf("missing: %d", n)
	}
	w := Workload{A: 2, D: 1, Windows: 1, N: 1, Workers: 1}
	if est := MemoryEstimate(MustParse("tf:path="+dir), w) - MemoryEstimate(MustParse("tf:path="+filepath.Join(dir, "missing")), w); est != 240 {
		t.Errorf("tf weights counted %d", est)
	}
}

// TestMemoryEstimateTF checks that a tf method counts, per worker, the
// forward-only buffers of its passes and its batch's distributions
// (from the model file's header), besides twice its files.
func TestMemoryEstimateTF(t *testing.T) {
	dir := filepath.Join("..", "models", "d3-tf44")
	cfg, err := transformer.ReadModelConfig(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	w := Workload{A: 3, D: 3, Windows: 100, N: cfg.Context, Workers: 1}
	one := MemoryEstimate(MustParse("tf:path="+dir), w)
	w.Workers = 3
	three := MemoryEstimate(MustParse("tf:path="+dir), w)
	batch := (cfg.BatchWindows(cfg.Context) + 3) / 4 * 4
	per := int64(cfg.PredictionBytes()) + int64(batch*cfg.Context*3*8)
	if files := 2 * pathBytes(dir); one != files+per || three != files+3*per {
		t.Errorf("1 worker %d, 3 workers %d; want the files %d and %d per worker", one, three, files, per)
	}
	if per < 4*int64(cfg.InferenceFloats(cfg.Context)) {
		t.Errorf("per worker %d bytes, less than one window's forward-only buffers", per)
	}
	// a file, not a directory, is read too
	if f := MemoryEstimate(MustParse("tf:path="+filepath.Join(dir, "model.safetensors")), w); f != 2*pathBytes(filepath.Join(dir, "model.safetensors"))+3*per {
		t.Errorf("model file: %d", f)
	}
}
