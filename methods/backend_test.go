package methods

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestTFBackend: a tf method's model is loaded on Defaults.Backend.
func TestTFBackend(t *testing.T) {
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(1, 2, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.SaveSafetensors(file); err != nil {
		t.Fatal(err)
	}
	d := Defaults{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, Backend: cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<10))}
	if _, err := parseBuild("tf:path="+file, d); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 1 KiB backend: %v, want out of memory", err)
	}
	d.Backend = cpu.New(kernels.Default())
	if _, err := parseBuild("tf:path="+file, d); err != nil {
		t.Fatal(err)
	}
}

// TestSynthBackend: a synth method's model is loaded on Defaults.Backend
// too.
func TestSynthBackend(t *testing.T) {
	m, err := synth.NewOn(cpu.NewDefault(), synth.Config{Variant: synth.TF20, A: 2, D: 2, Context: 16}, 1)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(file); err != nil {
		t.Fatal(err)
	}
	d := Defaults{A: 2, D: 2, Lambda: 0.15, Alpha: 0.5, Backend: cpu.New(kernels.Default(), cpu.WithMemoryLimit(1<<6))}
	if _, err := parseBuild("synth:path="+file, d); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("a 64-byte backend: %v, want out of memory", err)
	}
	d.Backend = cpu.New(kernels.Default())
	if _, err := parseBuild("synth:path="+file, d); err != nil {
		t.Fatal(err)
	}
}

// TestUsesBackend: the lists whose models run on Defaults.Backend are
// those with a tf or synth method (in any case), and a bad method is an
// error.
func TestUsesBackend(t *testing.T) {
	for _, c := range []struct {
		list    string
		want    bool
		wantErr bool
	}{
		{"ctw,kn,ppm,unigram", false, false},
		{"construct:c=50,markov:k=2", false, false},
		{"npy:path=x.npy", false, false},
		{"ctw,tf:path=run", true, false},
		{"TF:path=run", true, false},
		{"synth:path=run", true, false},
		{"ctw, synth:path=run:name=A", true, false},
		{"ctw,,", false, false},
		{"ctw,:x=1", false, true},
		{"tf:path=a:path=b", false, true},
	} {
		l, err := Parse(c.list)
		got := err == nil && l.UsesBackend()
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("UsesBackend(%q) = %v, %v; want %v, error %v", c.list, got, err, c.want, c.wantErr)
		}
	}
}
