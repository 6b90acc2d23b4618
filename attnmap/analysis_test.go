package attnmap

import (
	"reflect"
	"testing"
)

// prevToken is a model whose every head attends to the previous position.
type prevToken struct {
	layers, heads int
	calls         int
}

func (p *prevToken) AttentionMaps(x []byte) ([][][]float32, error) {
	p.calls++
	T := len(x)
	maps := make([][][]float32, p.layers)
	for l := range maps {
		for range p.heads {
			a := make([]float32, T*T)
			for i := 0; i < T; i++ {
				a[i*T+max(i-1, 0)] = 1
			}
			maps[l] = append(maps[l], a)
		}
	}
	return maps, nil
}

func TestAnalyze(t *testing.T) {
	xs := [][]byte{{0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0, 0}, {1, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1}}
	m := &prevToken{layers: 2, heads: 2}
	a, err := Analyze(m, xs, 2, NullOptions{Perms: 19, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.calls != 2 {
		t.Errorf("%d map computations for 2 windows", m.calls)
	}
	if len(a.Scores) != 4 {
		t.Fatalf("%d head scores", len(a.Scores))
	}
	lab := a.Labels()
	if len(lab) != 2 || len(lab[0]) != 2 || lab[1][1] != a.Scores[3].Label {
		t.Errorf("labels %v", lab)
	}
	fig, ok := a.SuffixFigure(xs[0], 1, 1, 2, 1, []int{5, 9})
	if !ok || fig.Layer != 2 || fig.Head != 1 || fig.Offset != 1 || len(fig.Queries) != 2 {
		t.Fatalf("figure %+v, %v", fig, ok)
	}
	for _, q := range fig.Queries {
		want := SuffixMatches(xs[0], q.Position, 1, 1)
		if !reflect.DeepEqual(q.Matches, want) {
			t.Errorf("query %d: matches %v, want %v", q.Position, q.Matches, want)
		}
		mass := 0.0
		for _, j := range want {
			if j == q.Position-1 {
				mass = 1
			}
		}
		if q.Mass != mass {
			t.Errorf("query %d: mass %v, want %v", q.Position, q.Mass, mass)
		}
	}
	if len(a.Attention(fig)) != 16*16 {
		t.Error("Attention")
	}
	if _, ok := a.SuffixFigure(xs[0], 1, 1, 3, 1, nil); ok {
		t.Error("a head of a missing layer was accepted")
	}
	if _, err := Analyze(m, nil, 2, NullOptions{}); err == nil {
		t.Error("no windows accepted")
	}
}

func TestWindowsAndQueries(t *testing.T) {
	xs := [][]byte{make([]byte, 10), make([]byte, 10), make([]byte, 4)}
	got, ids := Windows(xs, []int{0, 10, 20}, 8)
	if len(got) != 2 || len(got[0]) != 8 || len(got[1]) != 8 || !reflect.DeepEqual(ids, []int{0, 10}) {
		t.Errorf("Windows: %d windows, ids %v", len(got), ids)
	}
	if got, _ := Windows(xs[:1], []int{0}, 64); len(got) != 1 || len(got[0]) != 10 {
		t.Error("a single window")
	}
	if q := DefaultQueries(64); !reflect.DeepEqual(q, []int{50, 62}) {
		t.Errorf("DefaultQueries(64) = %v", q)
	}
	if q := DefaultQueries(2); !reflect.DeepEqual(q, []int{0}) {
		t.Errorf("DefaultQueries(2) = %v", q)
	}
}
