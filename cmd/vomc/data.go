package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/dataset/datadir"
)

func runData(args []string) error {
	fs := newFlags("data", "[flags] --out DIR", `
Builds a data set: K context trees sampled from the prior π_CTW(D, λ, α) (or
the sparse leaf generator), N_K symbols per tree, cut into windows of N. By
default every window is a fresh sequence started from the dummy context of D
zeros (--fresh, right for test sets: CTW is then exactly Bayes-optimal on
every window); --fresh=false draws one sequence of N_K symbols per tree and
cuts it into ⌊N_K/N⌋ consecutive windows (the paper's training sets).

The directory gets manifest.json (every parameter, the seed, the trees, a
SHA-256 checksum), symbols.bin (windows concatenated, one byte per symbol)
and tree_of.bin; --npy adds symbols.npy (uint8, windows × N) and
tree_of.npy (int32) for numpy. The same seed gives the same bytes whatever
--workers is. The paper: K=20000, N_K=5120, N=512 (1536 for D=5), depths
mixed up to 5.`)
	var pf priorFlags
	pf.register(fs, "3")
	K := fs.Int("K", 1000, "number of trees")
	NK := fs.Int("NK", 0, "symbols per tree N_K (default: N, i.e. one window per tree)")
	N := fs.Int("N", 256, "window length N")
	fresh := fs.Bool("fresh", true, "every window an independent sequence from the dummy context (test sets)")
	seed := fs.Uint64("seed", 1, "random seed")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines")
	out := fs.String("out", "", "output directory (must not exist or be empty)")
	npy := fs.Bool("npy", false, "also write symbols.npy and tree_of.npy")
	force := fs.Bool("force", false, "replace an existing non-empty output directory")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	pr, err := pf.prior()
	if err != nil {
		return err
	}
	if *NK == 0 {
		*NK = *N
	}
	ds, err := datadir.Make(dataset.Config{Prior: pr, K: *K, NK: *NK, N: *N, Fresh: *fresh, Seed: *seed},
		datadir.Options{Dir: *out, Workers: *workers, NPY: *npy, Force: *force, Warn: os.Stderr, Progress: os.Stderr, Memory: checkMemory})
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d trees, %d windows of N=%d (A=%d, D∈%v, λ=%g), checksum %s\n",
		*out, *K, ds.Windows(), *N, pr.A, pr.Depths, pr.Lambda, ds.Checksum()[:16])
	return nil
}
