package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/vomc/vomc/perf"
)

func runBench(args []string) error {
	fs := newFlags("bench", "[flags]", `
Measures CTW throughput on one core: the log marginal likelihood and the full
predictive distribution at every position, each also as a ratio to a
counts-only pass over the same data measured in the same run (the floor any
CTW implementation pays). Default: A=3, D=5, 1e6 symbols from a tree of the
paper's prior.`)
	A := fs.Int("A", 3, "alphabet size")
	D := fs.Int("D", 5, "maximum depth")
	lambda := fs.Float64("lambda", 0.15, "stop probability λ")
	n := fs.Int("n", 1_000_000, "number of symbols")
	reps := fs.Int("reps", 5, "repetitions (the best is reported)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *n < 1 || *reps < 1 {
		return usagef("-n and -reps must be positive")
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	r, err := perf.BenchCTW(*A, *D, *lambda, *n, *reps, *seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "%s/%s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.Version())
	r.Write(os.Stdout)
	return nil
}
