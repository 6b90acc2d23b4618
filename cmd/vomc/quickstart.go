package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/vomc/vomc/experiment"
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
	q.Prior.Depths, q.Warn = []int{*D}, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	update, done := experiment.StageBars(os.Stderr)
	res, err := experiment.Quickstart(ctx, q, *out, *force, update)
	done()
	if err != nil {
		return err
	}
	if err := res.WriteSummaryTable(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s (figure: %s)\n", *out, filepath.Join(*out, experiment.Outputs.PNG))
	return nil
}
