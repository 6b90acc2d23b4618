package experiment

import (
	"flag"
	"runtime"

	"github.com/vomc/vomc/transformer"
)

// AddFlags declares `vomc eval`'s flags of the evaluation on fs, writing
// into o; o.Methods, as set before, is the default of --methods. The
// compute backend's flag and the figure's (plot.LossFlags) are the
// command's.
func (o *EvalOptions) AddFlags(fs *flag.FlagSet) {
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
}

// AddFlags declares `vomc quickstart`'s flags of the experiment on fs,
// writing into q, whose values as set before (DefaultQuick) are the
// defaults. The prior's depth and the output directory are the command's.
func (q *QuickConfig) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&q.K, "K", q.K, "test windows (trees)")
	fs.IntVar(&q.KTrain, "K-train", q.KTrain, "training windows for tuning KN")
	fs.IntVar(&q.N, "N", q.N, "window length")
	fs.Float64Var(&q.Prior.Lambda, "lambda", q.Prior.Lambda, "stop probability λ")
	fs.Var(&q.Methods, "methods", "methods (see 'vomc eval -h')")
	fs.Uint64Var(&q.Seed, "seed", q.Seed, "random seed")
	fs.IntVar(&q.Workers, "workers", runtime.GOMAXPROCS(0), "worker goroutines")
}

// AddFlags declares `vomc ablate`'s flags on fs, writing into o.
func (o *AblateRunOptions) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Model, "model", "", "model directory written by 'vomc train' (or a .safetensors file)")
	fs.StringVar(&o.Data, "data", "", "test data set (from 'vomc data'); its prior draws the reference windows of --mode mean|resample")
	fs.StringVar(&o.Out, "out", "", "output directory (ablate.json, ablate.txt, ablate.png)")
	fs.IntVar(&o.Windows, "windows", 0, "evaluate the first W windows of --data (0: all but the last --label-windows)")
	fs.Func("mode", "ablation of single heads and groups: zero (default), mean or resample (docs/commands.md)", func(s string) error {
		m, err := transformer.ParseAblation(s)
		o.Mode = m
		return err
	})
	fs.IntVar(&o.Refs, "refs", 0, "reference windows of --mode mean|resample (0: 256)")
	fs.IntVar(&o.Groups, "groups", 0, "random groups of each labelled group's size (0: 39)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the random groups")
	fs.IntVar(&o.LabelWindows, "label-windows", 0, "windows whose attention labels the heads, the ones after the evaluated windows (0: 16, as 'vomc attention')")
	fs.Float64Var(&o.Margin, "margin", 0, "tolerance of a head's exact pattern, nats/symbol (0: 0.005, the verdicts' margin)")
	fs.IntVar(&o.Workers, "workers", 0, "goroutines (0: all cores); the results do not depend on it")
	fs.BoolVar(&o.Force, "force", false, "replace existing outputs")
}
