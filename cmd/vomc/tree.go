package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/memest"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/draw"
)

// priorFlags are the flags that define π_CTW(D, λ, α) and the leaf generator.
type priorFlags struct {
	A          int
	depths     string
	lambda     float64
	alpha      string
	sparse     bool
	leaves     string
	sparseZero float64
	sparseFrac float64
	fs         *flag.FlagSet
}

func (p *priorFlags) register(fs *flag.FlagSet, defD string) {
	p.fs = fs
	fs.IntVar(&p.A, "A", 3, "alphabet size A (2..256)")
	fs.StringVar(&p.depths, "D", defD, "maximum depth D; a comma list (e.g. 1,2,3,4,5) draws each tree's D uniformly from it")
	fs.Float64Var(&p.lambda, "lambda", 0.15, "stop probability λ ∈ (0,1): a node above depth D is a leaf with probability λ")
	fs.StringVar(&p.alpha, "alpha", "0.5", "Dirichlet parameter α of the leaves: one value, or A comma-separated values")
	fs.StringVar(&p.leaves, "leaves", "dirichlet", "leaf distributions: dirichlet (Dir(α)), sparse (the paper's second generator: random zeros, the rest uniform then normalised) or mixed (each tree's leaves from one of the two, sparse with probability --sparse-frac)")
	fs.BoolVar(&p.sparse, "sparse", false, "the same as --leaves sparse")
	fs.Float64Var(&p.sparseZero, "sparse-zero", 0.5, "with sparse or mixed leaves: the probability that each symbol's probability is set to zero")
	fs.Float64Var(&p.sparseFrac, "sparse-frac", 0.5, "with --leaves mixed: the probability that a tree gets sparse leaves, in (0,1)")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, usagef("%q is not an integer list", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, usagef("%q is not a number list", s)
		}
		out = append(out, v)
	}
	return out, nil
}

func (p *priorFlags) prior() (source.Prior, error) {
	depths, err := parseInts(p.depths)
	if err != nil {
		return source.Prior{}, err
	}
	alpha, err := parseFloats(p.alpha)
	if err != nil {
		return source.Prior{}, err
	}
	kind, err := source.ParseLeafKind(p.leaves)
	if err != nil {
		return source.Prior{}, usagef("--leaves %q: want dirichlet, sparse or mixed", p.leaves)
	}
	set := map[string]bool{}
	if p.fs != nil {
		p.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	}
	if p.sparse {
		if set["leaves"] && kind != source.Sparse {
			return source.Prior{}, usagef("--sparse and --leaves %s contradict each other (--sparse is --leaves sparse)", kind)
		}
		kind = source.Sparse
	}
	if set["sparse-frac"] && kind != source.Mixed {
		return source.Prior{}, usagef("--sparse-frac is for --leaves mixed (the leaves are %s)", kind)
	}
	if set["sparse-zero"] && kind == source.Dirichlet {
		return source.Prior{}, usagef("--sparse-zero is for sparse or mixed leaves (the leaves are dirichlet)")
	}
	pr := source.Prior{A: p.A, Depths: depths, Lambda: p.lambda, Alpha: alpha, Leaves: kind}
	if kind != source.Dirichlet {
		pr.SparseZero = p.sparseZero
	}
	if kind == source.Mixed {
		if !(p.sparseFrac > 0 && p.sparseFrac < 1) {
			return source.Prior{}, usagef("--sparse-frac %v: want a probability strictly between 0 and 1", p.sparseFrac)
		}
		pr.SparseFrac = p.sparseFrac
	}
	if err := pr.Validate(); err != nil {
		return pr, err
	}
	return pr, nil
}

// writeTree writes a tree in the format its extension names.
func writeTree(t *source.Tree, path string, force bool) error {
	if !draw.KnownFormat(path) {
		return usagef("%s: unknown tree format (use %s)", path, draw.Formats)
	}
	return draw.Save(t, path, force)
}

func readTree(path string) (*source.Tree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := source.ReadTreeJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func printTree(t *source.Tree) {
	fmt.Printf("context tree: A=%d, max depth D=%d, %d leaves, actual depth %d\n", t.A, t.D, t.NumLeaves(), t.Depth())
	for _, lf := range t.Leaves() {
		fmt.Printf("  leaf %-14s p = %s\n", source.FormatSuffix(lf.Suffix, t.A), probString(lf.P))
	}
}

func runTree(args []string) error {
	if len(args) == 0 || (args[0] != "sample" && args[0] != "show") {
		fmt.Fprint(os.Stderr, `Usage: vomc tree sample [flags]     sample a tree from the prior π_CTW(D, λ, α)
       vomc tree show [flags] FILE  print and draw a tree file (JSON)
`)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return usagef("want 'sample' or 'show'")
	}
	var pf priorFlags
	var fs *flag.FlagSet
	if args[0] == "sample" {
		fs = newFlags("tree sample", "[flags]", `
Samples one context tree from the prior π_CTW(D, λ, α) of Section 4.2 (or the
paper's sparse leaf generator), prints its leaves and writes it to the files
named by --out (repeatable by commas: tree.json,tree.svg,tree.png,tree.dot).`)
		pf.register(fs, "3")
	} else {
		fs = newFlags("tree show", "[flags] FILE", `
Prints the leaves (suffixes in time order, oldest symbol first, and their
next-symbol distributions) of a tree file and draws it to --out files.`)
	}
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "comma-separated output files: .json, .svg, .png, .dot")
	force := fs.Bool("force", false, "overwrite existing output files")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	var outs []string
	if *out != "" {
		outs = strings.Split(*out, ",")
		for _, p := range outs {
			if !draw.KnownFormat(p) {
				return usagef("%s: unknown tree format (use %s)", p, draw.Formats)
			}
		}
		if err := checkOutputs(*force, outs...); err != nil {
			return err
		}
	}
	var t *source.Tree
	if args[0] == "sample" {
		if fs.NArg() != 0 {
			return usagef("unexpected arguments %v", fs.Args())
		}
		pr, err := pf.prior()
		if err != nil {
			return err
		}
		if err := checkMemory(fmt.Sprintf("a tree with A=%d, D=%v, λ=%g (%.3g nodes expected)", pr.A, pr.Depths, pr.Lambda, pr.ExpectedNodes()), memest.Sample(pr)); err != nil {
			return err
		}
		t, err = pr.Sample(source.RNG(*seed, 0))
		if err != nil {
			return err
		}
	} else {
		if fs.NArg() != 1 {
			return usagef("want exactly one tree FILE")
		}
		var err error
		if t, err = readTree(fs.Arg(0)); err != nil {
			return err
		}
	}
	printTree(t)
	if *out != "" {
		for _, p := range outs {
			if err := writeTree(t, p, *force); err != nil {
				return err
			}
			fmt.Printf("wrote %s\n", p)
		}
	}
	return nil
}

func runGenerate(args []string) error {
	fs := newFlags("generate", "[flags] TREE.json", `
Generates n symbols from a context tree. The initial context x_{1−D}^0 is D
copies of symbol 0 (the paper's dummy context), not part of the output. The
output is text, one character per symbol (digits 0-9 then letters for A ≤ 36;
--raw writes one byte per symbol).`)
	n := fs.Int("n", 1000, "number of symbols")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output file (default: standard output)")
	raw := fs.Bool("raw", false, "write raw bytes instead of text")
	force := fs.Bool("force", false, "overwrite an existing output file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one TREE.json")
	}
	if *n < 0 {
		return usagef("-n %d is negative", *n)
	}
	if *out != "" {
		if err := checkOutputs(*force, *out); err != nil {
			return err
		}
	}
	t, err := readTree(fs.Arg(0))
	if err != nil {
		return err
	}
	if !*raw && t.A > len(source.TextDigits) {
		return usagef("A=%d is too large for text output (at most %d symbols have a character); use --raw", t.A, len(source.TextDigits))
	}
	if err := checkMemory(fmt.Sprintf("generating from a tree with %d leaves", t.NumLeaves()), memest.Generate(t)); err != nil {
		return err
	}
	write := func(w io.Writer) error { return source.Stream(w, t, *seed, int64(*n), *raw) }
	if *out == "" {
		return write(os.Stdout)
	}
	if err := fsutil.WriteFile(*out, *force, write); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %d symbols to %s\n", *n, *out)
	return nil
}
