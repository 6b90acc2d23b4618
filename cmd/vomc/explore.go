package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vomc/vomc/explore"
	"github.com/vomc/vomc/internal/fsutil"
)

// exploreCmd is a parsed 'vomc explore' command line: what to open, the
// server's options, and where and how to show the page.
type exploreCmd struct {
	src          explore.Source
	o            explore.Options
	host, static string
	port, window int
	pos          int
	force        bool
}

func parseExplore(args []string) (*exploreCmd, error) {
	fs, c := newFlags("explore"), &exploreCmd{}
	explore.AddFlags(fs, &c.src, &c.o)
	fs.StringVar(&c.host, "host", "127.0.0.1", "without --static: interface to serve on; anything but a loopback address makes the page readable from other machines (a warning is printed)")
	fs.IntVar(&c.port, "port", 0, "without --static: port (0: a free one)")
	fs.StringVar(&c.static, "static", "", "write one self-contained HTML page for --window to this file and exit (no server)")
	fs.IntVar(&c.window, "window", 0, "the window shown first (with --static: the page's window)")
	fs.IntVar(&c.pos, "t", -1, "the query position shown first (-1: near the end of the window)")
	fs.BoolVar(&c.force, "force", false, "with --static: overwrite an existing file")
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return nil, err
	}
	switch {
	case c.port < 0 || c.port > 65535:
		return nil, usagef("--port %d is not a port (0..65535)", c.port)
	case c.o.HeadWindows < 1 || c.o.MeanWindows < 1 || c.o.MaxK < 0:
		return nil, usagef("--head-windows and --mean-windows must be ≥ 1, --max-k ≥ 0")
	case !c.src.Demo && (strings.Trim(c.src.Models, ", ") == "" || c.src.Data == ""):
		return nil, usagef("--model DIR[,DIR...] and --data DIR are required (or --demo)")
	}
	return c, nil
}

func runExplore(args []string) error {
	c, err := parseExplore(args)
	if err != nil {
		return err
	}
	if err := fsutil.CheckOutputs(os.Stderr, c.force, c.static); err != nil {
		return err
	}
	c.o.Events, c.o.Backend = newSink(os.Stderr), compute()
	o, err := explore.Open(c.src, c.o)
	if err != nil {
		return flagError(err)
	}
	if c.window < 0 || c.window >= o.Data.Windows() {
		return usagef("--window %d: the data set has windows 0..%d", c.window, o.Data.Windows()-1)
	}
	s, err := explore.New(o)
	if err != nil {
		return err
	}
	if c.static != "" {
		err := fsutil.WriteFile(c.static, c.force, func(w io.Writer) error { return s.WriteStatic(w, c.window, c.pos, true) })
		if err == nil {
			fmt.Printf("wrote %s (window %d)\n", c.static, c.window)
		}
		return err
	}
	ln, err := explore.Listen(c.host, c.port)
	if err != nil {
		return err
	}
	if ln.Warning != "" {
		fmt.Fprintln(os.Stderr, ln.Warning)
	}
	fmt.Printf("vomc explore: %s on %s\n  %s\n(read-only; Ctrl-C to stop)\n", strings.Join(s.ModelNames(), ", "), o.DataName, ln.PageURL(c.window, c.pos))
	return s.Serve(ln)
}
