package explore

import (
	"flag"
	"strings"
)

// AddFlags declares `vomc explore`'s flags of what to open and of the
// server's options on fs, writing into src and o, with their defaults
// (DefaultHeadWindows, DefaultMeanWindows, seed 1). Where and how the page
// is shown (host, port, a static file, the first window and position) is
// the command's.
func AddFlags(fs *flag.FlagSet, src *Source, o *Options) {
	fs.StringVar(&src.Models, "model", "", "model directories written by 'vomc train', comma-separated (with --demo: names of shipped models)")
	fs.StringVar(&src.Data, "data", "", "data set directory (from 'vomc data'): the windows shown")
	fs.StringVar(&src.Train, "train", "", "data set on whose windows Kneser–Ney's discount is tuned (default: the first 200 windows of --data)")
	fs.Var(&o.Methods, "methods", "reference methods (default: bayes,ctw,kn,markov:k=1..D of the data's prior; bayes is left out where the prior has no exact Bayes predictor)")
	fs.BoolVar(&src.Demo, "demo", false, "open shipped models on test data generated from their recipe in memory; --model NAMES chooses them (default: "+strings.Join(DefaultDemo(), ",")+"; sets that open together: "+strings.Join(DemoSets(), " | ")+")")
	fs.IntVar(&o.HeadWindows, "head-windows", DefaultHeadWindows, "windows of the head labels' null test (the first ones of --data)")
	fs.IntVar(&o.MeanWindows, "mean-windows", DefaultMeanWindows, "windows of the mean loss curves")
	fs.IntVar(&o.MaxK, "max-k", 0, "largest offset d and suffix length k of the head hypotheses (0: D+1)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the head labels' permutation test")
}
