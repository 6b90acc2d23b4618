package memest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
)

func TestEstimates(t *testing.T) {
	pr := source.Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}}
	small := Data(dataset.Config{Prior: pr, K: 10, NK: 16, N: 16, Fresh: true, Seed: 1})
	big := Data(dataset.Config{Prior: pr, K: 1000, NK: 16, N: 16, Fresh: true, Seed: 1})
	if !(Base < small && small < big) {
		t.Errorf("Data: %d, %d (base %d)", small, big, Base)
	}
	if s := Sample(pr); s <= Base {
		t.Errorf("Sample %d", s)
	}
	one := Eval("ctw", 1000, 10, 100, 3, 3, 0, 0, 1)
	two := Eval("ctw", 1000, 10, 100, 3, 3, 0, 0, 2)
	kn := Eval("ctw,kn", 1000, 10, 100, 3, 3, 0, 0, 1)
	knFixed := Eval("ctw,kn:delta=0.5", 1000, 10, 100, 3, 3, 0, 0, 1)
	if !(one < two && one < kn && knFixed < kn) {
		t.Errorf("Eval: 1 worker %d, 2 workers %d, +kn %d, +kn with δ %d", one, two, kn, knFixed)
	}
	cfg := ctw.Config{A: 256, D: 2, Lambda: 0.5, Alpha: 0.5}
	x := make([]byte, 1000)
	if d := CTW(cfg, x, 10) - CTW(cfg, x, 0); d != 10*(64+8*256) {
		t.Errorf("CTW MAP tree: %d", d)
	}
}

func TestPathBytes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), make([]byte, 100), 0o644)
	os.WriteFile(filepath.Join(dir, "b"), make([]byte, 20), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if n := PathBytes(dir); n != 120 {
		t.Errorf("dir: %d", n)
	}
	if n := PathBytes(filepath.Join(dir, "a")); n != 100 {
		t.Errorf("file: %d", n)
	}
	if n := PathBytes(filepath.Join(dir, "missing")); n != 0 {
		t.Errorf("missing: %d", n)
	}
	if est := Eval("tf:path="+dir, 0, 1, 1, 2, 1, 0, 0, 1) - Eval("tf:path="+filepath.Join(dir, "missing"), 0, 1, 1, 2, 1, 0, 0, 1); est != 240 {
		t.Errorf("tf weights counted %d", est)
	}
}
