package attnmap

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestRunStudy(t *testing.T) {
	xs := [][]byte{
		{0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0},
		{1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1},
	}
	dir := t.TempDir()
	file := func(name string) string { return filepath.Join(dir, name) }
	s := Study{Model: &prevToken{layers: 1, heads: 2}, Windows: xs, MaxK: 2, Null: NullOptions{Perms: 19, Seed: 1},
		K: 1, Offset: -1,
		Heatmaps: []string{file("h.png")}, SuffixMatch: []string{file("s.png")},
		ProfileWindows: xs, ProfileCSV: file("p.csv"), ProfileFigure: file("p.png")}
	r, err := RunStudy(s)
	if err != nil {
		t.Fatal(err)
	}
	an, err := Analyze(s.Model, xs, 2, s.Null)
	if err != nil {
		t.Fatal(err)
	}
	qs := MatchedQueries(xs[0], 1, r.Figure.Offset)
	fig, ok := an.SuffixFigure(xs[0], 1, -1, 0, 0, qs)
	if !r.Suffix || !ok || r.Figure.Layer != fig.Layer || r.Figure.Head != fig.Head || r.Figure.Offset != fig.Offset || len(r.Figure.Queries) != len(qs) || len(qs) == 0 {
		t.Errorf("figure %+v, want %+v (queries %v)", r.Figure, fig, qs)
	}
	if !r.SuffixDrawn || r.Profile == nil {
		t.Errorf("suffix drawn %v, profile %v", r.SuffixDrawn, r.Profile != nil)
	}
	for _, name := range []string{"h.png", "s.png", "p.csv"} {
		if _, err := os.Stat(file(name)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(file("p.png")); (err == nil) != r.ProfileDrawn {
		t.Errorf("profile figure: drawn %v, stat %v", r.ProfileDrawn, err)
	}
	if _, err := RunStudy(s); err == nil {
		t.Error("an existing profile CSV was overwritten without Force")
	}
	s.Force = true
	if _, err := RunStudy(s); err != nil {
		t.Error(err)
	}
	s.Layer, s.Head, s.RequireSuffix, s.Heatmaps = 3, 1, true, []string{file("none.png")}
	if _, err := RunStudy(s); !errors.Is(err, ErrNoSuffixHead) {
		t.Errorf("missing head: %v", err)
	}
	if _, err := os.Stat(file("none.png")); err == nil {
		t.Error("a heatmap was written before ErrNoSuffixHead")
	}
}

func TestMatchedQueries(t *testing.T) {
	x := []byte{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}
	qs := MatchedQueries(x, 1, 0)
	if len(qs) != 2 || qs[0] != 14 || qs[1] != 15 {
		t.Errorf("queries %v", qs)
	}
	if qs := MatchedQueries([]byte{0, 1, 2}, 1, 0); len(qs) != 0 {
		t.Errorf("queries without matches %v", qs)
	}
}
