package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/construct"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
)

func runAttention(args []string) error {
	fs := newFlags("attention")
	o := attnmap.RunOptions{Backend: compute()}
	fs.StringVar(&o.Model, "model", "", "model directory written by 'vomc train' (or a .safetensors file)")
	fs.StringVar(&o.Data, "data", "", "data set directory (from 'vomc data')")
	fs.IntVar(&o.Window, "window", 0, "with --data: the window (0-based)")
	fs.StringVar(&o.File, "file", "", "a symbol file instead of a data set")
	fs.StringVar(&o.Mode, "mode", "text", "with --file: text or raw")
	fs.StringVar(&o.Alphabet, "alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	fs.IntVar(&o.Start, "start", 0, "with --file: the window starts at this symbol (it has the model's N symbols, fewer at the end of the file)")
	fs.StringVar(&o.Out, "out", "", "output directory")
	fs.StringVar(&o.Queries, "queries", "", "comma-separated query positions of suffix_match (default: T−14 and T−2; the last position, T−1, has no training target, so its attention is untrained)")
	fs.IntVar(&o.K, "k", 3, "suffix length of suffix_match")
	fs.IntVar(&o.Offset, "offset", -1, "suffix_match offset: 0 (positions ending with the suffix) or 1 (positions right after it); -1: the head's better one")
	fs.StringVar(&o.Head, "head", "", "head of suffix_match as LAYER.HEAD, 1-based (default: the head with the largest mass above chance on the suffix matches of length --k)")
	fs.IntVar(&o.Windows, "windows", 16, "windows of the null test: --window and the next ones of --data (wrapping), or consecutive model-length windows of --file from --start")
	fs.IntVar(&o.Perms, "perms", 0, "permutations of the suffix-match null test (0: max(999, 20·tests/0.05))")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the null test's permutations")
	fs.IntVar(&o.D, "D", -1, "source depth D: hypotheses up to k, d = D+1 (default: the data set's largest depth; 3 with --file)")
	fs.Float64Var(&o.Gamma, "gamma", 0.5, "heatmap colour = weight^gamma")
	fs.StringVar(&o.Profile, "profile", "", "also write FILE.csv (every head's attention by query position: relative offsets d, suffix matches k at offsets 0 and 1, averaged over --profile-windows windows; attnmap.PositionProfile) and FILE.png (each labelled head's mass on its label's positions by position), and list the heads that fail in part of the window")
	fs.IntVar(&o.ProfileWindows, "profile-windows", 256, "with --profile: windows averaged (from --window of --data, wrapping, or consecutive windows of --file from --start)")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := o.Validate(); err != nil {
		return flagError(err)
	}
	if err := fsutil.CheckOutputs(os.Stderr, o.Force, o.Profile, o.ProfileFigurePath()); err != nil {
		return err
	}
	if err := fsutil.CheckOutputDir(os.Stderr, o.Out, o.Force, attnmap.OutFiles...); err != nil {
		return err
	}
	r, err := attnmap.Run(o)
	if err != nil {
		return flagError(err)
	}
	return r.WriteText(os.Stdout)
}

// checkDynamics checks dynamics' numbers and methods before any work.
func checkDynamics(cfg dynamics.RunConfig) error {
	if cfg.Windows < 2 || cfg.MaxK < 1 || cfg.HeadWindows == 0 || cfg.HeadWindows < -1 {
		return usagef("--windows ≥ 2, --max-k ≥ 1 and --head-windows ≥ 1 (or -1) please")
	}
	if cfg.Methods == "" {
		return nil
	}
	return asUsage(methods.Check(cfg.Methods))
}

func runDynamics(args []string) error {
	fs := newFlags("dynamics")
	cfg := dynamics.RunConfig{Null: attnmap.NullOptions{Seed: 1}, Backend: compute()}
	fs.StringVar(&cfg.Run, "run", "", "training run directory with snapshots/")
	fs.StringVar(&cfg.Data, "data", "", "test data set (the probe windows)")
	fs.StringVar(&cfg.Train, "train", "", "data set on which Kneser–Ney's discount is tuned (default: the probe windows)")
	fs.IntVar(&cfg.Windows, "windows", 200, "number of probe windows (the first ones of --data)")
	fs.StringVar(&cfg.Methods, "methods", "", "reference methods (default: unigram, markov:k=1..D, kn, ctw for the data's prior)")
	fs.IntVar(&cfg.HeadWindows, "head-windows", 50, "probe windows the head labels are computed on (-1: no head labels); 50 as in reproduce's dynamics stage")
	fs.Uint64Var(&cfg.Null.Seed, "null-seed", 1, "seed of the head labels' permutation test (reproduce's dynamics stage uses the study's seed)")
	fs.IntVar(&cfg.MaxK, "max-k", 3, "largest offset d and suffix length k of the head hypotheses")
	out := fs.String("out", "", "output directory (default RUN/dynamics)")
	label := fs.String("label", "", "the model's name in the figure's title and the phases text, e.g. 'TF(4,4) [seed 1]' (default: the run directory's name)")
	force := fs.Bool("force", false, "replace existing outputs")
	fs.IntVar(&cfg.Workers, "workers", 0, "goroutines (0: all cores); the results do not depend on it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Run == "" || cfg.Data == "" || fs.NArg() != 0 {
		return usagef("--run DIR and --data DIR are required (and nothing else)")
	}
	if err := checkDynamics(cfg); err != nil {
		return err
	}
	if *out == "" {
		*out = filepath.Join(cfg.Run, "dynamics")
	}
	if p := dynamics.ExistingOutput(*out); p != "" && !*force {
		return fmt.Errorf("%s exists: use --force to replace it", p)
	}
	build, err := pipeline.CodeKey()
	if err != nil {
		return err
	}
	ev := newSink(os.Stdout)
	defer ev.Close()
	cfg.Events, cfg.Identity = ev, build
	cfg.Checkpoint = filepath.Join(*out, dynamics.CheckpointFile)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := dynamics.Run(ctx, cfg)
	if err != nil {
		if _, serr := os.Stat(cfg.Checkpoint); ctx.Err() != nil && serr == nil {
			return fmt.Errorf("interrupted (the snapshots measured so far are kept in %s: run the same command again to resume): %w", cfg.Checkpoint, err)
		}
		return err
	}
	res.Label = *label
	title := *label
	if title == "" {
		title = filepath.Base(filepath.Clean(cfg.Run))
	}
	if err := res.Write(*out, "Training dynamics: "+title, *force); err != nil {
		return err
	}
	if err := dynamics.RemoveCheckpoint(cfg.Checkpoint); err != nil {
		return err
	}
	fmt.Print(res.PhasesText())
	fmt.Printf("wrote %s/{%s}\n", *out, strings.Join(dynamics.FileNames(), ","))
	return nil
}

// constructCmd is 'vomc construct', writing its report to w.
func constructCmd(args []string, w io.Writer) error {
	fs := newFlags("construct")
	var o construct.CompareOptions
	fs.IntVar(&o.A, "A", 3, "alphabet size")
	fs.IntVar(&o.D, "D", 2, "maximum depth D (≥ 1)")
	fs.Float64Var(&o.Lambda, "lambda", 0.15, "stop probability λ in (0,1)")
	fs.Float64Var(&o.Alpha, "alpha", 0.5, "Dirichlet parameter α")
	cS := fs.String("c", "inf", "attention temperature c: inf (exact hard-attention limit) or a positive number")
	fs.StringVar(&o.InputName, "input", "0120112", "input symbols: digits (A ≤ 10) or comma-separated integers")
	fs.IntVar(&o.N, "N", 0, "positional period N (0: the number of positions, len(input)+D+1)")
	fs.BoolVar(&o.Show, "show", false, "print the layout, the layers and every layer's intermediate quantities per position")
	fs.BoolVar(&o.LiteralInduction, "literal", false, "build the induction layers literally as in the paper (inexact; for comparison)")
	fs.StringVar(&o.Weights, "weights", "", "write the attention weights to this safetensors file")
	fs.StringVar(&o.ErrorPlot, "error-plot", "", "write the error-vs-c plot to this file (.png, .svg or .pdf)")
	fs.StringVar(&o.CRange, "c-range", "1,1000", "temperature range lo,hi of the error-vs-c plot (log-spaced)")
	fs.IntVar(&o.CPoints, "c-points", 25, "number of temperatures in the error-vs-c plot")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
	fs.StringVar(&o.FF, "ff", "exact", "FF sub-layers: exact (Go functions) or mlp (constructed ReLU networks, --width)")
	fs.IntVar(&o.Width, "width", 0, "with --ff mlp: the widest hidden layer of each FF network")
	fs.StringVar(&o.FFPlot, "ff-plot", "", "write max |P_TF − P_CTW| against the FF width W (ReLU networks, K = 1..--ff-max-k) to this file")
	fs.IntVar(&o.FFMaxK, "ff-max-k", 1024, "largest number of segments per smooth function in --ff-plot")
	fs.IntVar(&o.Random, "random", 0, "use n i.i.d. uniform random symbols (seed --seed) instead of --input")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of --random")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := fsutil.CheckOutputs(os.Stderr, o.Force, o.Weights, o.ErrorPlot); err != nil {
		return err
	}
	var err error
	if o.C, err = construct.ParseTemperature(*cS); err != nil {
		return usagef("--c %q: want inf or a positive number", *cS)
	}
	if o.Input, err = construct.ParseSymbols(o.InputName, o.A); err != nil {
		return asUsage(err)
	}
	return flagError(construct.Compare(w, o))
}
