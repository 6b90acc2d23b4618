package main

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/plot"
)

// plotFlags are the figure options shared by eval and plot.
type plotFlags struct {
	bits, logx, noExcess, noBands bool
	smooth                        int
	title, methods                string
	width, height                 float64
}

func (p *plotFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	IntVar(*int, string, int, string)
	StringVar(*string, string, string, string)
	Float64Var(*float64, string, float64, string)
}) {
	fs.BoolVar(&p.bits, "bits", false, "plot losses in bits instead of nats")
	fs.BoolVar(&p.logx, "logx", false, "logarithmic position axis")
	fs.BoolVar(&p.noExcess, "no-excess", false, "omit the excess-over-reference panel")
	fs.BoolVar(&p.noBands, "no-bands", false, "omit the 95% confidence bands")
	fs.IntVar(&p.smooth, "smooth", 0, "moving-average width in positions (0: auto = N/100, 1: none)")
	fs.StringVar(&p.title, "title", "", "figure title")
	fs.StringVar(&p.methods, "plot-methods", "", "comma-separated method names to draw (default: all)")
	fs.Float64Var(&p.width, "width", 8, "figure width in inches")
	fs.Float64Var(&p.height, "height", 6, "figure height in inches")
}

// save draws res to each path (.png, .svg or .pdf), refusing to overwrite
// existing files unless force.
func (p *plotFlags) save(res *eval.Result, paths []string, force bool) error {
	smooth := p.smooth
	if smooth == 0 {
		smooth = max(1, res.N/100)
	}
	opts := plot.Options{Title: p.title, Bits: p.bits, Smooth: smooth, LogX: p.logx, Excess: !p.noExcess && len(res.Methods) > 1, NoBands: p.noBands}
	if p.methods != "" {
		opts.Methods = strings.Split(p.methods, ",")
	}
	fig, err := plot.LossVsPosition(res, opts)
	if err != nil {
		return err
	}
	for _, path := range paths {
		if !force {
			if err := fsutil.CheckNew(path); err != nil {
				return err
			}
		}
		if err := fig.Save(path, plot.Length(p.width)*plot.Inch, plot.Length(p.height)*plot.Inch); err != nil {
			return err
		}
		fmt.Printf("wrote %s\n", path)
	}
	return nil
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
	if err := checkOutputs(*force, fs.Args()[1:]...); err != nil {
		return err
	}
	res, err := eval.LoadJSONFile(fs.Arg(0))
	if err != nil {
		return err
	}
	return pf.save(res, fs.Args()[1:], *force)
}
