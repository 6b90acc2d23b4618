package main

import (
	"os"
	"strings"

	"github.com/vomc/vomc/plot"
)

// plotFlags are the figure options shared by eval and plot.
type plotFlags struct {
	plot.LossFiles
	methods string
}

func (p *plotFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
}) {
	fs.BoolVar(&p.Bits, "bits", false, "plot losses in bits instead of nats")
	fs.BoolVar(&p.LogX, "logx", false, "logarithmic position axis")
	fs.BoolVar(&p.NoExcess, "no-excess", false, "omit the excess-over-reference panel")
	fs.BoolVar(&p.NoBands, "no-bands", false, "omit the 95% confidence bands")
	fs.IntVar(&p.Smooth, "smooth", 0, "moving-average width in positions (0: auto = N/100, 1: none)")
	fs.StringVar(&p.Title, "title", "", "figure title")
	fs.StringVar(&p.methods, "plot-methods", "", "comma-separated method names to draw (default: all)")
	fs.Float64Var(&p.Width, "width", 8, "figure width in inches")
	fs.Float64Var(&p.Height, "height", 6, "figure height in inches")
}

// options returns the figure options with --plot-methods split.
func (p *plotFlags) options() plot.LossFiles {
	if p.methods != "" {
		p.Methods = strings.Split(p.methods, ",")
	}
	return p.LossFiles
}

func runPlot(args []string) error {
	fs := newFlags("plot", "[flags] RESULT.json OUT.png [OUT.svg ...]", `
Draws a saved evaluation (the JSON written by 'vomc eval') like the paper's
Fig. 3: loss against position in the context window for every method, with
shaded 95% confidence bands, and below it each method's excess loss over the
reference (CTW) with paired bands. The format follows each output's
extension (.png, .svg, .pdf).`)
	var pf plotFlags
	pf.register(fs)
	force := fs.Bool("force", false, "overwrite existing output files")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usagef("want RESULT.json and at least one output file")
	}
	f := pf.options()
	f.Force, f.Log, f.Warn = *force, os.Stdout, os.Stderr
	return plot.SaveLossFiles(fs.Arg(0), fs.Args()[1:], f)
}
