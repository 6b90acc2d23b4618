package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/vomc/vomc/ctw/ctwfile"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/dataset/datadir"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/draw"
	"github.com/vomc/vomc/source/treefile"
)

func runData(args []string) error {
	fs := newFlags("data")
	var pf source.PriorSpec
	pf.AddFlags(fs, "3")
	K := fs.Int("K", 1000, "number of trees")
	NK := fs.Int("NK", 0, "symbols per tree N_K (default: N, i.e. one window per tree)")
	N := fs.Int("N", 256, "window length N")
	fresh := fs.Bool("fresh", true, "every window an independent sequence from the dummy context (test sets)")
	seed := fs.Uint64("seed", 1, "random seed")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines")
	out := fs.String("out", "", "output directory (must not exist or be empty)")
	npy := fs.Bool("npy", false, "also write symbols.npy and tree_of.npy")
	force := fs.Bool("force", false, "replace an existing non-empty output directory")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	pr, err := pf.ParseFlags(fs)
	if err != nil {
		return asUsage(err)
	}
	if *NK == 0 {
		*NK = *N
	}
	ev := newSink(os.Stdout)
	defer ev.Close()
	ds, err := datadir.Make(dataset.Config{Prior: pr, K: *K, NK: *NK, N: *N, Fresh: *fresh, Seed: *seed},
		datadir.Options{Dir: *out, Workers: *workers, NPY: *npy, Force: *force, Events: ev, MemoryLimit: memoryLimit()})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d trees, %d windows of N=%d (A=%d, D∈%v, λ=%g), checksum %s\n",
		*out, *K, ds.Windows(), *N, pr.A, pr.Depths, pr.Lambda, ds.Checksum()[:16])
	return nil
}

func runTree(args []string) error {
	if len(args) == 0 || (args[0] != "sample" && args[0] != "show") {
		fmt.Fprint(os.Stderr, help("tree"))
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return flag.ErrHelp
		}
		return usagef("want 'sample' or 'show'")
	}
	var pf source.PriorSpec
	var fs *flag.FlagSet
	seed := new(uint64)
	if args[0] == "sample" {
		fs = newFlags("tree sample")
		pf.AddFlags(fs, "3")
		fs.Uint64Var(seed, "seed", 1, "random seed")
	} else {
		fs = newFlags("tree show")
	}
	out := fs.String("out", "", "comma-separated output files: .json, .svg, .png, .dot")
	force := fs.Bool("force", false, "overwrite existing output files")
	n, want := 0, ""
	if args[0] == "show" {
		n, want = 1, "one tree FILE"
	}
	if err := parseArgs(fs, args[1:], n, want); err != nil {
		return err
	}
	ev := newSink(os.Stdout)
	defer ev.Close()
	o := treefile.Options{Force: *force, Events: ev, MemoryLimit: memoryLimit()}
	if *out != "" {
		o.Outs = strings.Split(*out, ",")
	}
	for _, p := range o.Outs {
		if !draw.KnownFormat(p) {
			return usagef("%s: unknown tree format (use %s)", p, draw.Formats)
		}
	}
	if args[0] == "show" {
		_, err := treefile.Show(fs.Arg(0), o)
		return err
	}
	pr, err := pf.ParseFlags(fs)
	if err != nil {
		return asUsage(err)
	}
	_, err = treefile.Sample(pr, *seed, o)
	return err
}

func runGenerate(args []string) error {
	fs := newFlags("generate")
	n := fs.Int("n", 1000, "number of symbols")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output file (default: standard output)")
	raw := fs.Bool("raw", false, "write raw bytes instead of text")
	force := fs.Bool("force", false, "overwrite an existing output file")
	if err := parseArgs(fs, args, 1, "one TREE.json"); err != nil {
		return err
	}
	if *n < 0 {
		return usagef("-n %d is negative", *n)
	}
	err := treefile.Generate(treefile.Generation{Tree: fs.Arg(0), N: int64(*n), Seed: *seed, Raw: *raw, Out: *out, Force: *force,
		Stdout: os.Stdout, Events: newSink(os.Stdout), MemoryLimit: memoryLimit()})
	if err == nil && *out != "" {
		fmt.Fprintf(os.Stderr, "wrote %d symbols to %s\n", *n, *out)
	}
	return err
}

func runCTW(args []string) error {
	fs := newFlags("ctw")
	var o ctwfile.Options
	o.AddFlags(fs)
	lam := fs.String("lambda", "auto", "stop probability λ in (0,1), or auto = 1−2^{−(A−1)} (1/2 for A > 16)")
	if err := parseArgs(fs, args, 1, "one FILE"); err != nil {
		return err
	}
	o.File, o.AutoLambda, o.Events, o.MemoryLimit = fs.Arg(0), *lam == "auto", newSink(os.Stdout), memoryLimit()
	if l, err := strconv.ParseFloat(*lam, 64); err == nil {
		o.Lambda = l
	} else if !o.AutoLambda {
		return usagef("--lambda %q is not a number or auto", *lam)
	}
	if o.Map != "" && !draw.KnownFormat(o.Map) {
		return usagef("--map %s: unknown tree format (use %s)", o.Map, draw.Formats)
	}
	_, err := ctwfile.Run(o)
	return err
}
