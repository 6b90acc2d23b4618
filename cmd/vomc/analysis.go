package main

import (
	"cmp"
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
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/probe"
)

func runAttention(args []string) error {
	fs := newFlags("attention")
	o := attnmap.RunOptions{Backend: compute()}
	o.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
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

func runDynamics(args []string) error {
	fs := newFlags("dynamics")
	cfg := dynamics.RunConfig{Backend: compute()}
	cfg.AddFlags(fs)
	out := fs.String("out", "", "output directory (default RUN/dynamics)")
	label := fs.String("label", "", "the model's name in the figure's title and the phases text, e.g. 'TF(4,4) [seed 1]' (default: the run directory's name)")
	force := fs.Bool("force", false, "replace existing outputs")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if cfg.Run == "" || cfg.Data == "" {
		return usagef("--run DIR and --data DIR are required")
	}
	if err := cfg.Check(); err != nil {
		return flagError(err)
	}
	build, err := pipeline.CodeKey()
	if err != nil {
		return err
	}
	ev := newSink(os.Stdout)
	defer ev.Close()
	cfg.Events, cfg.Identity = ev, build
	dir := cmp.Or(*out, filepath.Join(cfg.Run, "dynamics"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := dynamics.RunDir(ctx, cfg, dir, *label, *force)
	if err != nil {
		return err
	}
	fmt.Print(res.PhasesText())
	fmt.Printf("wrote %s/{%s}\n", dir, strings.Join(dynamics.FileNames(), ","))
	return nil
}

// constructCmd is 'vomc construct', writing its report to w.
func constructCmd(args []string, w io.Writer) error {
	fs := newFlags("construct")
	var o construct.CompareOptions
	o.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	if err := fsutil.CheckOutputs(os.Stderr, o.Force, o.Weights, o.ErrorPlot); err != nil {
		return err
	}
	var err error
	if o.Input, err = construct.ParseSymbols(o.InputName, o.A); err != nil {
		return asUsage(err)
	}
	return flagError(construct.Compare(w, o))
}

func runProbe(args []string) error {
	fs := newFlags("probe")
	f := probe.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	o, err := f.Options()
	if err != nil {
		return usagef("%v", err)
	}
	ev := newSink(os.Stdout)
	o.Backend, o.Events, o.MemoryLimit = compute(), ev, memoryLimit()
	res, err := probe.Run(context.Background(), o) // an interrupt ends it at once: nothing is written before the end
	if ev.Close(); err != nil {
		return flagError(err)
	}
	return res.WriteText(os.Stdout)
}

// runAblate is 'vomc ablate': which heads of a trained transformer its
// loss needs (experiment.RunAblate), printed as tables.
func runAblate(args []string) error {
	fs := newFlags("ablate")
	o := experiment.AblateRunOptions{Backend: compute()}
	o.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	ev := newSink(os.Stdout)
	o.Events = ev
	r, err := experiment.RunAblate(context.Background(), o) // an interrupt ends it at once: nothing is written before the end
	if ev.Close(); err != nil {
		return flagError(err)
	}
	r.WriteText(os.Stdout)
	fmt.Printf("wrote %s/{%s}\n", o.Out, strings.Join(experiment.AblateFiles, ","))
	return nil
}
