package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/symbols"
)

const methodsHelp = `comma-separated methods, each name[:param=value...]:
  ctw[:D=5][:lambda=0.15][:alpha=0.5][:init=pad|condition|shorter][:form=blend|theorem1|ratio]
  kn[:order=D][:delta=δ][:cont]   (δ tuned on --train, else on the evaluated windows)
  ppm[:order=D][:escape=A|C|D][:excl][:norm]
  markov[:k=D][:alpha=0.5][:init=pad|shorter]
  unigram[:alpha=0.5]
  tf:path=DIR[:name=LABEL]   (a transformer trained by 'vomc train')
  construct[:D=5][:lambda=0.15][:alpha=0.5][:c=inf|50]   (the paper's (D+2)-layer CTW transformer)
  npy:path=FILE.npy[:name=LABEL]   (any model: float32/float64 array (windows, N, A), row [w,t] =
                                    P(x_{t+1} | x_1..x_t) of window w; see README)
omitted values come from the data set's prior (or the flags for a file)`

func runEval(args []string) error {
	fs := newFlags("eval", "[flags] (--data DIR | --file FILE) --out DIR", `
Evaluates predictors in context: every window is predicted symbol by symbol
from a fresh state, and the log-loss at each position is averaged over the
windows with 95% confidence intervals (Student t). Also reported: the mean
over the window and over its second half, and each method's excess over the
reference (CTW by default) with paired intervals. Writes results.json,
results.csv, summary.txt and loss.png/loss.svg (the paper's Fig. 3) into
--out, and prints the summary table.

Methods:
`+methodsHelp)
	data := fs.String("data", "", "data set directory (from 'vomc data')")
	file := fs.String("file", "", "a symbol file instead of a data set")
	mode := fs.String("mode", "text", "with --file: text or raw")
	alphabet := fs.String("alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	N := fs.Int("N", 0, "with --file: cut the file into windows of N symbols (0: the whole file is one window)")
	D := fs.Int("D", 3, "with --file: default depth/order of the methods")
	lam := fs.Float64("lambda", 0.15, "with --file: default CTW stop probability λ")
	alpha := fs.Float64("alpha", 0.5, "with --file: default CTW Dirichlet α")
	train := fs.String("train", "", "data set on which KN's δ is tuned (default: the evaluated windows themselves)")
	ms := fs.String("methods", "ctw,kn,ppm,unigram", "methods to evaluate (see above)")
	half := fs.Bool("half", false, "with --file: the protocol of Begleiter, El-Yaniv and Yona (2004) instead: learn on the first half of the file, freeze, and report the average log-loss in bits/symbol on the second half")
	ref := fs.String("reference", "", "reference method name for the excess (default: the CTW method)")
	out := fs.String("out", "", "output directory")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "worker goroutines")
	force := fs.Bool("force", false, "overwrite existing output files")
	export := fs.String("export", "", "also write every method's distributions to DIR/<method>.npy (float64, shape (windows, N, A), the npy method's layout)")
	var pf plotFlags
	pf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*data == "") == (*file == "") {
		return usagef("give exactly one of --data and --file")
	}
	if *half && *file == "" {
		return usagef("--half needs --file")
	}
	if *out == "" {
		return usagef("--out DIR is required")
	}
	var m symbols.Mode
	if *file != "" {
		var err error
		if m, err = symbols.ParseMode(*mode); err != nil {
			return usageError{err.Error()}
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_, err := experiment.RunEval(ctx, experiment.EvalOptions{Data: *data, File: *file, Mode: m, Alphabet: *alphabet,
		N: *N, D: *D, Lambda: *lam, Alpha: *alpha, Half: *half, Train: *train, Methods: *ms, Reference: *ref,
		Out: *out, Export: *export, Workers: *workers, Force: *force, Plot: pf.options().Options,
		Log: os.Stdout, Warn: os.Stderr, Progress: os.Stderr, Memory: checkMemory})
	return err
}

// sharedTreesWarning is experiment.SharedTreesWarning.
var sharedTreesWarning = experiment.SharedTreesWarning

// checkEvalMemory refuses evaluating spec on the data set data (tuned on
// train) when its estimate exceeds the available memory.
func checkEvalMemory(data, train, spec string, workers int) error {
	return experiment.CheckEvalMemory(data, train, spec, workers, checkMemory)
}
