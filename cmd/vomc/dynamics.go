package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/internal/progress"
)

func runDynamics(args []string) error {
	fs := newFlags("dynamics", "--run DIR --data TEST [flags]", `
How a model learned: for every training snapshot of the run in --run
('vomc train --snapshots log:20' keeps them), on the first --windows windows
of the test set --data, the excess loss over CTW (window and second half,
95% intervals) and the mean KL divergence per position from each reference
predictor — unigram, Markov(k) for k = 1..D, Kneser–Ney, CTW (--methods to
change) — to the model, so the algorithm the model is closest to can be read
off step by step; and the labels of its attention heads (relative position
d, suffix match k, with the null test of 'vomc attention'), dated by their
emergence. Writes dynamics.json, dynamics.csv, phases.txt (the sequence of
"closest algorithm" phases and the heads' emergence steps) and
dynamics.png/svg (divergence vs step, log scales) into --out.`)
	run := fs.String("run", "", "training run directory with snapshots/")
	data := fs.String("data", "", "test data set (the probe windows)")
	train := fs.String("train", "", "data set on which Kneser–Ney's discount is tuned (default: the probe windows)")
	windows := fs.Int("windows", 200, "number of probe windows (the first ones of --data)")
	ms := fs.String("methods", "", "reference methods (default: unigram, markov:k=1..D, kn, ctw for the data's prior)")
	headWindows := fs.Int("head-windows", 100, "probe windows the head labels are computed on (-1: no head labels)")
	maxK := fs.Int("max-k", 3, "largest offset d and suffix length k of the head hypotheses")
	out := fs.String("out", "", "output directory (default RUN/dynamics)")
	force := fs.Bool("force", false, "replace existing outputs")
	workers := fs.Int("workers", 0, "goroutines (0: all cores); the results do not depend on it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *run == "" || *data == "" || fs.NArg() != 0 {
		return usagef("--run DIR and --data DIR are required (and nothing else)")
	}
	if *windows < 2 || *maxK < 1 || *headWindows == 0 || *headWindows < -1 {
		return usagef("--windows ≥ 2, --max-k ≥ 1 and --head-windows ≥ 1 (or -1) please")
	}
	if *out == "" {
		*out = filepath.Join(*run, "dynamics")
	}
	for _, f := range []string{dynamics.Files.JSON, dynamics.Files.CSV, dynamics.Files.Phases, dynamics.Files.PNG, dynamics.Files.SVG} {
		if _, err := os.Stat(filepath.Join(*out, f)); err == nil && !*force {
			return fmt.Errorf("%s exists: use --force to replace it", filepath.Join(*out, f))
		}
	}
	snaps, err := dynamics.Snapshots(*run)
	if err != nil {
		return err
	}
	bar := progress.New(os.Stderr, "snapshots", len(snaps)).DelayStart(0)
	res, err := dynamics.Run(dynamics.RunConfig{Run: *run, Data: *data, Windows: *windows, Train: *train, Methods: *ms,
		HeadWindows: *headWindows, MaxK: *maxK, Null: attnmap.NullOptions{Seed: 1}, Workers: *workers,
		Progress: func(done, _ int) { bar.Set(done) }})
	bar.Done()
	if err != nil {
		return err
	}
	if err := res.Write(*out, "Training dynamics: "+filepath.Base(filepath.Clean(*run)), *force); err != nil {
		return err
	}
	fmt.Print(res.PhasesText())
	fmt.Printf("wrote %s/{%s,%s,%s,%s,%s}\n", *out, dynamics.Files.JSON, dynamics.Files.CSV, dynamics.Files.Phases, dynamics.Files.PNG, dynamics.Files.SVG)
	return nil
}
