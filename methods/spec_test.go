package methods

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestSpellings feeds every spelling variant of every method kind (case
// of the kind, of the parameter names and of keyword values, spaces,
// numbers written differently, flags with and without a value) and
// checks that each variant has the same canonical form, the same memory
// estimate and builds the same predictor: the same label and the same
// probabilities on every position of a few windows (issue 46: ctw:D=12,
// ctw:d=12 and CTW:D=12 had three different estimates).
func TestSpellings(t *testing.T) {
	dir := t.TempDir()
	windows := [][]byte{{0, 1, 2, 2, 1, 0, 0, 1, 2, 1, 1, 0}, {2, 2, 1, 0, 2, 2, 1, 0, 2, 2, 0, 1}, {1, 1, 1, 0, 0, 0, 2, 2, 2, 1, 0, 2}}
	d := DefaultsFor(source.Prior{A: 3, Depths: []int{1, 2}, Lambda: 0.15, Alpha: []float64{0.5}})
	d.Backend = cpu.NewDefault()
	d.Windows, d.Tune, d.TuneNote = windows, windows, "the test windows"
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(1, 2, 8, 16, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "Run1")
	os.MkdirAll(run, 0o755)
	if err := m.SaveSafetensors(filepath.Join(run, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	sm, err := synth.NewOn(cpu.NewDefault(), synth.Config{Variant: synth.TF20, A: 3, D: 2, Context: 16}, 1)
	if err != nil {
		t.Fatal(err)
	}
	sfile := filepath.Join(dir, "S.safetensors")
	if err := sm.Save(sfile); err != nil {
		t.Fatal(err)
	}
	ref, err := parseBuild("ctw", d)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := ExportNPY(dir, false, windows, Predictors(ref))
	if err != nil {
		t.Fatal(err)
	}
	npyFile := exported[0]
	for _, c := range []struct {
		canonical string
		variants  []string
	}{
		{"bayes", []string{"bayes", "BAYES", " Bayes "}},
		{"ctw:D=12", []string{"ctw:D=12", "ctw:d=12", "CTW:D=12", "Ctw : d = 012", "ctw:D=+12"}},
		{"ctw:D=2:lambda=0.3:alpha=1:init=shorter:form=theorem1", []string{
			"ctw:D=2:lambda=0.3:alpha=1:init=shorter:form=theorem1",
			"CTW:form=THEOREM1:Init=Shorter:ALPHA=1.0:Lambda=.3:d=2",
			"ctw:lambda=3e-1:d=02:alpha=1:init=shorter:form=Theorem1"}},
		{"kn:order=2:delta=0.5:cont", []string{"kn:order=2:delta=0.5:cont", "KN:ORDER=2:DELTA=0.50:CONT", "kn:cont=true:Delta=5e-1:Order=2", "kn:order=2:delta=0.5:cont=T"}},
		{"kn:order=1", []string{"kn:order=1", "KN:Order=1", "kn:order=1:cont=false"}},
		{"ppm:order=2:escape=C:excl", []string{"ppm:order=2:escape=C:excl", "PPM:Order=2:Escape=c:EXCL", "ppm:excl=1:escape=c:order=2:norm=false"}},
		{"markov:k=2:alpha=1:init=shorter", []string{"markov:k=2:alpha=1:init=shorter", "Markov:K=2:Alpha=1:INIT=SHORTER", "markov:init=shorter:alpha=1e0:k=2"}},
		{"unigram:alpha=0.25", []string{"unigram:alpha=0.25", "UNIGRAM:ALPHA=.25", "Unigram:alpha=2.5e-1"}},
		{"construct:D=1:c=50", []string{"construct:D=1:c=50", "CONSTRUCT:d=1:C=5e1", "construct:c=50.0:D=1"}},
		{"construct:D=1:c=inf", []string{"construct:D=1:c=inf", "Construct:d=1:C=INF", "construct:c=Inf:D=1"}},
		{"tf:path=" + run, []string{"tf:path=" + run, "TF:PATH=" + run, " Tf : Path = " + run + " "}},
		{"tf:path=" + run + ":name=Mine", []string{"tf:path=" + run + ":name=Mine", "TF:Name=Mine:PATH=" + run}},
		{"synth:path=" + sfile, []string{"synth:path=" + sfile, "SYNTH:Path=" + sfile}},
		{"npy:path=" + npyFile + ":name=P", []string{"npy:path=" + npyFile + ":name=P", "NPY:NAME=P:PATH=" + npyFile}},
	} {
		t.Run(c.canonical, func(t *testing.T) {
			var label string
			var probs []float64
			var mem int64
			for i, v := range c.variants {
				s, err := ParseSpec(v)
				if err != nil {
					t.Fatalf("%q: %v", v, err)
				}
				if s.String() != c.canonical {
					t.Errorf("%q: canonical %q, want %q", v, s.String(), c.canonical)
				}
				list := List{s}
				w := Workload{A: 3, D: 3, Windows: 100, N: 16, Workers: 2}
				est := MemoryEstimate(list, w)
				bs, err := Build(list, d)
				if err != nil {
					t.Fatalf("%q: %v", v, err)
				}
				p := bs[0].Predictor
				var ps []float64
				for _, x := range windows {
					buf := make([]float64, len(x)*3)
					if err := predict.Sequence(p, x, buf); err != nil {
						t.Fatal(err)
					}
					ps = append(ps, buf...)
				}
				if i == 0 {
					label, probs, mem = p.Name(), ps, est
					if est == 0 && c.canonical != "unigram:alpha=0.25" {
						t.Errorf("%q: memory estimate 0", v)
					}
					continue
				}
				if p.Name() != label {
					t.Errorf("%q: label %q, %q's %q", v, p.Name(), c.variants[0], label)
				}
				if est != mem {
					t.Errorf("%q: memory estimate %d B, %q's %d B", v, est, c.variants[0], mem)
				}
				for j := range ps {
					if ps[j] != probs[j] {
						t.Fatalf("%q: probability %d is %v, %q's %v", v, j, ps[j], c.variants[0], probs[j])
					}
				}
			}
		})
	}
}

// TestListText: a List parses as a flag and round-trips through its text
// form in canonical spelling; the same method twice, in any spelling, is
// refused before any work.
func TestListText(t *testing.T) {
	var l List
	if err := l.Set("CTW:d=3, kn ,ppm:Escape=c"); err != nil {
		t.Fatal(err)
	}
	if got, want := l.String(), "ctw:D=3,kn,ppm:escape=C"; got != want {
		t.Errorf("canonical %q, want %q", got, want)
	}
	b, _ := l.MarshalText()
	var back List
	if err := back.UnmarshalText(b); err != nil || back.String() != l.String() {
		t.Errorf("round trip: %q, %v", back.String(), err)
	}
	if l[0].Text() != "CTW:d=3" || l[0].Kind != "ctw" {
		t.Errorf("first spec: text %q, kind %q", l[0].Text(), l[0].Kind)
	}
	if _, err := Parse("ctw:D=3,CTW:d=3"); err == nil || !strings.Contains(err.Error(), "the same method ctw:D=3") {
		t.Errorf("twice: %v", err)
	}
	if !l.Has("kn") || l.Has("tf") || l.UsesBackend() {
		t.Errorf("Has/UsesBackend of %s", l)
	}
}
