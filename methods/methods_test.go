package methods

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	d := Defaults{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5,
		Tune: [][]byte{{0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 1, 0}, {2, 2, 1, 0, 2, 2, 1, 0, 2, 2}}, TuneNote: "test windows"}
	bs, err := Build("ctw, ctw:D=3:lambda=0.3:init=shorter:form=ratio, kn:delta=0.5, kn:order=1, ppm:escape=C:excl, markov:k=1, unigram:alpha=1", d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CTW(D=2,λ=0.15,α=0.5)", "CTW(D=3,λ=0.3,α=0.5,ratio,shorter)", "KN(D=2,δ=0.5)", "KN(D=1,", "PPM(D=2,C,excl)", "Markov(k=1,α=0.5)", "Unigram(α=1)"}
	if len(bs) != len(want) {
		t.Fatalf("%d methods, want %d", len(bs), len(want))
	}
	for i, b := range bs {
		if !strings.HasPrefix(b.Predictor.Name(), want[i]) {
			t.Errorf("method %d: name %q, want prefix %q", i, b.Predictor.Name(), want[i])
		}
		if b.Predictor.AlphabetSize() != 3 {
			t.Errorf("%s: alphabet %d", b.Predictor.Name(), b.Predictor.AlphabetSize())
		}
	}
	if !strings.Contains(bs[3].Note, "tuned on test windows") {
		t.Errorf("KN note %q", bs[3].Note)
	}
	for _, bad := range []string{"", "nope", "ctw:D=x", "ctw:foo=1", "ctw:lambda=2", "ppm:escape=Q", "kn:order=2:order=3", "ctw,ctw", "markov:init=condition", "ctw:form=fast"} {
		if _, err := Build(bad, d); err == nil {
			t.Errorf("Build(%q) accepted", bad)
		}
	}
	d.Tune = nil
	if _, err := Build("kn", d); err == nil {
		t.Error("kn without delta or tuning windows accepted")
	}
}
