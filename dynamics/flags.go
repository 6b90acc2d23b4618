package dynamics

import "flag"

// AddFlags declares `vomc dynamics`'s flags of the measurement on fs,
// writing into c, with their defaults (200 probe windows, head labels on
// 50 of them, null seed 1, hypotheses up to 3). The output directory, the
// label and --force are the command's (RunDir's arguments).
func (c *RunConfig) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Run, "run", "", "training run directory with snapshots/")
	fs.StringVar(&c.Data, "data", "", "test data set (the probe windows)")
	fs.StringVar(&c.Train, "train", "", "data set on which Kneser–Ney's discount is tuned (default: the probe windows)")
	fs.IntVar(&c.Windows, "windows", 200, "number of probe windows (the first ones of --data)")
	fs.Var(&c.Methods, "methods", "reference methods (default: unigram, markov:k=1..D, kn, ctw for the data's prior)")
	fs.IntVar(&c.HeadWindows, "head-windows", 50, "probe windows the head labels are computed on (-1: no head labels); 50 as in reproduce's dynamics stage")
	fs.Uint64Var(&c.Null.Seed, "null-seed", 1, "seed of the head labels' permutation test (reproduce's dynamics stage uses the study's seed)")
	fs.IntVar(&c.MaxK, "max-k", 3, "largest offset d and suffix length k of the head hypotheses")
	fs.IntVar(&c.Workers, "workers", 0, "goroutines (0: all cores); the results do not depend on it")
}
