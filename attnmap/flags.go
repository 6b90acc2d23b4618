package attnmap

import "flag"

// AddFlags defines the flags of 'vomc attention' on fs into o, with their
// defaults; a flag is its option's name as OptionError names it for a
// command line (ProfileWindows: --profile-windows).
func (o *RunOptions) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Model, "model", "", "model directory written by 'vomc train' (or a .safetensors file)")
	fs.StringVar(&o.Data, "data", "", "data set directory (from 'vomc data')")
	fs.IntVar(&o.Window, "window", 0, "with --data: the window (0-based)")
	fs.StringVar(&o.File, "file", "", "a symbol file instead of a data set")
	fs.StringVar(&o.Mode, "mode", "text", "with --file: text or raw")
	fs.StringVar(&o.Alphabet, "alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	fs.IntVar(&o.Start, "start", 0, "with --file: the window starts at this symbol (it has the model's N symbols, fewer at the end of the file)")
	fs.StringVar(&o.Out, "out", "", "output directory")
	fs.StringVar(&o.Queries, "queries", "", "comma-separated query positions of suffix_match (default: T−14 and T−2; the last position, T−1, has no training target, so its attention is untrained)")
	fs.IntVar(&o.K, "k", 3, "suffix length of suffix_match")
	fs.IntVar(&o.Offset, "offset", -1, "suffix_match offset: 0 (positions ending with the suffix) or 1 (positions right after it); -1: the head's better one")
	fs.StringVar(&o.Head, "head", "", "head of suffix_match as LAYER.HEAD, 1-based (default: the head with the largest mass above chance on the suffix matches of length --k)")
	fs.IntVar(&o.Windows, "windows", 16, "windows of the null test: --window and the next ones of --data (wrapping), or consecutive model-length windows of --file from --start")
	fs.IntVar(&o.Perms, "perms", 0, "permutations of the suffix-match null test (0: max(999, 20·tests/0.05))")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the null test's permutations")
	fs.IntVar(&o.D, "D", -1, "source depth D: hypotheses up to k, d = D+1 (default: the data set's largest depth; 3 with --file)")
	fs.Float64Var(&o.Gamma, "gamma", 0.5, "heatmap colour = weight^gamma")
	fs.StringVar(&o.Profile, "profile", "", "also write FILE.csv (every head's attention by query position: relative offsets d, suffix matches k at offsets 0 and 1, averaged over --profile-windows windows; attnmap.PositionProfile) and FILE.png (each labelled head's mass on its label's positions by position), and list the heads that fail in part of the window")
	fs.IntVar(&o.ProfileWindows, "profile-windows", 256, "with --profile: windows averaged (from --window of --data, wrapping, or consecutive windows of --file from --start)")
	fs.BoolVar(&o.Force, "force", false, "overwrite existing output files")
}
