package source

import (
	"fmt"
	"strconv"
	"strings"
)

// PriorSpec is a prior as a command line gives it: lists as text, the leaf
// generator by name, and which of the leaf settings were given.
type PriorSpec struct {
	A      int
	Depths string // maximum depth D, or a comma list drawn from uniformly
	Lambda float64
	Alpha  string // one value, or A comma-separated values
	Leaves string // dirichlet, sparse or mixed
	Sparse bool   // the same as Leaves "sparse"
	// SparseZero applies to sparse and mixed leaves, SparseFrac to mixed
	// ones; LeavesSet, SparseZeroSet and SparseFracSet say which of
	// Leaves, SparseZero and SparseFrac were given explicitly (a given
	// setting that does not apply to the leaves is an error).
	SparseZero, SparseFrac                  float64
	LeavesSet, SparseZeroSet, SparseFracSet bool
}

// Parse returns the prior of s. It does not validate it (Prior.Validate);
// its errors are those of the text: lists that do not parse, an unknown or
// contradictory leaf generator, settings for other leaves.
func (s PriorSpec) Parse() (Prior, error) {
	depths, err := ParseInts(s.Depths)
	if err != nil {
		return Prior{}, err
	}
	alpha, err := ParseFloats(s.Alpha)
	if err != nil {
		return Prior{}, err
	}
	kind, err := ParseLeafKind(s.Leaves)
	if err != nil {
		return Prior{}, fmt.Errorf("leaves %q: want dirichlet, sparse or mixed", s.Leaves)
	}
	if s.Sparse {
		if s.LeavesSet && kind != Sparse {
			return Prior{}, fmt.Errorf("sparse leaves and %s leaves contradict each other", kind)
		}
		kind = Sparse
	}
	if s.SparseFracSet && kind != Mixed {
		return Prior{}, fmt.Errorf("a sparse fraction is for mixed leaves (the leaves are %s)", kind)
	}
	if s.SparseZeroSet && kind == Dirichlet {
		return Prior{}, fmt.Errorf("a sparse zero probability is for sparse or mixed leaves (the leaves are dirichlet)")
	}
	pr := Prior{A: s.A, Depths: depths, Lambda: s.Lambda, Alpha: alpha, Leaves: kind}
	if kind != Dirichlet {
		pr.SparseZero = s.SparseZero
	}
	if kind == Mixed {
		if !(s.SparseFrac > 0 && s.SparseFrac < 1) {
			return Prior{}, fmt.Errorf("sparse fraction %v: want a probability strictly between 0 and 1", s.SparseFrac)
		}
		pr.SparseFrac = s.SparseFrac
	}
	return pr, nil
}

// ParseInts parses a comma-separated list of integers.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer list", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseFloats parses a comma-separated list of numbers.
func ParseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number list", s)
		}
		out = append(out, v)
	}
	return out, nil
}
