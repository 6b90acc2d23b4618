package dynamics

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
)

// TestExistingOutput: the first of Write's files found in a directory, in
// FileNames' order.
func TestExistingOutput(t *testing.T) {
	want := []string{Files.JSON, Files.CSV, Files.Phases, Files.PNG, Files.SVG}
	if got := FileNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("FileNames %v, want %v", got, want)
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		add, want string
	}{{"", ""}, {"other.txt", ""}, {Files.SVG, Files.SVG}, {Files.CSV, Files.CSV}, {Files.JSON, Files.JSON}} {
		if tc.add != "" {
			os.WriteFile(filepath.Join(dir, tc.add), nil, 0o644)
		}
		want := ""
		if tc.want != "" {
			want = filepath.Join(dir, tc.want)
		}
		if got := ExistingOutput(dir); got != want {
			t.Errorf("after %q: %q, want %q", tc.add, got, want)
		}
	}
	if got := ExistingOutput(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("missing directory: %q", got)
	}
}

// TestReadResult: a result written by Write reads back with the same
// points, phases (their steps too), emergences and phases text; a file
// without snapshots or not JSON is an error.
func TestReadResult(t *testing.T) {
	pts := testPoints(256)
	pts[3].Tied = []string{"Markov(k=1,α=0.5)"}
	em := []Emergence{{Layer: 1, Head: 2, Hypothesis: "previous-token d=1", Label: "previous-token d=1, mass 0.9", Step: 64}}
	var refs []string
	for _, d := range pts[0].KL {
		refs = append(refs, d.Reference)
	}
	r := &Result{Run: "TF(4,4)", Data: "test", Windows: 2, N: 8, References: refs, Excess: "CTW", Points: pts, Phases: Phases(pts), Emergences: em}
	dir := t.TempDir()
	if err := r.Write(dir, "t", false); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(filepath.Join(dir, Files.JSON))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Phases, r.Phases) || !reflect.DeepEqual(got.Emergences, r.Emergences) || len(got.Points) != len(pts) || !reflect.DeepEqual(got.Points[3].Tied, pts[3].Tied) {
		t.Fatalf("read back %+v\nwant %+v", got.Phases, r.Phases)
	}
	if got.PhasesText() != r.PhasesText() {
		t.Errorf("phases text differs:\n%s\nwant\n%s", got.PhasesText(), r.PhasesText())
	}
	// a point's losses and excesses are written and read back (the loss was
	// once left out of dynamics.json)
	pts[3].Loss, pts[3].LossHalf, pts[3].ExcessHalf = Stat{0.61, 0.02}, Stat{0.58, 0.03}, Stat{0.04, 0.01}
	if err := r.Write(dir, "t", true); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadResult(filepath.Join(dir, Files.JSON)); err != nil {
		t.Fatal(err)
	}
	if p := got.Points[3]; p.Loss != pts[3].Loss || p.LossHalf != pts[3].LossHalf || p.Excess != pts[3].Excess || p.ExcessHalf != pts[3].ExcessHalf {
		t.Errorf("point read back %+v, want %+v", p, pts[3])
	}
	// a file of the builds before 2026-11-25 ("Excess", "ExcessHalf", no
	// loss), from the depth-5 run
	old, err := ReadResult(filepath.Join("testdata", "old_format.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := old.Points[1]; p.Excess != (Stat{0.12695591657032423, 0.021433172197008632}) || p.ExcessHalf != (Stat{0.15234119514568065, 0.025142752527563282}) || p.Loss != (Stat{}) {
		t.Errorf("old format: excess %+v, second half %+v, loss %+v", p.Excess, p.ExcessHalf, p.Loss)
	}
	for _, body := range []string{`{"points": []}`, `not json`, `{"references": ["a", "b"], "points": [{"step": 1, "kl": [{"reference": "a"}]}]}`} {
		p := filepath.Join(dir, "bad.json")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := ReadResult(p); err == nil {
			t.Errorf("%q: no error", body)
		}
	}
}

// TestBayesReference: the exact Bayes predictor joins the references where
// CTW is not it, and the excess is measured from it; with one depth and
// Dirichlet leaves CTW is the reference.
func TestBayesReference(t *testing.T) {
	for _, tc := range []struct {
		prior source.Prior
		want  string
	}{
		{source.Prior{A: 3, Depths: []int{2}, Lambda: 0.15, Alpha: []float64{0.5}}, "CTW(D=2,λ=0.15,α=0.5)"},
		{source.Prior{A: 3, Depths: []int{1, 2}, Lambda: 0.15, Alpha: []float64{0.5}}, "Bayes(D=1..2,λ=0.15,α=0.5)"},
		{source.Prior{A: 3, Depths: []int{2}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: source.Mixed}, "Bayes(D=2,λ=0.15,α=0.5,mixed 0.5 sparse z=0.5)"},
	} {
		d := methods.DefaultsFor(tc.prior)
		refs, got, err := references(RunConfig{}, d, [][]byte{{0, 1, 2, 0}, {1, 1, 2, 0}})
		if err != nil {
			t.Fatal(err)
		}
		if refs[excessIndex(refs, got)].Name != got || got != tc.want {
			t.Errorf("%+v: excess over %s, want %s", tc.prior, got, tc.want)
		}
	}
}
