package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/progress"
)

func runQuickstart(args []string) error {
	fs := newFlags("quickstart", "[flags]", `
The small default end-to-end run (seconds on 2 cores): samples 200 training
and 1000 test trees from the paper's prior with A=3, D=3, λ=0.15, α=0.5,
one fresh window of N=256 symbols per test tree; tunes Kneser–Ney's δ on the
training windows; evaluates CTW, KN, PPM (method A), an order-3 Markov
estimator and the unigram in context on the test windows; and writes into
--out: data/train, data/test (data sets), tree0.{svg,png,json} (the first
test tree), results.{json,csv}, summary.txt and loss.{png,svg} (like the
paper's Fig. 3 with an excess-over-CTW panel).`)
	q := experiment.DefaultQuick()
	out := fs.String("out", "quickstart", "output directory")
	fs.IntVar(&q.K, "K", q.K, "test windows (trees)")
	fs.IntVar(&q.KTrain, "K-train", q.KTrain, "training windows for tuning KN")
	fs.IntVar(&q.N, "N", q.N, "window length")
	D := fs.Int("D", 3, "maximum depth D of the prior")
	fs.Float64Var(&q.Prior.Lambda, "lambda", q.Prior.Lambda, "stop probability λ")
	fs.StringVar(&q.Methods, "methods", q.Methods, "methods (see 'vomc eval -h')")
	fs.Uint64Var(&q.Seed, "seed", q.Seed, "random seed")
	fs.IntVar(&q.Workers, "workers", runtime.GOMAXPROCS(0), "worker goroutines")
	force := fs.Bool("force", false, "overwrite the outputs of an earlier run")
	if err := parse(fs, args); err != nil {
		return err
	}
	q.Prior.Depths = []int{*D}
	if err := checkQuickstartOutputs(*out, *force); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var mu sync.Mutex
	var bar *progress.Bar
	cur := ""
	res, err := experiment.Quickstart(ctx, q, *out, *force, func(stage string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if stage != cur {
			bar.Done()
			bar, cur = progress.New(os.Stderr, stage, total).DelayStart(2*time.Second), stage
		}
		bar.Update(done, total)
	})
	bar.Done()
	if err != nil {
		return err
	}
	if err := res.WriteSummaryTable(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s (figure: %s)\n", *out, filepath.Join(*out, experiment.Outputs.PNG))
	return nil
}

// checkQuickstartOutputs checks quickstart's outputs before any work: the
// files of the evaluation and the first tree in out, and the data sets
// out/data/train and out/data/test.
func checkQuickstartOutputs(out string, force bool) error {
	if err := checkOutputDir(out, force, experiment.Outputs.JSON, experiment.Outputs.CSV, experiment.Outputs.Summary,
		experiment.Outputs.PNG, experiment.Outputs.SVG, "tree0.svg", "tree0.png", "tree0.json"); err != nil {
		return err
	}
	for _, d := range []string{"train", "test"} {
		if err := checkOutputDir(filepath.Join(out, "data", d), force, dataset.ManifestFile); err != nil {
			return err
		}
	}
	return nil
}
