package source

import (
	"reflect"
	"strings"
	"testing"
)

func TestPriorSpec(t *testing.T) {
	base := PriorSpec{A: 3, Depths: "3", Lambda: 0.15, Alpha: "0.5", Leaves: "dirichlet", SparseZero: 0.5, SparseFrac: 0.5}
	for _, c := range []struct {
		name string
		edit func(*PriorSpec)
		want Prior  // when err is ""
		err  string // substring of the error
	}{
		{"default", func(*PriorSpec) {}, Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}}, ""},
		{"lists", func(s *PriorSpec) { s.Depths, s.Alpha = "1, 2,3", "0.1,0.2,0.3" }, Prior{A: 3, Depths: []int{1, 2, 3}, Lambda: 0.15, Alpha: []float64{0.1, 0.2, 0.3}}, ""},
		{"sparse", func(s *PriorSpec) { s.Sparse = true }, Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: Sparse, SparseZero: 0.5}, ""},
		{"mixed", func(s *PriorSpec) { s.Leaves, s.SparseFrac, s.SparseFracSet = "mixed", 0.3, true }, Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: Mixed, SparseZero: 0.5, SparseFrac: 0.3}, ""},
		{"bad depths", func(s *PriorSpec) { s.Depths = "x" }, Prior{}, "not an integer list"},
		{"bad alpha", func(s *PriorSpec) { s.Alpha = "0.5,y" }, Prior{}, "not a number list"},
		{"bad leaves", func(s *PriorSpec) { s.Leaves = "gaussian" }, Prior{}, "want dirichlet, sparse or mixed"},
		{"contradiction", func(s *PriorSpec) { s.Sparse, s.LeavesSet = true, true }, Prior{}, "contradict"},
		{"frac not mixed", func(s *PriorSpec) { s.SparseFracSet = true }, Prior{}, "for mixed leaves"},
		{"zero dirichlet", func(s *PriorSpec) { s.SparseZeroSet = true }, Prior{}, "for sparse or mixed"},
		{"frac 1", func(s *PriorSpec) { s.Leaves, s.SparseFrac = "mixed", 1 }, Prior{}, "strictly between"},
	} {
		s := base
		c.edit(&s)
		got, err := s.Parse()
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "--") {
				t.Errorf("%s: %v, want an error with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
