package ctwfile

import (
	"flag"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/internal/symbols"
)

// AddFlags declares `vomc ctw`'s flags on fs, writing into o, with their
// defaults (text mode, D = 5, α = 1/2, the condition initial context).
// The file and λ (a number or "auto", AutoLambda) are the command's.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	o.Mode, o.Init = symbols.Text, ctw.Condition
	fs.Var(&o.Mode, "mode", "file mode: text (default) or raw")
	fs.StringVar(&o.Alphabet, "alphabet", "", "text alphabet in symbol order (default: the characters present, sorted)")
	fs.IntVar(&o.D, "D", 5, "maximum depth (order) D")
	fs.Float64Var(&o.Alpha, "alpha", 0.5, "Dirichlet parameter α of the leaves")
	fs.Var(&o.Init, "init", "initial context: pad (D zeros precede x), condition (first D symbols are context), shorter")
	fs.StringVar(&o.Map, "map", "", "write the MAP tree to this file (.json, .svg, .png or .dot)")
	fs.StringVar(&o.Weights, "weights", "", "write ω_{n,l} at every position to this CSV file")
	fs.StringVar(&o.Predictions, "predictions", "", "write the predictive distribution at every position to this CSV file")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
}
