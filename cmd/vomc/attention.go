package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/transformer"
)

// The files 'vomc attention' writes into --out.
const (
	attnHeatPNG   = "heatmaps.png"
	attnHeatSVG   = "heatmaps.svg"
	attnSuffixPNG = "suffix_match.png"
	attnSuffixSVG = "suffix_match.svg"
	attnScores    = "scores.json"
)

// attnReport is the content of scores.json.
type attnReport struct {
	Model  string `json:"model"`
	Source string `json:"source"`
	// Window is the data set window (−1 with --file); Start the file
	// offset of the window (0 with --data).
	Window int `json:"window"`
	Start  int `json:"start"`
	T      int `json:"T"`
	D      int `json:"D"`
	MaxK   int `json:"max_k"`
	// Windows are the windows of the null test (data set indices, or
	// file offsets with --file); Perms its permutations (0: the
	// default), Seed their seed; Alpha the family-wise level
	// (Bonferroni over heads × hypotheses) and MinLift the least mass
	// above chance that labels a head.
	Windows []int               `json:"windows"`
	Perms   int                 `json:"perms"`
	Seed    uint64              `json:"seed"`
	Alpha   float64             `json:"alpha"`
	MinLift float64             `json:"min_lift"`
	Heads   []attnmap.HeadScore `json:"heads"`
	Figure  attnmap.Figure      `json:"suffix_match_figure"`
}

func runAttention(args []string) error {
	fs := newFlags("attention", "--model DIR (--data DIR [--window I] | --file FILE) --out DIR [flags]", `
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
0-based, layers and heads 1-based.`)
	model := fs.String("model", "", "model directory written by 'vomc train' (or a .safetensors file)")
	data := fs.String("data", "", "data set directory (from 'vomc data')")
	window := fs.Int("window", 0, "with --data: the window (0-based)")
	file := fs.String("file", "", "a symbol file instead of a data set")
	mode := fs.String("mode", "text", "with --file: text or raw")
	alphabet := fs.String("alphabet", "", "with --file (text): alphabet in symbol order (default: characters present, sorted)")
	start := fs.Int("start", 0, "with --file: the window starts at this symbol (it has the model's N symbols, fewer at the end of the file)")
	out := fs.String("out", "", "output directory")
	queries := fs.String("queries", "", "comma-separated query positions of suffix_match (default: T−14 and T−2; the last position, T−1, has no training target, so its attention is untrained)")
	k := fs.Int("k", 3, "suffix length of suffix_match")
	offset := fs.Int("offset", -1, "suffix_match offset: 0 (positions ending with the suffix) or 1 (positions right after it); -1: the head's better one")
	head := fs.String("head", "", "head of suffix_match as LAYER.HEAD, 1-based (default: the head with the largest mass above chance on the suffix matches of length --k)")
	nwin := fs.Int("windows", 16, "windows of the null test: --window and the next ones of --data (wrapping), or consecutive model-length windows of --file from --start")
	perms := fs.Int("perms", 0, "permutations of the suffix-match null test (0: max(999, 20·tests/0.05))")
	seed := fs.Uint64("seed", 1, "seed of the null test's permutations")
	D := fs.Int("D", -1, "source depth D: hypotheses up to k, d = D+1 (default: the data set's largest depth; 3 with --file)")
	gamma := fs.Float64("gamma", 0.5, "heatmap colour = weight^gamma")
	profile := fs.String("profile", "", "also write FILE.csv (every head's attention by query position: relative offsets d, suffix matches k at offsets 0 and 1, averaged over --profile-windows windows; attnmap.PositionProfile) and FILE.png (each labelled head's mass on its label's positions by position), and list the heads that fail in part of the window")
	pwin := fs.Int("profile-windows", 256, "with --profile: windows averaged (from --window of --data, wrapping, or consecutive windows of --file from --start)")
	force := fs.Bool("force", false, "overwrite existing output files")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	if *model == "" || *out == "" {
		return usagef("--model and --out are required")
	}
	if (*data == "") == (*file == "") {
		return usagef("give exactly one of --data and --file")
	}
	if *k < 0 {
		return usagef("--k %d: want ≥ 0", *k)
	}
	if *offset < -1 || *offset > 1 {
		return usagef("--offset %d: want 0, 1 or -1 (auto)", *offset)
	}
	if *nwin < 1 || *perms < 0 {
		return usagef("--windows %d, --perms %d: want ≥ 1 and ≥ 0", *nwin, *perms)
	}
	if *pwin < 1 {
		return usagef("--profile-windows %d: want ≥ 1", *pwin)
	}
	profilePNG := strings.TrimSuffix(*profile, filepath.Ext(*profile)) + ".png"
	if *profile != "" {
		if !strings.EqualFold(filepath.Ext(*profile), ".csv") {
			return usagef("--profile %s: want a .csv file name", *profile)
		}
		if err := checkOutputs(*force, *profile, profilePNG); err != nil {
			return err
		}
	}
	if !(*gamma > 0) || math.IsInf(*gamma, 1) {
		return usagef("--gamma %v: want a finite number > 0", *gamma)
	}
	outNames := []string{attnHeatPNG, attnHeatSVG, attnSuffixPNG, attnSuffixSVG, attnScores}
	if err := checkOutputDir(*out, *force, outNames...); err != nil {
		return err
	}
	paths := map[string]string{}
	for _, name := range outNames {
		paths[name] = filepath.Join(*out, name)
	}
	m, err := loadModel(*model)
	if err != nil {
		return err
	}
	N, A := m.Config.Context, m.Config.Alphabet

	rep := attnReport{Model: m.Name(), Window: -1, Perms: *perms, Seed: *seed, Alpha: attnmap.Alpha, MinLift: attnmap.MinLift}
	var xs [][]byte  // the windows of the null test, the shown one first
	var pxs [][]byte // the windows of --profile
	depth := *D
	if *data != "" {
		if *start != 0 {
			return usagef("--start is for --file (use --window with --data)")
		}
		ds, err := dataset.Read(*data)
		if err != nil {
			return err
		}
		cfg := ds.Config()
		if cfg.Prior.A != A {
			return fmt.Errorf("the model has alphabet size %d, the data set %s %d", A, *data, cfg.Prior.A)
		}
		if *window < 0 || *window >= ds.Windows() {
			return usagef("--window %d outside 0..%d", *window, ds.Windows()-1)
		}
		for i := range min(*nwin, ds.Windows()) {
			w := (*window + i) % ds.Windows()
			xs = append(xs, ds.Window(w))
			rep.Windows = append(rep.Windows, w)
		}
		if *profile != "" {
			for i := range min(*pwin, ds.Windows()) {
				pxs = append(pxs, ds.Window((*window+i)%ds.Windows()))
			}
		}
		if depth < 0 {
			depth = 0
			for _, d := range cfg.Prior.Depths {
				depth = max(depth, d)
			}
		}
		rep.Source, rep.Window = *data, *window
	} else {
		md, err := symbols.ParseMode(*mode)
		if err != nil {
			return usageError{err.Error()}
		}
		all, al, err := symbols.ReadFile(*file, md, *alphabet)
		if err != nil {
			return err
		}
		if al.Size() > A {
			return fmt.Errorf("%s has %d symbols (%v), the model's alphabet %d", *file, al.Size(), al, A)
		}
		if *start < 0 || *start >= len(all) {
			return usagef("--start %d outside 0..%d (the file's length)", *start, len(all)-1)
		}
		for off := *start; len(xs) < *nwin && (len(xs) == 0 || off+N <= len(all)); off += N {
			xs = append(xs, all[off:min(off+N, len(all))])
			rep.Windows = append(rep.Windows, off)
		}
		if *profile != "" {
			for off := *start; len(pxs) < *pwin && (len(pxs) == 0 || off+N <= len(all)); off += N {
				pxs = append(pxs, all[off:min(off+N, len(all))])
			}
		}
		if depth < 0 {
			depth = 3
		}
		rep.Source, rep.Start = *file, *start
	}
	xs, rep.Windows = attnmap.Windows(xs, rep.Windows, N)
	x := xs[0]
	T := len(x)
	maxK := max(depth+1, *k)
	rep.T, rep.D, rep.MaxK = T, depth, maxK

	qs := attnmap.DefaultQueries(T)
	if *queries != "" {
		qs = nil
		for _, f := range strings.Split(*queries, ",") {
			q, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || q < 0 || q >= T {
				return usagef("--queries: %q is not a position 0..%d of the window", f, T-1)
			}
			qs = append(qs, q)
		}
	}
	layer, hd := 0, 0 // the head of the suffix-match figure (0: the best)
	if *head != "" {
		ls, hs, ok := strings.Cut(*head, ".")
		l, err1 := strconv.Atoi(ls)
		h, err2 := strconv.Atoi(hs)
		if !ok || err1 != nil || err2 != nil || l < 1 {
			return usagef("--head %q: want LAYER.HEAD, e.g. 2.1", *head)
		}
		layer, hd = l, h
	}

	title := fmt.Sprintf("%s on %s", m.Name(), filepath.Base(rep.Source))
	if rep.Window >= 0 {
		title += fmt.Sprintf(" window %d", rep.Window)
	} else if rep.Start > 0 {
		title += fmt.Sprintf(" from symbol %d", rep.Start)
	}
	title += fmt.Sprintf(" (T=%d)", T)
	study := attnmap.Study{Model: m, Windows: xs, MaxK: maxK, Null: attnmap.NullOptions{Perms: *perms, Seed: *seed},
		K: *k, Offset: *offset, Layer: layer, Head: hd, Queries: qs,
		Heatmaps: []string{paths[attnHeatPNG], paths[attnHeatSVG]}, HeatmapOptions: attnmap.Options{Title: title, Gamma: *gamma},
		SuffixMatch: []string{paths[attnSuffixPNG], paths[attnSuffixSVG]}, RequireSuffix: true, Force: *force}
	if *profile != "" {
		pxs, _ = attnmap.Windows(pxs, make([]int, len(pxs)), N)
		study.ProfileWindows, study.ProfileCSV, study.ProfileFigure = pxs, *profile, profilePNG
		study.ProfileTitle = fmt.Sprintf("%s: attention on each head's label positions by query position (%d windows)", m.Name(), len(pxs))
	}
	r, err := attnmap.RunStudy(study)
	if errors.Is(err, attnmap.ErrNoSuffixHead) && layer > 0 {
		return usagef("--head %s: the model has no layer %d head %d", *head, layer, hd)
	} else if errors.Is(err, attnmap.ErrNoSuffixHead) {
		return fmt.Errorf("no head has a suffix-match score for k=%d", *k)
	} else if err != nil {
		return err
	}
	rep.Heads, rep.Figure = r.Scores, r.Figure
	printAttentionTable(rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteBytes(paths[attnScores], true, append(js, '\n')); err != nil {
		return err
	}
	fig := r.Figure
	fmt.Printf("\nsuffix_match: layer %d head %d, k=%d offset %d: mean mass %.2f (chance %.2f, p_adj %.2g) over %d queries of %d windows\n",
		fig.Layer, fig.Head, fig.K, fig.Offset, fig.Score.Mass, fig.Score.Chance, fig.Score.PAdj, fig.Score.Queries, len(xs))
	fmt.Printf("wrote %s/{%s,%s,%s,%s,%s}\n", *out, attnHeatPNG, attnHeatSVG, attnSuffixPNG, attnSuffixSVG, attnScores)
	if *profile == "" {
		return nil
	}
	if r.ProfileDrawn {
		fmt.Printf("wrote %s and %s (%d windows)\n", *profile, profilePNG, len(pxs))
	} else {
		fmt.Printf("wrote %s (%d windows); no head is labelled, so %s was not drawn\n", *profile, len(pxs), profilePNG)
	}
	for _, d := range r.Drops {
		fmt.Printf("head %d.%d (%s) fails in part of the window: mass %.2f at positions %d..%d, %.2f in its best eighth\n",
			d.Layer, d.Head, d.Label, d.Worst, d.WorstFrom, d.WorstTo, d.Best)
	}
	return nil
}

// loadModel loads DIR/model.safetensors, or the .safetensors file given.
func loadModel(path string) (*transformer.Model, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, trainModel)
	}
	return transformer.LoadSafetensors(file)
}

// printAttentionTable prints every head's label and masses: relative
// positions d = 0..maxK, then suffix matches k = 1..maxK for offsets 0 and
// 1.
func printAttentionTable(rep attnReport) {
	fmt.Printf("%s, %d windows of T=%d from %s; mass averaged over queries i ≥ %d; labels need Bonferroni p_adj < %.2g (heads × hypotheses) and mass ≥ chance + %.2g\n\n",
		rep.Model, len(rep.Windows), rep.T, rep.Source, rep.MaxK, rep.Alpha, rep.MinLift)
	var hdr strings.Builder
	fmt.Fprintf(&hdr, "%-5s %-84s |", "head", "label")
	for d := 0; d <= rep.MaxK; d++ {
		fmt.Fprintf(&hdr, " d=%-3d", d)
	}
	for o := 0; o <= 1; o++ {
		hdr.WriteString(" |")
		for k := 1; k <= rep.MaxK; k++ {
			fmt.Fprintf(&hdr, " %-5s", fmt.Sprintf("k%d/%d", k, o))
		}
	}
	fmt.Println(hdr.String())
	for _, s := range rep.Heads {
		fmt.Printf("%-5s %-84s |", fmt.Sprintf("%d.%d", s.Layer, s.Head), s.Label)
		for _, r := range s.Relative {
			fmt.Printf(" %5.2f", r.Mass)
		}
		for o := 0; o <= 1; o++ {
			fmt.Print(" |")
			for k := 1; k <= rep.MaxK; k++ {
				sc, _ := s.SuffixScore(k, o)
				fmt.Printf(" %5.2f", sc.Mass)
			}
		}
		fmt.Println()
	}
	fmt.Println("\n(d=: mass on position i−d; kK/O: mass on the suffix matches of length K, offset O; chances and p-values in scores.json)")
}
