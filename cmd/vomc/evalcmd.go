package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/trainrun"
)

func runEval(args []string) error {
	fs := newFlags("eval")
	o := experiment.EvalOptions{Methods: methods.MustParse("ctw,kn,ppm,unigram")}
	backendName := fs.String("backend", "cpu", "tf: and synth: methods: "+trainrun.BackendUsage)
	fs.StringVar(&o.Data, "data", "", "data set directory (from 'vomc data')")
	fs.StringVar(&o.File, "file", "", "a symbol file instead of a data set")
	fs.Var(&o.Mode, "mode", "with --file: text (default) or raw")
	fs.StringVar(&o.Alphabet, "alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	fs.IntVar(&o.N, "N", 0, "with --file, without --half: cut the file into windows of N symbols (0: the whole file is one window)")
	fs.IntVar(&o.D, "D", 3, "with --file: default depth/order of the methods")
	fs.Float64Var(&o.Lambda, "lambda", 0.15, "with --file: default CTW stop probability λ")
	fs.Float64Var(&o.Alpha, "alpha", 0.5, "with --file: default CTW Dirichlet α")
	fs.StringVar(&o.Train, "train", "", "without --half: data set on which KN's δ is tuned (default: the evaluated windows themselves)")
	fs.Var(&o.Methods, "methods", "methods to evaluate (see above)")
	fs.BoolVar(&o.Half, "half", false, "with --file: the protocol of Begleiter, El-Yaniv and Yona (2004) instead: learn on the first half of the file, freeze, and report the average log-loss in bits/symbol on the second half")
	fs.StringVar(&o.Reference, "reference", "", "without --half: the reference of the excesses, named by its spec (any spelling), its label, or its kind when one method has it (default: the first bayes method, else the first ctw, else the first method)")
	fs.Var(&o.Pairs, "pairs", "without --half: the paired difference A − B of two methods, named like --reference: A,B (more: A,B;C,D or the flag again), beside the excesses in the table, results.json and results.csv")
	fs.StringVar(&o.Out, "out", "", "output directory")
	fs.IntVar(&o.Workers, "workers", runtime.GOMAXPROCS(0), "without --half: worker goroutines")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
	fs.BoolVar(&o.Slide, "slide", false, "without --half: accept tf/synth models whose context is shorter than the windows (they slide; a warning is kept in results.json)")
	fs.StringVar(&o.Export, "export", "", "without --half: also write every method's distributions to DIR/<method>.npy (float64, shape (windows, N, A), the npy method's layout)")
	var pf plot.LossFlags
	inMode(fs, "without --half", func() { pf.AddFlags(fs) })
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if err := checkEval(&o); err != nil {
		return err
	}
	be, done, err := trainrun.Spec{Backend: *backendName, CPU: compute()}.OpenBackend(o.Methods.UsesBackend())
	if err != nil {
		return trainError(err, "eval", o.Out)
	}
	defer done()
	files, err := pf.Files()
	if err != nil {
		return asUsage(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ev := newSink(os.Stdout)
	defer ev.Close()
	o.Plot, o.Events, o.MemoryLimit, o.Backend = files.Options, ev, memoryLimit(), be
	_, err = experiment.RunEval(ctx, o)
	return flagError(usageOf[*experiment.SlideError](err, ""))
}

// checkEval checks what only eval's command line has, and the methods,
// before any work.
func checkEval(o *experiment.EvalOptions) error {
	switch {
	case (o.Data == "") == (o.File == ""):
		return usagef("give exactly one of --data and --file")
	case o.Out == "":
		return usagef("--out DIR is required")
	}
	return asUsage(o.CheckMethods())
}

func runPlot(args []string) error {
	fs := newFlags("plot")
	var pf plot.LossFlags
	pf.AddFlags(fs)
	force := fs.Bool("force", false, "overwrite existing output files")
	if err := parseArgs(fs, args, -2, "RESULT.json and at least one output file"); err != nil {
		return err
	}
	f, err := pf.Files()
	if err != nil {
		return asUsage(err)
	}
	f.Force, f.Events = *force, newSink(os.Stdout)
	return plot.SaveLossFiles(fs.Arg(0), fs.Args()[1:], f)
}

func runQuickstart(args []string) error {
	fs := newFlags("quickstart")
	q := experiment.DefaultQuick()
	out := fs.String("out", "quickstart", "output directory")
	fs.IntVar(&q.K, "K", q.K, "test windows (trees)")
	fs.IntVar(&q.KTrain, "K-train", q.KTrain, "training windows for tuning KN")
	fs.IntVar(&q.N, "N", q.N, "window length")
	D := fs.Int("D", 3, "maximum depth D of the prior")
	fs.Float64Var(&q.Prior.Lambda, "lambda", q.Prior.Lambda, "stop probability λ")
	fs.Var(&q.Methods, "methods", "methods (see 'vomc eval -h')")
	fs.Uint64Var(&q.Seed, "seed", q.Seed, "random seed")
	fs.IntVar(&q.Workers, "workers", runtime.GOMAXPROCS(0), "worker goroutines")
	force := fs.Bool("force", false, "overwrite the outputs of an earlier run")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if err := q.Methods.Check(); err != nil { // before any work
		return asUsage(err)
	}
	ev := newSink(os.Stdout)
	q.Prior.Depths, q.Events = []int{*D}, ev
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := experiment.Quickstart(ctx, q, *out, *force)
	ev.Close()
	if err != nil {
		return err
	}
	if err := res.WriteSummaryTable(os.Stdout); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s (figure: %s)\n", *out, filepath.Join(*out, experiment.Outputs.PNG))
	return nil
}
