package methods

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// saveRun writes a fresh model of 2 layers with heads [2, 2], N = 16,
// A = 3 into dir/name and returns the directory.
func saveRun(t *testing.T, dir, name string) (string, *transformer.Model) {
	t.Helper()
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 2, 8, 16, 3), 4)
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, name)
	os.MkdirAll(d, 0o755)
	if err := m.SaveSafetensors(filepath.Join(d, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	return d, m
}

// TestInterventionSpecs: the intervention parameters parse into their
// canonical form (a pattern's ':' included), and every malformed one is
// refused by Parse or by List.Check, before any work, naming the problem.
func TestInterventionSpecs(t *testing.T) {
	run, _ := saveRun(t, t.TempDir(), "run")
	for _, c := range []struct{ in, want string }{
		{"tf:path=" + run + ":ablate=l1h2+L2H1:MODE=Mean", "tf:path=" + run + ":ablate=L1H2+L2H1:mode=mean"},
		{"tf:path=" + run + ":pattern=L1H1=offset:1+l2h2=SUFFIX:2:ablate=L1H2", "tf:path=" + run + ":ablate=L1H2:pattern=L1H1=offset:1+L2H2=suffix:2"},
		{"tf:pattern=L1H1=offset:12:path=" + run + ":name=x", "tf:path=" + run + ":name=x:pattern=L1H1=offset:12"},
		{"tf:path=" + run + ":ablate=L1H1:mode=resample:refs=8:seed=2", "tf:path=" + run + ":ablate=L1H1:mode=resample:refs=8:seed=2"},
		{"tf:path=" + run + ":ablate=L1H1:mode=mean:refs=TEST", "tf:path=" + run + ":ablate=L1H1:mode=mean:refs=test"},
	} {
		s, err := ParseSpec(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if s.String() != c.want {
			t.Errorf("%s: canonical %s, want %s", c.in, s, c.want)
		}
		if again, err := ParseSpec(s.String()); err != nil || again.String() != s.String() {
			t.Errorf("%s: the canonical form parses to %v, %v", s, again, err)
		}
		if err := (List{s}).Check(); err != nil {
			t.Errorf("%s: %v", c.in, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"tf:path=" + run + ":ablate=L1H2:mode=maen", `did you mean "mean"?`},
		{"tf:path=" + run + ":ablate=head2", "L<layer>H<head>"},
		{"tf:path=" + run + ":pattern=L1H1=ofset:1", `did you mean "offset"?`},
		{"tf:path=" + run + ":pattern=L1H1=suffix:0", "suffix:k"},
		{"tf:path=" + run + ":pattern=L1H1", "HEAD=offset:d"},
		{"tf:path=" + run + ":ablate=L3H1", "did you mean L2H1?"},
		{"tf:path=" + run + ":ablate=L1H3", "did you mean L1H2?"},
		{"tf:path=" + run + ":pattern=L2H5=offset:1", "did you mean L2H2?"},
		{"tf:path=" + run + ":pattern=L1H1=offset:16", "outside 0..15"},
		{"tf:path=" + run + ":ablate=L1H1+L1H1", "twice"},
		{"tf:path=" + run + ":ablate=L1H1:pattern=L1H1=offset:1", "twice"},
		{"tf:path=" + run + ":mode=mean", "mode without ablate"},
		{"tf:path=" + run + ":ablate=L1H1:refs=4", "refs is for"},
		{"tf:path=" + run + ":ablate=L1H1:mode=zero:seed=4", "seed is for"},
		{"tf:path=" + run + ":ablate=L1H1:mode=mean:refs=0", "number of windows ≥ 1 or test"},
		{"tf:path=" + run + ":abalte=L1H1", `did you mean "ablate"?`},
	} {
		l, err := Parse(c.in)
		if err == nil {
			err = l.Check()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.in, err, c.want)
		}
	}
}

// TestBuildIntervened: an intervened tf method is the transformer's
// intervened model (the same predictions), named after the intervention;
// mean and resample draw their reference windows from the data's prior
// and are refused without one.
func TestBuildIntervened(t *testing.T) {
	run, m := saveRun(t, t.TempDir(), "run")
	prior := source.PaperPrior(2)
	d := DefaultsFor(prior)
	d.Backend = cpu.NewDefault()
	x := []byte{0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 2, 1, 1, 0, 2, 2, 1, 0}
	refs, err := ReferenceWindows(prior, 5, 16, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec, name string
		iv         transformer.Intervention
	}{
		{"ablate=L1H2", "TF(L=2,H=[2,2],E=8,N=16)@run[ablate=L1H2:mode=zero]",
			transformer.Intervention{Ablate: []transformer.Head{{Layer: 0, Head: 1}}, Mode: transformer.AblateZero}},
		{"ablate=L2H1:mode=resample:refs=5:seed=3", "TF(L=2,H=[2,2],E=8,N=16)@run[ablate=L2H1:mode=resample:refs=5:seed=3]",
			transformer.Intervention{Ablate: []transformer.Head{{Layer: 1, Head: 0}}, Mode: transformer.AblateResample, References: refs, Seed: 3}},
		{"pattern=L1H1=offset:1+L2H2=suffix:2", "TF(L=2,H=[2,2],E=8,N=16)@run[pattern=L1H1=offset:1+L2H2=suffix:2]",
			transformer.Intervention{Patterns: []transformer.HeadPattern{{Head: transformer.Head{}, Pattern: transformer.Pattern{Kind: transformer.PatternOffset, N: 1}},
				{Head: transformer.Head{Layer: 1, Head: 1}, Pattern: transformer.Pattern{Kind: transformer.PatternSuffix, N: 2}}}}},
	} {
		bs, err := parseBuild("tf:path="+run+":"+c.spec, d)
		if err != nil {
			t.Fatal(err)
		}
		p := bs[0].Predictor
		if p.Name() != c.name {
			t.Errorf("%s: name %q, want %q", c.spec, p.Name(), c.name)
		}
		want, err := m.Intervene(c.iv)
		if err != nil {
			t.Fatal(err)
		}
		got, exp := make([]float64, len(x)*3), make([]float64, len(x)*3)
		p.(interface{ PredictSequence([]byte, []float64) }).PredictSequence(x, got)
		want.PredictSequence(x, exp)
		if !slices.Equal(got, exp) {
			t.Errorf("%s: the built method predicts otherwise than the transformer's intervened model", c.spec)
		}
	}
	// refs=test: the evaluated windows are the references
	d.Windows = [][]byte{x[:16], x[4:20], x[2:18]}
	bs, err := parseBuild("tf:path="+run+":ablate=L1H1:mode=mean:refs=test", d)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Intervene(transformer.Intervention{Ablate: []transformer.Head{{}}, Mode: transformer.AblateMean, References: d.Windows, Seed: DefaultInterveneSeed})
	if err != nil {
		t.Fatal(err)
	}
	got, exp := make([]float64, len(x)*3), make([]float64, len(x)*3)
	bs[0].Predictor.(interface{ PredictSequence([]byte, []float64) }).PredictSequence(x, got)
	want.PredictSequence(x, exp)
	if !slices.Equal(got, exp) {
		t.Error("refs=test: the built method predicts otherwise than the mean over the evaluated windows")
	}
	d.Windows = nil
	if _, err := parseBuild("tf:path="+run+":ablate=L1H1:mode=mean:refs=test", d); err == nil || !strings.Contains(err.Error(), "evaluated windows") {
		t.Errorf("refs=test without the evaluated windows: %v", err)
	}
	// the intact model and an ablated one side by side: two methods
	bs, err = parseBuild("tf:path="+run+",tf:path="+run+":ablate=L1H1", d)
	if err != nil || len(bs) != 2 {
		t.Fatalf("intact and ablated side by side: %v", err)
	}
	noPrior := Defaults{Backend: cpu.NewDefault(), A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	if _, err := parseBuild("tf:path="+run+":ablate=L1H1:mode=mean", noPrior); err == nil || !strings.Contains(err.Error(), "prior") {
		t.Errorf("mean ablation without a prior: %v", err)
	}
}

// TestReferenceWindows: window i does not depend on how many are drawn,
// and the seed changes them.
func TestReferenceWindows(t *testing.T) {
	p := source.PaperPrior(3)
	a, err := ReferenceWindows(p, 3, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReferenceWindows(p, 5, 20, 1)
	c, _ := ReferenceWindows(p, 3, 20, 2)
	if !slices.EqualFunc(a, b[:3], slices.Equal) || slices.EqualFunc(a, c, slices.Equal) || len(a[0]) != 20 {
		t.Errorf("reference windows: %v / %v / %v", a, b[:3], c)
	}
}
