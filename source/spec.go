package source

import (
	"flag"
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

// AddFlags defines the flags of the prior π_CTW(D, λ, α) and its leaf
// generator on fs into s ('vomc data', 'vomc tree sample'), with defD the
// default of -D; ParseFlags reads them.
func (s *PriorSpec) AddFlags(fs *flag.FlagSet, defD string) {
	fs.IntVar(&s.A, "A", 3, "alphabet size A (2..256)")
	fs.StringVar(&s.Depths, "D", defD, "maximum depth D; a comma list (e.g. 1,2,3,4,5) draws each tree's D uniformly from it")
	fs.Float64Var(&s.Lambda, "lambda", 0.15, "stop probability λ ∈ (0,1): a node above depth D is a leaf with probability λ")
	fs.StringVar(&s.Alpha, "alpha", "0.5", "Dirichlet parameter α of the leaves: one value, or A comma-separated values")
	fs.StringVar(&s.Leaves, "leaves", "dirichlet", "leaf distributions: dirichlet (Dir(α)), sparse (the paper's second generator: random zeros, the rest uniform then normalised) or mixed (each tree's leaves from one of the two, sparse with probability --sparse-frac)")
	fs.BoolVar(&s.Sparse, "sparse", false, "the same as --leaves sparse")
	fs.Float64Var(&s.SparseZero, "sparse-zero", 0.5, "with sparse or mixed leaves: the probability that each symbol's probability is set to zero")
	fs.Float64Var(&s.SparseFrac, "sparse-frac", 0.5, "with --leaves mixed: the probability that a tree gets sparse leaves, in (0,1)")
}

// ParseFlags is Parse of the spec AddFlags filled in from fs, with the
// settings given on the command line marked as given.
func (s PriorSpec) ParseFlags(fs *flag.FlagSet) (Prior, error) {
	fs.Visit(func(f *flag.Flag) {
		s.LeavesSet = s.LeavesSet || f.Name == "leaves"
		s.SparseZeroSet = s.SparseZeroSet || f.Name == "sparse-zero"
		s.SparseFracSet = s.SparseFracSet || f.Name == "sparse-frac"
	})
	return s.Parse()
}
