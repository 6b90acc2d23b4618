package main

import (
	"errors"
	"os"

	"github.com/vomc/vomc/attnmap"
)

// attnReport is the content of the scores.json of 'vomc attention'.
type attnReport = attnmap.Report

const attentionHelp = `
Analyses the attention maps of a trained transformer on one window, as in
Section 4.3 and Fig. 5 of the paper. Writes into --out:

  heatmaps.png/svg      every head's attention map (rows = query positions,
                        columns = key positions), a row of panels per layer
  suffix_match.png/svg  for each --queries position, the positions whose
                        context matches the query's suffix of length --k
                        (black circles) against one head's attention weights
                        (red diamonds), as in Fig. 5 (bottom)
  scores.json           every head's scores and label

and prints a table of the heads. A head's score for a hypothesis is the
attention mass it puts on the positions the hypothesis selects, averaged
over --windows windows and the query positions i ≥ D+1: relative position
d (the position i−d, d = 0..D+1; d = 1 is a previous-token head) and
suffix match (k, offset) (k = 0..D+1): offset 0 selects the earlier
positions ending with the query's suffix of length k; offset 1 the
positions right after such an occurrence (where a head collecting
next-symbol statistics reads). Each score comes with its chance mass and
a p-value of a null test (attnmap.ScoreWindows): suffix matches against
pairing each window's attention with another window's symbols (random
window permutations, --perms, --seed), relative positions against a head
with no preference among the keys (Hoeffding bound). p-values are
Bonferroni-corrected over heads × hypotheses; a head is labelled only by
a hypothesis with corrected p < 0.05 and mass ≥ chance + 0.1, so uniform
or content-blind heads stay "unlabelled". The suffix_match head is the
one with the largest mass above chance (attnmap.SuffixPanel, the same
rule as 'vomc reproduce'). The figures show --window only. Positions are
0-based, layers and heads 1-based.`

func runAttention(args []string) error {
	fs := newFlags("attention", "--model DIR (--data DIR [--window I] | --file FILE) --out DIR [flags]", attentionHelp)
	var o attnmap.RunOptions
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
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if err := o.Validate(); err != nil {
		return flagError(err)
	}
	if err := checkOutputs(o.Force, o.Profile, o.ProfileFigurePath()); err != nil {
		return err
	}
	if err := checkOutputDir(o.Out, o.Force, attnmap.OutFiles...); err != nil {
		return err
	}
	r, err := attnmap.Run(o)
	if err != nil {
		return flagError(err)
	}
	return r.WriteText(os.Stdout)
}

// flagError makes an option error of a library (attnmap.OptionError,
// construct.OptionError) a usage error naming the options' flags; other
// errors are returned as they are.
func flagError(err error) error {
	var oe interface{ Flag(prefix string) string }
	if errors.As(err, &oe) {
		return usageError{oe.Flag("--")}
	}
	return err
}
