package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/draw"
	"github.com/vomc/vomc/source/treefile"
)

// priorFlags are the flags that define π_CTW(D, λ, α) and the leaf generator.
type priorFlags struct {
	source.PriorSpec
	fs *flag.FlagSet
}

func (p *priorFlags) register(fs *flag.FlagSet, defD string) {
	p.fs = fs
	fs.IntVar(&p.A, "A", 3, "alphabet size A (2..256)")
	fs.StringVar(&p.Depths, "D", defD, "maximum depth D; a comma list (e.g. 1,2,3,4,5) draws each tree's D uniformly from it")
	fs.Float64Var(&p.Lambda, "lambda", 0.15, "stop probability λ ∈ (0,1): a node above depth D is a leaf with probability λ")
	fs.StringVar(&p.Alpha, "alpha", "0.5", "Dirichlet parameter α of the leaves: one value, or A comma-separated values")
	fs.StringVar(&p.Leaves, "leaves", "dirichlet", "leaf distributions: dirichlet (Dir(α)), sparse (the paper's second generator: random zeros, the rest uniform then normalised) or mixed (each tree's leaves from one of the two, sparse with probability --sparse-frac)")
	fs.BoolVar(&p.Sparse, "sparse", false, "the same as --leaves sparse")
	fs.Float64Var(&p.SparseZero, "sparse-zero", 0.5, "with sparse or mixed leaves: the probability that each symbol's probability is set to zero")
	fs.Float64Var(&p.SparseFrac, "sparse-frac", 0.5, "with --leaves mixed: the probability that a tree gets sparse leaves, in (0,1)")
}

// prior parses the prior the flags give; its errors are usage errors.
func (p *priorFlags) prior() (source.Prior, error) {
	s := p.PriorSpec
	p.fs.Visit(func(f *flag.Flag) {
		s.LeavesSet = s.LeavesSet || f.Name == "leaves"
		s.SparseZeroSet = s.SparseZeroSet || f.Name == "sparse-zero"
		s.SparseFracSet = s.SparseFracSet || f.Name == "sparse-frac"
	})
	pr, err := s.Parse()
	if err != nil {
		return pr, usageError{err.Error()}
	}
	return pr, nil
}

// checkTreeFormats refuses output files of no known tree format.
func checkTreeFormats(paths ...string) error {
	for _, p := range paths {
		if !draw.KnownFormat(p) {
			return usagef("%s: unknown tree format (use %s)", p, draw.Formats)
		}
	}
	return nil
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
	o := treefile.Options{Force: *force, Log: os.Stdout, Warn: os.Stderr, Memory: checkMemory}
	if *out != "" {
		o.Outs = strings.Split(*out, ",")
	}
	if err := checkTreeFormats(o.Outs...); err != nil {
		return err
	}
	if args[0] == "show" {
		if fs.NArg() != 1 {
			return usagef("want exactly one tree FILE")
		}
		_, err := treefile.Show(fs.Arg(0), o)
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	pr, err := pf.prior()
	if err != nil {
		return err
	}
	_, err = treefile.Sample(pr, *seed, o)
	return err
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
	err := treefile.Generate(treefile.Generation{Tree: fs.Arg(0), N: int64(*n), Seed: *seed, Raw: *raw, Out: *out, Force: *force,
		Stdout: os.Stdout, Warn: os.Stderr, Memory: checkMemory})
	if err == nil && *out != "" {
		fmt.Fprintf(os.Stderr, "wrote %d symbols to %s\n", *n, *out)
	}
	return err
}

// readTree is treefile.Read.
var readTree = treefile.Read
