package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/explore"
	"github.com/vomc/vomc/internal/fsutil"
)

func runExplore(args []string) error {
	fs := newFlags("explore")
	model := fs.String("model", "", "model directories written by 'vomc train', comma-separated (with --demo: names of shipped models)")
	data := fs.String("data", "", "data set directory (from 'vomc data'): the windows shown")
	train := fs.String("train", "", "data set on whose windows Kneser–Ney's discount is tuned (default: the first 200 windows of --data)")
	methodList := fs.String("methods", "", "reference methods (default: bayes,ctw,kn,markov:k=1..D of the data's prior; bayes is left out where the prior has no exact Bayes predictor)")
	host := fs.String("host", "127.0.0.1", "interface to serve on; anything but a loopback address makes the page readable from other machines (a warning is printed)")
	port := fs.Int("port", 0, "port (0: a free one)")
	static := fs.String("static", "", "write one self-contained HTML page for --window to this file and exit (no server)")
	window := fs.Int("window", 0, "the window shown first (with --static: the page's window)")
	pos := fs.Int("t", -1, "the query position shown first (-1: near the end of the window)")
	demo := fs.Bool("demo", false, "open shipped models (--model NAMES to choose; default: "+strings.Join(explore.DefaultDemo(), ",")+") on test data generated from their recipe in memory")
	headWindows := fs.Int("head-windows", explore.DefaultHeadWindows, "windows of the head labels' null test (the first ones of --data)")
	meanWindows := fs.Int("mean-windows", explore.DefaultMeanWindows, "windows of the mean loss curves")
	maxK := fs.Int("max-k", 0, "largest offset d and suffix length k of the head hypotheses (0: D+1)")
	seed := fs.Uint64("seed", 1, "seed of the head labels' permutation test")
	force := fs.Bool("force", false, "with --static: overwrite an existing file")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *port < 0 || *port > 65535 {
		return usagef("--port %d is not a port (0..65535)", *port)
	}
	if *headWindows < 1 || *meanWindows < 1 || *maxK < 0 {
		return usagef("--head-windows and --mean-windows must be ≥ 1, --max-k ≥ 0")
	}
	var names []string
	for _, m := range strings.Split(*model, ",") {
		if m = strings.TrimSpace(m); m != "" {
			names = append(names, m)
		}
	}
	var o explore.Options
	var ds *dataset.Dataset
	if *data != "" {
		var err error
		if ds, err = dataset.Read(*data); err != nil {
			return err
		}
	}
	switch {
	case *demo:
		var err error
		if o, err = explore.Demo(names, ds, *data); err != nil {
			return fmt.Errorf("%w\nshipped models:\n%s", err, explore.DemoNames())
		}
	case len(names) == 0 || *data == "":
		return usagef("--model DIR[,DIR...] and --data DIR are required (or --demo)")
	default:
		for _, n := range names {
			src, err := explore.OpenDir(n)
			if err != nil {
				return err
			}
			o.Models = append(o.Models, src)
		}
		o.Data, o.DataName = ds, *data
	}
	if *train != "" {
		tr, err := dataset.ReadWindows(*train)
		if err != nil {
			return err
		}
		n := min(2000, tr.Windows())
		for w := range n {
			o.Tune = append(o.Tune, tr.Window(w))
		}
		o.TuneNote = fmt.Sprintf("%d windows of %s", n, *train)
	}
	o.Methods, o.HeadWindows, o.MeanWindows, o.MaxK, o.Seed, o.Log = *methodList, *headWindows, *meanWindows, *maxK, *seed, os.Stderr
	if *static != "" {
		if err := fsutil.CheckOutputs(os.Stderr, *force, *static); err != nil {
			return err
		}
	}
	if *window < 0 || *window >= o.Data.Windows() {
		return usagef("--window %d: the data set has windows 0..%d", *window, o.Data.Windows()-1)
	}
	s, err := explore.New(o)
	if err != nil {
		return err
	}
	if *static != "" {
		err := fsutil.WriteFile(*static, *force, func(w io.Writer) error { return s.WriteStatic(w, *window, *pos, true) })
		if err == nil {
			fmt.Printf("wrote %s (window %d)\n", *static, *window)
		}
		return err
	}
	ln, err := explore.Listen(*host, *port)
	if err != nil {
		return err
	}
	if ln.Warning != "" {
		fmt.Fprintln(os.Stderr, ln.Warning)
	}
	s.Labels(0, explore.FinalStep, false) // start labelling the first model's heads
	url := fmt.Sprintf("%s#w=%d", ln.URL, *window)
	if *pos >= 0 {
		url += fmt.Sprintf("&t=%d", *pos)
	}
	var list []string
	for _, m := range s.Meta().Models {
		list = append(list, m.Name)
	}
	fmt.Printf("vomc explore: %s on %s\n  %s\n(read-only; Ctrl-C to stop)\n", strings.Join(list, ", "), o.DataName, url)
	srv := &http.Server{Handler: s.Handler(ln.Allowed...)}
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
