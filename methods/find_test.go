package methods

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// builtFor builds list on a few windows of a two-depth prior (so that
// bayes is not CTW), with an npy method's file written from CTW.
func builtFor(t *testing.T, list string) []Built {
	t.Helper()
	windows := [][]byte{{0, 1, 2, 2, 1, 0, 0, 1}, {2, 2, 1, 0, 2, 2, 1, 0}}
	d := DefaultsFor(source.Prior{A: 3, Depths: []int{1, 2}, Lambda: 0.15, Alpha: []float64{0.5}})
	d.Backend = cpu.NewDefault()
	d.Windows = windows
	dir := t.TempDir()
	ref, err := parseBuild("ctw", d)
	if err != nil {
		t.Fatal(err)
	}
	files, err := ExportNPY(dir, false, windows, Predictors(ref))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := parseBuild(strings.ReplaceAll(list, "FILE", files[0]), d)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// TestFind: a method is found by its label, by its spec in any spelling
// and by its bare kind when one method has it; other names are errors
// that list the methods and suggest the closest.
func TestFind(t *testing.T) {
	bs := builtFor(t, "bayes,ctw:D=2,ctw:D=3,markov:k=1,npy:path=FILE:name=mine")
	for _, c := range []struct {
		name string
		want int
		err  string
	}{
		{"bayes", 0, ""},
		{" BAYES ", 0, ""},
		{"Bayes(D=1..2,λ=0.15,α=0.5)", 0, ""},
		{"ctw:D=3", 2, ""},
		{"CTW:d=3", 2, ""},
		{"CTW(D=2,λ=0.15,α=0.5)", 1, ""},
		{"markov", 3, ""},
		{"Markov:K=1", 3, ""},
		{"mine", 4, ""},
		{"npy", 4, ""},
		{"ctw", 0, `"ctw" is ambiguous: ctw:D=2 and ctw:D=3 are both ctw methods`},
		{"ctw:D=4", 0, `no method "ctw:D=4"`},
		{"baye", 0, `no method "baye"; did you mean "bayes"? among bayes ("Bayes(D=1..2,λ=0.15,α=0.5)"), ctw:D=2`},
		{"kn", 0, `no method "kn"`},
	} {
		got, err := Find(bs, c.name)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Find(%q) = %d, %v; want %d", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Find(%q): error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

// TestReference: the reference of the excesses is chosen by kind (the
// first bayes, else the first ctw, else the first method), not by a
// label's prefix: an npy model labelled "CTW…" or "Bayes…" is not it.
func TestReference(t *testing.T) {
	for _, c := range []struct {
		list, name string
		want       int
	}{
		{"ctw:D=2,markov:k=1,bayes", "", 2},
		{"npy:path=FILE:name=Bayes-like,markov:k=1,ctw,bayes", "", 3},
		{"npy:path=FILE:name=CTW-like,markov:k=1,ctw:D=3", "", 2},
		{"npy:path=FILE:name=CTW-like,markov:k=1", "", 0},
		{"markov:k=1,ctw,bayes", "ctw", 1},
		{"markov:k=1,ctw,bayes", "Markov(k=1,α=0.5)", 0},
	} {
		bs := builtFor(t, c.list)
		if got, err := Reference(bs, c.name); err != nil || got != c.want {
			t.Errorf("%s, %q: reference %d, %v; want %d", c.list, c.name, got, err, c.want)
		}
	}
	if _, err := Reference(builtFor(t, "ctw,kn:delta=0.5"), "bayes"); err == nil || !strings.Contains(err.Error(), `reference method: no method "bayes"`) {
		t.Errorf("missing reference: %v", err)
	}
}

// TestCheckName: a name written as a spec is checked against the list
// before anything is built; labels wait for Find.
func TestCheckName(t *testing.T) {
	l := MustParse("bayes,ctw:D=5,ctw:D=3,tf:path=" + filepath.Join("no", "run") + ":name=kn")
	for _, c := range []struct {
		name, err string
	}{
		{"bayes", ""},
		{"CTW:d=5", ""},
		{"tf", ""},
		{"kn", ""}, // a method labelled so
		{"Bayes(D=1..5,λ=0.15,α=0.5)", ""},
		{"TF(L=1,H=[2],E=8,N=16)@run", ""},
		{"ctw", "ambiguous"},
		{"ppm", `no method "ppm" among bayes, ctw:D=5, ctw:D=3, tf:path=`},
		{"ctw:D=4", `no method "ctw:D=4"; did you mean "ctw:D=5"?`},
	} {
		err := l.CheckName(c.name)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckName(%q) = %v, want %q", c.name, err, c.err)
		}
	}
}
