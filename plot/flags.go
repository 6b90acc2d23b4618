package plot

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// LossFlags are the command-line flags of the loss figure, shared by 'vomc
// eval' and 'vomc plot': the drawing options of LossFiles, and the methods
// drawn and the excess panel's range as given (read by Files).
type LossFlags struct {
	LossFiles
	methods, ylim string
}

// AddFlags defines the figure's flags on fs.
func (p *LossFlags) AddFlags(fs *flag.FlagSet) {
	fs.BoolVar(&p.Bits, "bits", false, "plot losses in bits instead of nats")
	fs.BoolVar(&p.LogX, "logx", false, "logarithmic position axis")
	fs.BoolVar(&p.NoExcess, "no-excess", false, "omit the excess-over-reference panel")
	fs.BoolVar(&p.NoBands, "no-bands", false, "omit the 95% confidence bands")
	fs.IntVar(&p.Smooth, "smooth", 0, "moving-average width in positions (0: auto = N/100, at least 5 (N/25 below N=125); 1: none)")
	fs.StringVar(&p.Title, "title", "", "figure title")
	fs.StringVar(&p.methods, "plot-methods", "", "methods to draw: short specs (ctw, tf, markov:k=3) or printed labels, separated by commas (labels' own commas are kept) or ';' (default: all)")
	fs.StringVar(&p.ylim, "ylim", "auto", "excess panel's range: auto (the methods that matter: the better half), all (every method), log (a logarithmic axis from 1e-4), MAX or MIN:MAX (in the plotted unit)")
	fs.Float64Var(&p.Width, "width", 8, "figure width in inches")
	fs.Float64Var(&p.Height, "height", 6, "figure height in inches")
}

// Files returns the figure options with --plot-methods split
// (SplitMethods) and --ylim read; an error names the flag.
func (p *LossFlags) Files() (LossFiles, error) {
	if p.methods != "" {
		p.Methods = SplitMethods(p.methods)
	}
	switch lo, hi, two := strings.Cut(p.ylim, ":"); {
	case p.ylim == "auto":
	case p.ylim == "all":
		p.ExcessAll = true
	case p.ylim == "log":
		p.ExcessLog = true
	default:
		if !two {
			lo, hi = "0", p.ylim
		}
		a, err1 := strconv.ParseFloat(lo, 64)
		b, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || !(b > a) {
			return p.LossFiles, fmt.Errorf("--ylim %q: want auto, all, log, MAX or MIN:MAX with MIN < MAX", p.ylim)
		}
		p.ExcessYMin, p.ExcessYMax = a, b
	}
	return p.LossFiles, nil
}
