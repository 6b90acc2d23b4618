package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/trainrun"
)

func runEval(args []string) error {
	fs := newFlags("eval")
	o := experiment.EvalOptions{Methods: methods.MustParse("ctw,kn,ppm,unigram")}
	backendName := fs.String("backend", "cpu", "tf: and synth: methods: "+trainrun.BackendUsage)
	o.AddFlags(fs)
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
	o.Torch = &trainrun.Torch{Stderr: os.Stderr} // torch: methods; its interpreter decided once, by its Check
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
	D := fs.Int("D", 3, "maximum depth D of the prior")
	q.AddFlags(fs)
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
