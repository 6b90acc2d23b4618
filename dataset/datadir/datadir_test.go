package datadir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/source"
)

func TestMake(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	cfg := dataset.Config{Prior: source.PaperPrior(2), K: 4, NK: 32, N: 16, Fresh: true, Seed: 3}
	ds, err := Make(cfg, Options{Dir: dir, Workers: 2, NPY: true})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Windows() != 8 {
		t.Errorf("%d windows, want 8 (2 per tree)", ds.Windows())
	}
	for _, f := range append([]string{dataset.ManifestFile, dataset.SymbolsFile}, NPYFiles...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	back, err := dataset.ReadWindows(dir)
	if err != nil || back.Checksum() != ds.Checksum() {
		t.Errorf("read back: %v", err)
	}
	if _, err := Make(cfg, Options{Dir: dir}); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing data set without Force: %v", err)
	}
	if _, err := Make(cfg, Options{Dir: dir, Force: true}); err != nil {
		t.Errorf("with Force: %v", err)
	}
	bad := cfg
	bad.Prior.Lambda = 2
	if _, err := Make(bad, Options{Dir: filepath.Join(t.TempDir(), "x")}); err == nil {
		t.Error("λ = 2 accepted")
	}
	out := filepath.Join(t.TempDir(), "y")
	if _, err := Make(cfg, Options{Dir: out, MemoryLimit: 1}); err == nil || !strings.Contains(err.Error(), "needs about") {
		t.Errorf("memory refusal: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused data set created its directory")
	}
}

func TestMemoryEstimate(t *testing.T) {
	cfg := dataset.Config{Prior: source.PaperPrior(2), K: 4, NK: 32, N: 16, Fresh: true, Seed: 3}
	if est, build := MemoryEstimate(cfg), cfg.BuildMemoryEstimate(); est != sysmem.Base+build {
		t.Errorf("estimate %d, want the process's %d and the build's %d", est, sysmem.Base, build)
	}
}
