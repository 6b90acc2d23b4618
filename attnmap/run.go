package attnmap

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// The files Run writes into RunOptions.Out.
const (
	HeatmapsPNG    = "heatmaps.png"
	HeatmapsSVG    = "heatmaps.svg"
	SuffixMatchPNG = "suffix_match.png"
	SuffixMatchSVG = "suffix_match.svg"
	ScoresJSON     = "scores.json"
)

// OutFiles are the names of the files Run writes into RunOptions.Out.
var OutFiles = []string{HeatmapsPNG, HeatmapsSVG, SuffixMatchPNG, SuffixMatchSVG, ScoresJSON}

// modelFile is the model's file in a model directory (as training writes
// it).
const modelFile = "model.safetensors"

// RunOptions are the options of Run: the study of one trained
// transformer's attention on one window (Section 4.3 and Fig. 5 of the
// paper). Positions are 0-based, layers and heads 1-based.
type RunOptions struct {
	// Model is a model directory (holding model.safetensors) or a
	// .safetensors file, loaded on Backend (chosen by the caller; nil: an
	// error, transformer.ErrNoBackend).
	Model   string
	Backend backend.Backend
	// The input: window Window (0-based) of the data set in directory
	// Data, or the symbols of File (Mode "text" or "raw"; Alphabet, with
	// text, the alphabet in symbol order, "" for the characters present,
	// sorted) from symbol Start on. Exactly one of Data and File; Start is
	// 0 with Data.
	Data     string
	Window   int
	File     string
	Mode     string
	Alphabet string
	Start    int
	// Out is the directory of OutFiles; existing files are replaced only
	// with Force.
	Out   string
	Force bool
	// Queries are the suffix-match figure's query positions, separated by
	// commas ("": DefaultQueries). K (≥ 0) is its suffix length, Offset 0,
	// 1 or −1 (the head's better one), Head its head as "LAYER.HEAD" ("":
	// the head with the largest mass above chance; SuffixPanel).
	Queries string
	K       int
	Offset  int
	Head    string
	// Windows (≥ 1) is the number of windows of the null test: Window and
	// the next ones of Data (wrapping), or consecutive model-length
	// windows of File from Start. Perms (≥ 0; 0: the default) and Seed are
	// its permutations and their seed (NullOptions).
	Windows int
	Perms   int
	Seed    uint64
	// D is the source depth: hypotheses up to k, d = D+1 (< 0: the data
	// set's largest depth, 3 with File).
	D int
	// Gamma (finite, > 0): heatmap colour = weight^Gamma.
	Gamma float64
	// Profile, when not empty, is a .csv file for the per-position profile
	// over ProfileWindows (≥ 1) windows (PositionProfile); its figure goes
	// to the same name with .png (ProfileFigurePath).
	Profile        string
	ProfileWindows int
}

// ProfileFigurePath is the file of the profile figure: Profile with the
// extension .png ("" without Profile).
func (o *RunOptions) ProfileFigurePath() string {
	if o.Profile == "" {
		return ""
	}
	return strings.TrimSuffix(o.Profile, filepath.Ext(o.Profile)) + ".png"
}

// Validate checks the options that need neither the model nor the data
// (errors: *OptionError).
func (o *RunOptions) Validate() error {
	switch {
	case o.Model == "" || o.Out == "":
		return optErr("%s and %s are required", "Model Out")
	case (o.Data == "") == (o.File == ""):
		return optErr("give exactly one of %s and %s", "Data File")
	case o.K < 0:
		return optErr("%s %d: want ≥ 0", "K", o.K)
	case o.Offset < -1 || o.Offset > 1:
		return optErr("%s %d: want 0, 1 or -1 (auto)", "Offset", o.Offset)
	case o.Windows < 1 || o.Perms < 0:
		return optErr("%[1]s %[3]d, %[2]s %[4]d: want ≥ 1 and ≥ 0", "Windows Perms", o.Windows, o.Perms)
	case o.ProfileWindows < 1:
		return optErr("%s %d: want ≥ 1", "ProfileWindows", o.ProfileWindows)
	case o.Profile != "" && !strings.EqualFold(filepath.Ext(o.Profile), ".csv"):
		return optErr("%s %s: want a .csv file name", "Profile", o.Profile)
	case !(o.Gamma > 0) || math.IsInf(o.Gamma, 1):
		return optErr("%s %v: want a finite number > 0", "Gamma", o.Gamma)
	case o.Data != "" && o.Start != 0:
		return optErr("%s is for %s (use %s with %s)", "Start File Window Data")
	}
	return nil
}

// RunResult is what Run found and wrote.
type RunResult struct {
	// Report is the content of ScoresJSON.
	Report Report
	// Study is the analysis and the figures (RunStudy).
	Study *StudyResult
	// Out is the output directory; Profile, ProfileFigure and
	// ProfileWindows (the number of windows averaged) are those of the
	// profile ("" and 0 without RunOptions.Profile).
	Out            string
	Profile        string
	ProfileFigure  string
	ProfileWindows int
}

// Run studies the attention of the model o.Model on the window o selects:
// it scores every head over o.Windows windows with a null test
// (ScoreWindows), draws the heatmaps and the suffix-match figure into
// o.Out, writes the report ScoresJSON there and, with o.Profile, the
// per-position profile. Without o.Force it writes nothing when one of
// these files exists. Errors in the options are *OptionError.
func Run(o RunOptions) (*RunResult, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := o.checkNew(); err != nil {
		return nil, err
	}
	m, err := loadModel(o.Backend, o.Model)
	if err != nil {
		return nil, err
	}
	in, err := o.readInput(m.Config.Context, m.Config.Alphabet)
	if err != nil {
		return nil, err
	}
	study, rep, err := o.study(m, in)
	if err != nil {
		return nil, err
	}
	sr, err := RunStudy(study)
	if errors.Is(err, ErrNoSuffixHead) && study.Layer > 0 {
		return nil, optErr("%s %s: the model has no layer %d head %d", "Head", o.Head, study.Layer, study.Head)
	} else if errors.Is(err, ErrNoSuffixHead) {
		return nil, fmt.Errorf("no head has a suffix-match score for k=%d", o.K)
	} else if err != nil {
		return nil, err
	}
	rep.Heads, rep.Figure = sr.Scores, sr.Figure
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(o.Out, ScoresJSON), true, append(js, '\n')); err != nil {
		return nil, err
	}
	r := &RunResult{Report: rep, Study: sr, Out: o.Out}
	if o.Profile != "" {
		r.Profile, r.ProfileFigure, r.ProfileWindows = o.Profile, o.ProfileFigurePath(), len(in.profile)
	}
	return r, nil
}

// checkNew checks, without Force, that none of the files Run writes
// exists.
func (o *RunOptions) checkNew() error {
	if o.Force {
		return nil
	}
	files := []string{o.Profile, o.ProfileFigurePath()}
	for _, name := range OutFiles {
		files = append(files, filepath.Join(o.Out, name))
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if err := fsutil.CheckNew(f); err != nil {
			return err
		}
	}
	return nil
}

// loadModel loads DIR/model.safetensors, or the .safetensors file given,
// on the backend be.
func loadModel(be backend.Backend, path string) (*transformer.Model, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, modelFile)
	}
	return transformer.LoadSafetensorsOn(be, file)
}

// runInput is the input of Run: the windows of the null test (the shown
// one first) and their names (data set indices or file offsets), the
// windows of the profile, the source depth and the report's description
// of the source.
type runInput struct {
	windows, profile [][]byte
	ids              []int
	depth            int
	source           string
	window, start    int
}

// readInput reads the windows of o for a model of context N and alphabet
// size A.
func (o *RunOptions) readInput(N, A int) (*runInput, error) {
	in := &runInput{depth: o.D, window: -1}
	var err error
	if o.Data != "" {
		err = o.readData(in, A)
	} else {
		err = o.readFile(in, N, A)
	}
	if err != nil {
		return nil, err
	}
	in.windows, in.ids = Windows(in.windows, in.ids, N)
	if o.Profile != "" {
		in.profile, _ = Windows(in.profile, make([]int, len(in.profile)), N)
	}
	return in, nil
}

// readData takes the windows of in from the data set o.Data.
func (o *RunOptions) readData(in *runInput, A int) error {
	ds, err := dataset.Read(o.Data)
	if err != nil {
		return err
	}
	cfg := ds.Config()
	if cfg.Prior.A != A {
		return fmt.Errorf("the model has alphabet size %d, the data set %s %d", A, o.Data, cfg.Prior.A)
	}
	W := ds.Windows()
	if o.Window < 0 || o.Window >= W {
		return optErr("%s %d outside 0..%d", "Window", o.Window, W-1)
	}
	for i := range min(o.Windows, W) {
		in.windows = append(in.windows, ds.Window((o.Window+i)%W))
		in.ids = append(in.ids, (o.Window+i)%W)
	}
	if o.Profile != "" {
		for i := range min(o.ProfileWindows, W) {
			in.profile = append(in.profile, ds.Window((o.Window+i)%W))
		}
	}
	if in.depth < 0 {
		in.depth = 0
		for _, d := range cfg.Prior.Depths {
			in.depth = max(in.depth, d)
		}
	}
	in.source, in.window = o.Data, o.Window
	return nil
}

// readFile takes the windows of in from the symbol file o.File: windows
// of N symbols from o.Start on.
func (o *RunOptions) readFile(in *runInput, N, A int) error {
	md, err := symbols.ParseMode(o.Mode)
	if err != nil {
		return optErr("%s", "", err.Error())
	}
	all, al, err := symbols.ReadFile(o.File, md, o.Alphabet)
	if err != nil {
		return err
	}
	if al.Size() > A {
		return fmt.Errorf("%s has %d symbols (%v), the model's alphabet %d", o.File, al.Size(), al, A)
	}
	if o.Start < 0 || o.Start >= len(all) {
		return optErr("%s %d outside 0..%d (the file's length)", "Start", o.Start, len(all)-1)
	}
	cut := func(n int) (xs [][]byte, offs []int) {
		for off := o.Start; len(xs) < n && (len(xs) == 0 || off+N <= len(all)); off += N {
			xs, offs = append(xs, all[off:min(off+N, len(all))]), append(offs, off)
		}
		return xs, offs
	}
	in.windows, in.ids = cut(o.Windows)
	if o.Profile != "" {
		in.profile, _ = cut(o.ProfileWindows)
	}
	if in.depth < 0 {
		in.depth = 3
	}
	in.source, in.start = o.File, o.Start
	return nil
}

// study is the Study of model m on in that o asks for, and the report
// without the heads' scores.
func (o *RunOptions) study(m *transformer.Model, in *runInput) (Study, Report, error) {
	T := len(in.windows[0])
	maxK := max(in.depth+1, o.K)
	rep := Report{Model: m.Name(), Source: in.source, Window: in.window, Start: in.start, T: T, D: in.depth, MaxK: maxK,
		Windows: in.ids, Perms: o.Perms, Seed: o.Seed, Alpha: Alpha, MinLift: MinLift}
	qs, err := parseQueries(o.Queries, T)
	if err != nil {
		return Study{}, rep, err
	}
	layer, head, err := parseHead(o.Head)
	if err != nil {
		return Study{}, rep, err
	}
	title := fmt.Sprintf("%s on %s", m.Name(), filepath.Base(in.source))
	if in.window >= 0 {
		title += fmt.Sprintf(" window %d", in.window)
	} else if in.start > 0 {
		title += fmt.Sprintf(" from symbol %d", in.start)
	}
	title += fmt.Sprintf(" (T=%d)", T)
	path := func(name string) string { return filepath.Join(o.Out, name) }
	s := Study{Model: m, Windows: in.windows, MaxK: maxK, Null: NullOptions{Perms: o.Perms, Seed: o.Seed},
		K: o.K, Offset: o.Offset, Layer: layer, Head: head, Queries: qs,
		Heatmaps: []string{path(HeatmapsPNG), path(HeatmapsSVG)}, HeatmapOptions: Options{Title: title, Gamma: o.Gamma},
		SuffixMatch: []string{path(SuffixMatchPNG), path(SuffixMatchSVG)}, RequireSuffix: true, Force: o.Force}
	if o.Profile != "" {
		s.ProfileWindows, s.ProfileCSV, s.ProfileFigure = in.profile, o.Profile, o.ProfileFigurePath()
		s.ProfileTitle = fmt.Sprintf("%s: attention on each head's label positions by query position (%d windows)", m.Name(), len(in.profile))
	}
	return s, rep, nil
}

// parseQueries reads comma-separated positions 0..T−1 ("":
// DefaultQueries(T)).
func parseQueries(s string, T int) ([]int, error) {
	if s == "" {
		return DefaultQueries(T), nil
	}
	var qs []int
	for _, f := range strings.Split(s, ",") {
		q, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || q < 0 || q >= T {
			return nil, optErr("%s: %q is not a position 0..%d of the window", "Queries", f, T-1)
		}
		qs = append(qs, q)
	}
	return qs, nil
}

// parseHead reads "LAYER.HEAD" (1-based; LAYER ≥ 1); "" is 0, 0 (the best
// head).
func parseHead(s string) (layer, head int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	ls, hs, ok := strings.Cut(s, ".")
	l, err1 := strconv.Atoi(ls)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil || l < 1 {
		return 0, 0, optErr("%s %q: want LAYER.HEAD, e.g. 2.1", "Head", s)
	}
	return l, h, nil
}
