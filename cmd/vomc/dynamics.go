package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
)

const dynamicsUsage = `
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
dynamics.png/svg (divergence vs step, log scales) into --out.`

func runDynamics(args []string) error {
	fs := newFlags("dynamics", "--run DIR --data TEST [flags]", dynamicsUsage)
	cfg := dynamics.RunConfig{Null: attnmap.NullOptions{Seed: 1}}
	fs.StringVar(&cfg.Run, "run", "", "training run directory with snapshots/")
	fs.StringVar(&cfg.Data, "data", "", "test data set (the probe windows)")
	fs.StringVar(&cfg.Train, "train", "", "data set on which Kneser–Ney's discount is tuned (default: the probe windows)")
	fs.IntVar(&cfg.Windows, "windows", 200, "number of probe windows (the first ones of --data)")
	fs.StringVar(&cfg.Methods, "methods", "", "reference methods (default: unigram, markov:k=1..D, kn, ctw for the data's prior)")
	fs.IntVar(&cfg.HeadWindows, "head-windows", 100, "probe windows the head labels are computed on (-1: no head labels)")
	fs.IntVar(&cfg.MaxK, "max-k", 3, "largest offset d and suffix length k of the head hypotheses")
	out := fs.String("out", "", "output directory (default RUN/dynamics)")
	force := fs.Bool("force", false, "replace existing outputs")
	fs.IntVar(&cfg.Workers, "workers", 0, "goroutines (0: all cores); the results do not depend on it")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.Run == "" || cfg.Data == "" || fs.NArg() != 0 {
		return usagef("--run DIR and --data DIR are required (and nothing else)")
	}
	if cfg.Windows < 2 || cfg.MaxK < 1 || cfg.HeadWindows == 0 || cfg.HeadWindows < -1 {
		return usagef("--windows ≥ 2, --max-k ≥ 1 and --head-windows ≥ 1 (or -1) please")
	}
	if *out == "" {
		*out = filepath.Join(cfg.Run, "dynamics")
	}
	if p := dynamics.ExistingOutput(*out); p != "" && !*force {
		return fmt.Errorf("%s exists: use --force to replace it", p)
	}
	cfg.Bar = os.Stderr
	res, err := dynamics.Run(cfg)
	if err != nil {
		return err
	}
	if err := res.Write(*out, "Training dynamics: "+filepath.Base(filepath.Clean(cfg.Run)), *force); err != nil {
		return err
	}
	fmt.Print(res.PhasesText())
	fmt.Printf("wrote %s/{%s}\n", *out, strings.Join(dynamics.FileNames(), ","))
	return nil
}
