// Package explore is vomc's interactive view of trained transformers beside
// the Bayes-optimal predictor (vomc explore): one page, served on the
// loopback interface or written as one self-contained HTML file, that sets a
// model's per-position loss, predictive distributions and attention heads
// beside the exact Bayes predictor of the data set's prior, CTW (with its
// posterior weights ω over context lengths, the paper's Theorem 2, and its
// MAP context), Kneser–Ney and fixed-order Markov estimators.
//
// Conventions. A window is x[0..T−1] (0-based). The page's position t is a
// QUERY position: everything shown "at t" is after reading x[0..t] — each
// method's distribution of x[t+1], CTW's ω for that prediction, each head's
// attention row of query t over the keys 0..t, and the earlier positions whose
// length-k context matches the suffix x[t−k+1..t] (attnmap.SuffixMatches).
// The loss at t is −ln P(x[t+1] | x[0..t]) in nats, for t = 0..T−2.
// Layers and heads are 0-based in the API and 1-based on the page ("L1H2").
//
// Files. The server reads only the directories it is given: each model
// directory (model.safetensors, snapshots/step-*.safetensors,
// dynamics/dynamics.json) is opened as an os.Root, so no request can reach a
// file outside it, and the HTTP API names models, windows and steps by index,
// never by path. It writes nothing.
package explore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/bayes"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// FinalStep names a model's finished parameters (model.safetensors) where a
// training step is expected.
const FinalStep = -1

// Defaults of Options.
const (
	DefaultHeadWindows = 16
	DefaultMeanWindows = 64
	DefaultCacheBytes  = 1 << 30
	// MaxPasted is the longest pasted sequence, in symbols (it is also cut
	// to the models' context).
	MaxPasted = 1 << 16
)

// ModelSource is a model to explore: a run directory of 'vomc train' as a
// file system (model.safetensors, optionally snapshots/ and
// dynamics/dynamics.json) and the name of its directory.
type ModelSource struct {
	Dir string
	FS  fs.FS
}

// Options configure a Server.
type Options struct {
	// Models are the models; Data the data set whose windows are shown
	// (DataName names it on the page).
	Models   []ModelSource
	Data     *dataset.Dataset
	DataName string
	// Tune are the windows on which Kneser–Ney's discount is tuned (nil:
	// the first 200 windows of Data); TuneNote says what they are.
	Tune     [][]byte
	TuneNote string
	// Methods are the reference methods (package methods; empty:
	// DefaultMethods of the data set's prior).
	Methods methods.List
	// HeadWindows are the windows of the head labels' null test (0:
	// DefaultHeadWindows), MaxK the largest offset d and suffix length k
	// tested (0: D+1), Seed the seed of its permutations.
	HeadWindows, MaxK int
	Seed              uint64
	// MeanWindows are the windows of the mean per-position curves (0:
	// DefaultMeanWindows).
	MeanWindows int
	// CacheBytes bounds the memory of the cached attention maps and
	// distributions (0: DefaultCacheBytes).
	CacheBytes int64
	// Events receives what the server loads and computes as log lines
	// (nil: none).
	Events events.Sink
	// Backend is the backend every model and snapshot is read onto,
	// chosen by the caller (nil: New refuses, transformer.ErrNoBackend).
	Backend backend.Backend
}

// DefaultMethods is the default reference list for a prior of maximum depth
// D: the exact Bayes predictor, CTW, Kneser–Ney and Markov(k), k = 1..D.
func DefaultMethods(D int) methods.List {
	s := []string{"bayes", "ctw", "kn"}
	for k := 1; k <= max(D, 1); k++ {
		s = append(s, fmt.Sprintf("markov:k=%d", k))
	}
	return methods.MustParse(strings.Join(s, ","))
}

// Server holds the models, the data and the references, and answers the
// page's requests (Handler). It is safe for concurrent use.
type Server struct {
	opts   Options
	data   *dataset.Dataset
	prior  source.Prior
	D      int // the prior's largest depth
	T      int // window length shown: min(data N, every model's context)
	maxK   int
	refs   []reference
	ctw    *ctw.Predictor
	bayes  *bayes.Predictor
	excess string // name of the excess reference
	notes  []string
	models []*model
	cache  *cache
	labels sync.Map // labelKey → *once[[][]Label]
	means  sync.Map // labelKey → *once[*Mean]
	// work runs the background computations (labels, mean curves) one at
	// a time, so that a slider dragged over many steps does not start
	// them all at once.
	work chan struct{}
}

type reference struct {
	Name, Spec, Note string
	P                predict.Predictor
}

// model is one explored model with its snapshots.
type model struct {
	Name   string
	Dir    string
	fsys   fs.FS
	be     backend.Backend // what its files are read onto (Options.Backend)
	Config transformer.Config
	Params int
	Steps  []int          // snapshot steps, increasing
	files  map[int]string // step → file in fsys
	Dyn    *dynamics.Result
	final  *transformer.Model
	mu     sync.Mutex
	loaded map[int]*transformer.Model // snapshot models (a few)
	order  []int
}

// OpenDir opens a model directory as a ModelSource confined to it (os.Root:
// no path, symbolic link or ".." inside it reaches a file outside).
func OpenDir(dir string) (ModelSource, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ModelSource{}, fmt.Errorf("explore: there is no model directory %s", dir)
	}
	if err != nil {
		return ModelSource{}, fmt.Errorf("explore: model %s: %w", dir, err)
	}
	if !st.IsDir() {
		return ModelSource{}, fmt.Errorf("explore: model %s is not a directory (give the directory 'vomc train --out' wrote)", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ModelSource{}, fmt.Errorf("explore: model %s: %w", dir, err)
	}
	return ModelSource{Dir: dir, FS: root.FS()}, nil
}

// New loads the models and builds the references; head labels and mean
// curves are computed later, on first request (or by Warm).
func New(o Options) (*Server, error) {
	if o.Data == nil {
		return nil, errors.New("explore: no data set")
	}
	if len(o.Models) == 0 {
		return nil, errors.New("explore: no model (give at least one model directory)")
	}
	if o.Backend == nil {
		return nil, fmt.Errorf("explore: %w", transformer.ErrNoBackend)
	}
	if o.HeadWindows == 0 {
		o.HeadWindows = DefaultHeadWindows
	}
	if o.MeanWindows == 0 {
		o.MeanWindows = DefaultMeanWindows
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.HeadWindows < 1 || o.MeanWindows < 1 || o.MaxK < 0 {
		return nil, errors.New("explore: head windows and mean windows must be ≥ 1, max k ≥ 0")
	}
	ds := o.Data
	prior := ds.Manifest.Prior
	s := &Server{opts: o, data: ds, prior: prior, T: ds.Manifest.N, cache: newCache(o.CacheBytes), work: make(chan struct{}, 1)}
	for _, d := range prior.Depths {
		s.D = max(s.D, d)
	}
	if ds.Windows() == 0 || s.T < 2 {
		return nil, errors.New("explore: the data set has no window of 2 or more symbols")
	}
	s.maxK = o.MaxK
	if s.maxK == 0 {
		s.maxK = s.D + 1
	}
	names := map[string]int{}
	for _, src := range o.Models {
		m, err := s.loadModel(src)
		if err != nil {
			return nil, err
		}
		if m.Config.Alphabet != prior.A {
			return nil, fmt.Errorf("explore: model %s has alphabet size %d, the data set %d", src.Dir, m.Config.Alphabet, prior.A)
		}
		if names[m.Name]++; names[m.Name] > 1 {
			m.Name += fmt.Sprintf("#%d", names[m.Name])
		}
		if m.Config.Context < s.T {
			s.notes = append(s.notes, fmt.Sprintf("windows cut to %d symbols, the context of %s", m.Config.Context, m.Name))
			s.T = m.Config.Context
		}
		s.models = append(s.models, m)
	}
	if s.T < 2 {
		return nil, errors.New("explore: a model's context is shorter than 2 symbols")
	}
	if err := s.buildReferences(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) logf(format string, a ...any) {
	if s.opts.Events != nil {
		s.opts.Events.Log(fmt.Sprintf(format, a...))
	}
}

func (s *Server) loadModel(src ModelSource) (*model, error) {
	base := filepath.Base(filepath.Clean(src.Dir))
	m := &model{Dir: src.Dir, fsys: src.FS, be: s.opts.Backend, files: map[int]string{}, loaded: map[int]*transformer.Model{}}
	fm, err := readModel(m.be, src.FS, "model.safetensors")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, cerr := fs.Stat(src.FS, "checkpoint.safetensors"); cerr == nil {
				return nil, fmt.Errorf("explore: model %s has a checkpoint but no model.safetensors: %w", src.Dir, methods.ErrUnfinished)
			}
			return nil, fmt.Errorf("explore: %s holds no model.safetensors (give a directory written by 'vomc train')", src.Dir)
		}
		if arch, ok := torchModuleArch(src.FS, "model.safetensors"); ok {
			return nil, &ModuleError{Dir: src.Dir, Arch: arch}
		}
		return nil, fmt.Errorf("explore: model %s: %w", src.Dir, err)
	}
	m.final, m.Config, m.Params = fm, fm.Config, fm.NumParams()
	m.Name = fm.Name() + "@" + base
	if ents, err := fs.ReadDir(src.FS, trainrun.SnapshotDir); err == nil {
		for _, e := range ents {
			if step, ok := trainrun.ParseSnapshotName(e.Name()); ok && !e.IsDir() {
				m.files[step] = trainrun.SnapshotDir + "/" + e.Name()
				m.Steps = append(m.Steps, step)
			}
		}
		slices.Sort(m.Steps)
	}
	if b, err := fs.ReadFile(src.FS, "dynamics/dynamics.json"); err == nil {
		var r dynamics.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("explore: %s/dynamics/dynamics.json: %w", src.Dir, err)
		}
		m.Dyn = &r
	}
	return m, nil
}

// ModuleError says that the model in Dir is a PyTorch module of the torch
// engine (Arch: --arch lstm or MODULE:FACTORY), which explore cannot run:
// it explores vomc transformers, whose attention it shows.
type ModuleError struct {
	Dir, Arch string
}

func (e *ModuleError) Error() string {
	return fmt.Sprintf("explore: model %s is a PyTorch module of the torch engine (--arch %s), which explore cannot run: "+
		"explore shows vomc transformers (directories of 'vomc train --arch transformer', either engine, or --demo) with their attention heads. "+
		"Compare this model with Bayes, CTW and the other references with 'vomc eval --data DATA --methods bayes,ctw,torch:path=%s'",
		e.Dir, e.Arch, e.Dir)
}

// torchModuleArch reports whether the file name in fsys is a model file of
// a torch-engine module (trainrun.TorchModuleFormat), and its "arch".
func torchModuleArch(fsys fs.FS, name string) (string, bool) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", false
	}
	defer f.Close()
	h, err := safetensors.ReadHeader(f, 0, -1)
	if err != nil || h.Meta["format"] != trainrun.TorchModuleFormat {
		return "", false
	}
	var c struct {
		Arch string `json:"arch"`
	}
	if json.Unmarshal([]byte(h.Meta["config"]), &c) != nil || c.Arch == "" {
		c.Arch = "?"
	}
	return c.Arch, true
}

// readModel reads the model file name of fsys onto the backend be.
func readModel(be backend.Backend, fsys fs.FS, name string) (*transformer.Model, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := transformer.ReadSafetensorsOn(be, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}

// at returns the model's parameters at step (FinalStep: model.safetensors).
func (m *model) at(step int) (*transformer.Model, error) {
	if step == FinalStep {
		return m.final, nil
	}
	file, ok := m.files[step]
	if !ok {
		return nil, fmt.Errorf("%w: model %s has no snapshot at step %d (steps: %v)", ErrNotFound, m.Name, step, m.Steps)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if tm := m.loaded[step]; tm != nil {
		return tm, nil
	}
	tm, err := readModel(m.be, m.fsys, file)
	if err != nil {
		return nil, fmt.Errorf("explore: model %s: %w", m.Name, err)
	}
	if tm.Config.Alphabet != m.Config.Alphabet || tm.Config.Context != m.Config.Context {
		return nil, fmt.Errorf("explore: model %s: snapshot %s has another shape than model.safetensors", m.Name, file)
	}
	const keep = 8
	if len(m.order) >= keep {
		delete(m.loaded, m.order[0])
		m.order = m.order[1:]
	}
	m.loaded[step], m.order = tm, append(m.order, step)
	return tm, nil
}

func (s *Server) buildReferences() error {
	ds := s.data
	d := methods.DefaultsFor(s.prior)
	d.Tune, d.TuneNote = s.opts.Tune, s.opts.TuneNote
	if d.Tune == nil {
		n := min(200, ds.Windows())
		for w := range n {
			d.Tune = append(d.Tune, ds.Window(w))
		}
		d.TuneNote = fmt.Sprintf("the first %d windows of %s", n, s.dataName())
	}
	list := s.opts.Methods
	if len(list) == 0 {
		list = DefaultMethods(s.D)
	}
	for _, m := range list {
		if m.Kind == "tf" || m.Kind == "synth" || m.Kind == "npy" {
			return fmt.Errorf("explore: method %q: models are given as model directories, not as methods", m.Text())
		}
		bs, err := methods.Build(methods.List{m}, d)
		if err != nil {
			if m.Kind == "bayes" && len(s.opts.Methods) == 0 {
				s.notes = append(s.notes, fmt.Sprintf("no exact Bayes predictor: %v", err))
				continue
			}
			return fmt.Errorf("explore: %w", err)
		}
		for _, b := range bs {
			s.refs = append(s.refs, reference{Name: b.Predictor.Name(), Spec: b.Spec.Text(), Note: b.Note, P: b.Predictor})
			switch p := b.Predictor.(type) {
			case *ctw.Predictor:
				if s.ctw == nil {
					s.ctw = p
				}
			case *bayes.Predictor:
				s.bayes = p
			}
		}
	}
	if s.ctw == nil { // ω needs a CTW of the data's prior, shown or not
		bs, err := methods.Build(methods.MustParse("ctw"), d)
		if err != nil {
			return fmt.Errorf("explore: %w", err)
		}
		s.ctw = bs[0].Predictor.(*ctw.Predictor)
	}
	switch {
	case s.bayes != nil:
		s.excess = s.bayes.Name()
	case len(s.refs) > 0:
		s.excess = s.refs[0].Name
		for _, r := range s.refs {
			if r.P == predict.Predictor(s.ctw) {
				s.excess = r.Name
			}
		}
	}
	return nil
}

func (s *Server) dataName() string {
	if s.opts.DataName != "" {
		return s.opts.DataName
	}
	return "the data set"
}

// ErrNotFound and ErrBadRequest classify request errors (HTTP 404 and 400).
var (
	ErrNotFound   = errors.New("not found")
	ErrBadRequest = errors.New("bad request")
)

func badf(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, a...))
}

// window is a resolved window: a data set window or a pasted sequence.
type window struct {
	Key   string // "w12" or "seq:0120…"
	Index int    // data set window, −1 for a pasted sequence
	X     []byte
	// hist is the history of the generating tree before x (for the true
	// context): the dummy context, or the tree's previous symbols.
	hist []byte
	tree *source.Tree
}

// Window resolves a data set window by index.
func (s *Server) Window(w int) (*window, error) {
	if w < 0 || w >= s.data.Windows() {
		return nil, fmt.Errorf("%w: window %d: the data set has windows 0..%d", ErrNotFound, w, s.data.Windows()-1)
	}
	x := s.data.Window(w)[:s.T]
	win := &window{Key: "w" + strconv.Itoa(w), Index: w, X: x}
	if ds := s.data; len(ds.Trees) > 0 {
		tree := ds.Trees[ds.TreeOf[w]]
		win.tree = tree
		if !ds.Manifest.Fresh && w > 0 && ds.TreeOf[w-1] == ds.TreeOf[w] {
			prev := ds.Window(w - 1)
			win.hist = prev[max(0, len(prev)-tree.D):]
		} else {
			win.hist = make([]byte, tree.D)
		}
	}
	return win, nil
}

// Pasted resolves a pasted sequence: symbols as digits 0..9 (A ≤ 10, with
// or without separators) or as comma- or space-separated numbers.
func (s *Server) Pasted(text string) (*window, error) {
	x, err := ParseSequence(text, s.prior.A)
	if err != nil {
		return nil, err
	}
	if len(x) < 2 {
		return nil, badf("a pasted sequence needs 2 or more symbols")
	}
	if len(x) > s.T {
		x = x[:s.T]
	}
	var b strings.Builder
	for i, a := range x {
		if i > 0 && s.prior.A > 10 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(a)))
	}
	return &window{Key: "seq:" + b.String(), Index: -1, X: x}, nil
}

// ParseSequence reads symbols 0..A−1 written as numbers separated by commas
// or white space, or, for A ≤ 10, also as a run of digits ("0120").
func ParseSequence(text string, A int) ([]byte, error) {
	text = strings.TrimSpace(text)
	if len(text) > 8*MaxPasted {
		return nil, badf("the pasted sequence is longer than %d symbols", MaxPasted)
	}
	var fields []string
	if strings.ContainsAny(text, ", \t\n") {
		fields = strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	} else if A <= 10 {
		for _, r := range text {
			fields = append(fields, string(r))
		}
	} else {
		fields = []string{text}
	}
	x := make([]byte, 0, len(fields))
	for i, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v >= A {
			return nil, badf("pasted symbol %d is %q: symbols are 0..%d", i, f, A-1)
		}
		x = append(x, byte(v))
	}
	if len(x) > MaxPasted {
		return nil, badf("the pasted sequence is longer than %d symbols", MaxPasted)
	}
	return x, nil
}

// Model returns model i, or ErrNotFound.
func (s *Server) model(i int) (*model, error) {
	if i < 0 || i >= len(s.models) {
		return nil, fmt.Errorf("%w: model %d: there are models 0..%d", ErrNotFound, i, len(s.models)-1)
	}
	return s.models[i], nil
}

// Series is one method's predictions on a window: P[t·A+a] is its
// probability that x[t+1] = a after reading x[0..t], Loss[t] = −ln
// P(x[t+1]) in nats, t = 0..T−2.
type Series struct {
	Name string    `json:"name"`
	Kind string    `json:"kind"` // "reference" or "model"
	P    []float64 `json:"p"`
	Loss Losses    `json:"loss"`
}

// Losses are losses in nats, written in JSON by vomc's convention
// (jsonfloat): a non-finite value (a model that gave an observed symbol
// probability 0) as the string "+Inf" or "NaN", which the page's JSON
// reviver reads back as a number.
type Losses []float64

// MarshalJSON writes the losses as numbers, non-finite ones by jsonfloat's
// convention.
func (l Losses) MarshalJSON() ([]byte, error) { return jsonfloat.Floats(l).MarshalJSON() }

// UnmarshalJSON reads what MarshalJSON writes (and null, as NaN, as
// before).
func (l *Losses) UnmarshalJSON(b []byte) error { return (*jsonfloat.Floats)(l).UnmarshalJSON(b) }

// Context is a context (suffix) of the current history: its length, its
// symbols in time order and, for the source's true context, the next-symbol
// distribution of its leaf.
type Context struct {
	Depth  int       `json:"depth"`
	Suffix Symbols   `json:"suffix"`
	P      []float64 `json:"p,omitempty"`
}

// RefView is everything about a window that does not depend on a model: the
// symbols, the references' predictions, CTW's ω and the Bayes posterior at
// every t, and the generating tree's context (when known).
type RefView struct {
	Key    string   `json:"key"`
	Index  int      `json:"index"`
	X      Symbols  `json:"x"`
	T      int      `json:"T"`
	A      int      `json:"A"`
	D      int      `json:"D"`
	Refs   []Series `json:"refs"`
	Excess string   `json:"excess"`
	// Omega[t] is CTW's ω over context lengths 0..D after reading x[0..t].
	Omega [][]float64 `json:"omega"`
	CTW   string      `json:"ctw"`
	// Posterior[t] is the Bayes predictor's posterior over its components
	// (Components) after reading x[0..t]; nil without Bayes.
	Posterior  [][]float64 `json:"posterior,omitempty"`
	Components []string    `json:"components,omitempty"`
	// True[t] is the source tree's context after reading x[0..t] (nil for a
	// pasted sequence).
	True []*Context `json:"true,omitempty"`
	// Source[t] is −ln p_s(x[t+1]) under the true tree (nil when unknown).
	SourceLoss Losses `json:"source_loss,omitempty"`
}

// Refs computes (or returns the cached) RefView of a window.
func (s *Server) Refs(win *window) (*RefView, error) {
	v, err := s.cache.get("refs/"+win.Key, func() (any, int64, error) {
		r, err := s.computeRefs(win)
		if err != nil {
			return nil, 0, err
		}
		n := int64(len(r.X)) * int64(8*(len(r.Refs)*(2*r.A+2)+r.D+1+len(r.Components)+8+r.A))
		return r, n, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*RefView), nil
}

func (s *Server) computeRefs(win *window) (*RefView, error) {
	x, A, T := win.X, s.prior.A, len(win.X)
	r := &RefView{Key: win.Key, Index: win.Index, X: x, T: T, A: A, D: s.D, Excess: s.excess, CTW: s.ctw.Name(),
		Refs: make([]Series, len(s.refs))}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	errs := make([]error, len(s.refs))
	for i, ref := range s.refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			defer func() { // a method's bug: this request's error, not a crash
				if err := panics.Of(recover()); err != nil {
					errs[i] = fmt.Errorf("explore: %s: %w", ref.Name, err)
				}
			}()
			r.Refs[i], errs[i] = series(ref.Name, "reference", ref.P, x)
		}()
	}
	// ω and the Bayes posterior, stepping the states ourselves
	st := s.ctw.NewCTWState()
	r.Omega = make([][]float64, T)
	for t := range T {
		st.Observe(x[t])
		r.Omega[t] = make([]float64, s.ctw.Config().D+1)
		st.Weights(r.Omega[t])
	}
	if s.bayes != nil {
		bs := s.bayes.NewBayesState()
		C := s.bayes.Components()
		for c := range C {
			D, sparse := s.bayes.Component(c)
			kind := "Dirichlet"
			if sparse {
				kind = "sparse"
			}
			r.Components = append(r.Components, fmt.Sprintf("D=%d %s", D, kind))
		}
		r.Posterior = make([][]float64, T)
		for t := range T {
			bs.Observe(x[t])
			r.Posterior[t] = make([]float64, C)
			bs.Posterior(r.Posterior[t])
		}
		if err := bs.Err(); err != nil {
			return nil, fmt.Errorf("explore: Bayes posterior: %w", err)
		}
	}
	if win.tree != nil {
		hist := append(append([]byte(nil), win.hist...), x...)
		off := len(win.hist)
		r.True = make([]*Context, T)
		r.SourceLoss = make(Losses, T-1)
		for t := range T {
			c := leafContext(win.tree, hist[:off+t+1])
			r.True[t] = c
			if t+1 < T {
				r.SourceLoss[t] = math.NaN() // unknown (null in JSON)
				if c != nil {
					r.SourceLoss[t] = -math.Log(c.P[x[t+1]])
				}
			}
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return r, nil
}

// Symbols are symbols written in JSON as an array of numbers (not base64).
type Symbols []byte

// MarshalJSON writes the symbols as numbers.
func (x Symbols) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+2*len(x))
	b = append(b, '[')
	for i, a := range x {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(a), 10)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads an array of numbers 0..255.
func (x *Symbols) UnmarshalJSON(b []byte) error {
	var v []int
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*x = make(Symbols, len(v))
	for i, a := range v {
		if a < 0 || a > 255 {
			return fmt.Errorf("explore: symbol %d out of range", a)
		}
		(*x)[i] = byte(a)
	}
	return nil
}

// leafContext walks tree from the root along hist (most recent symbol first)
// to its leaf; nil when hist is too short.
func leafContext(tree *source.Tree, hist []byte) *Context {
	n, depth := tree.Root, 0
	for !n.IsLeaf() {
		if depth >= len(hist) {
			return nil
		}
		n = n.Children[hist[len(hist)-1-depth]]
		depth++
	}
	return &Context{Depth: depth, Suffix: append([]byte(nil), hist[len(hist)-depth:]...), P: n.P}
}

// series runs p on x: the rows for t = 0..T−2 (x[t+1] given x[0..t]).
func series(name, kind string, p predict.Predictor, x []byte) (Series, error) {
	A, T := p.AlphabetSize(), len(x)
	all := make([]float64, T*A)
	if err := predict.Sequence(p, x, all); err != nil {
		return Series{}, fmt.Errorf("%s: %w", name, err)
	}
	sr := Series{Name: name, Kind: kind, P: all[A:], Loss: make(Losses, T-1)}
	for t := range T - 1 {
		sr.Loss[t] = -math.Log(sr.P[t*A+int(x[t+1])])
	}
	return sr, nil
}

// ModelView is a model's predictions and attention maps on a window at a
// training step.
type ModelView struct {
	Series
	Model int `json:"model"`
	Step  int `json:"step"`
	// Maps[l][h] is the T×T attention map of layer l, head h (row = query);
	// not part of the JSON form (the map endpoint serves it).
	Maps [][][]float32 `json:"-"`
}

// ModelWindow computes (or returns the cached) view of model mi at step on
// a window.
func (s *Server) ModelWindow(win *window, mi, step int) (*ModelView, error) {
	m, err := s.model(mi)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("model/%d/%d/%s", mi, step, win.Key)
	v, err := s.cache.get(key, func() (any, int64, error) {
		tm, err := m.at(step)
		if err != nil {
			return nil, 0, err
		}
		sr, err := series(m.Name, "model", tm, win.X)
		if err != nil {
			return nil, 0, err
		}
		maps, err := tm.AttentionMaps(win.X)
		if err != nil {
			return nil, 0, fmt.Errorf("explore: %s: %w", m.Name, err)
		}
		T := int64(len(win.X))
		var n int64
		for _, l := range maps {
			n += int64(len(l)) * T * T * 4
		}
		n += T * int64(8*(tm.Config.Alphabet+1))
		return &ModelView{Series: sr, Model: mi, Step: step, Maps: maps}, n, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*ModelView), nil
}

// Head is one head's view at a position: its attention row and its label.
type Head struct {
	Layer int       `json:"layer"`
	Head  int       `json:"head"`
	Row   []float32 `json:"row"` // attention of query t over keys 0..t
	// RowB64 is Row as base64 of little-endian float32, instead of Row,
	// when the request asks for rows=b64 (the page does: ≈ 2.3× smaller,
	// and no number to parse).
	RowB64 string `json:"row_b64,omitempty"`
	Label  *Label `json:"label,omitempty"`
}

// Label is a head's attnmap label (ScoreWindows over HeadWindows windows).
type Label struct {
	Text     string        `json:"text"`
	Short    string        `json:"short"`
	Labelled bool          `json:"labelled"`
	Best     attnmap.Score `json:"best"`
}

// Position is the answer to a click: everything at query position t of a
// window for one model at one step.
type Position struct {
	Key    string `json:"key"`
	T      int    `json:"t"`
	Symbol int    `json:"symbol"`
	Next   int    `json:"next"` // x[t+1], −1 at the last position
	Model  int    `json:"model"`
	Step   int    `json:"step"`
	// Dist are every method's distributions of x[t+1] (references, then
	// the model), with Loss −ln P(x[t+1]) (absent at the last position).
	Dist []Dist `json:"dist"`
	// Omega is CTW's ω over context lengths 0..D; OmegaMax its argmax;
	// MAP the context that the MAP tree of x[0..t] assigns to the history.
	Omega    []float64 `json:"omega"`
	OmegaMax int       `json:"omega_max"`
	MAP      *Context  `json:"map"`
	// MAPLogPosterior is ln π(T_MAP | x[0..t]).
	MAPLogPosterior float64   `json:"map_log_posterior"`
	True            *Context  `json:"true,omitempty"`
	Posterior       []float64 `json:"posterior,omitempty"`
	// Matches[o][k] are the earlier positions whose length-k context
	// matches x[t−k+1..t] at offset o (attnmap.SuffixMatches), k = 0..MaxK.
	Matches [2][][]int `json:"matches"`
	MaxK    int        `json:"max_k"`
	Heads   []Head     `json:"heads"`
	// Intervened is the model with the heads of the request's ablate=
	// and pattern= switched off or replaced (absent when it names none).
	Intervened *Intervened `json:"intervened,omitempty"`
	// LabelsPending is true while the head labels are being computed.
	LabelsPending bool   `json:"labels_pending,omitempty"`
	LabelsError   string `json:"labels_error,omitempty"`
}

// Dist is one method's distribution at a position.
type Dist struct {
	Name string    `json:"name"`
	Kind string    `json:"kind"`
	P    []float64 `json:"p"`
	Loss *float64  `json:"loss,omitempty"`
}

// clicked checks query position t of win and returns model mi, the
// window's references and the model's view of it at step: what both
// PositionAt and IntervenedAt read.
func (s *Server) clicked(win *window, t, mi, step int) (*model, *RefView, *ModelView, error) {
	if T := len(win.X); t < 0 || t >= T {
		return nil, nil, nil, fmt.Errorf("%w: position %d: the window has positions 0..%d", ErrNotFound, t, T-1)
	}
	m, err := s.model(mi)
	if err != nil {
		return nil, nil, nil, err
	}
	rv, err := s.Refs(win)
	if err != nil {
		return nil, nil, nil, err
	}
	mv, err := s.ModelWindow(win, mi, step)
	if err != nil {
		return nil, nil, nil, err
	}
	return m, rv, mv, nil
}

// PositionAt answers a click at query position t.
func (s *Server) PositionAt(win *window, t, mi, step int) (*Position, error) {
	T := len(win.X)
	_, rv, mv, err := s.clicked(win, t, mi, step)
	if err != nil {
		return nil, err
	}
	A := s.prior.A
	p := &Position{Key: win.Key, T: t, Symbol: int(win.X[t]), Next: -1, Model: mi, Step: step, MaxK: s.maxK,
		Omega: rv.Omega[t]}
	if t+1 < T {
		p.Next = int(win.X[t+1])
	}
	for _, sr := range append(append([]Series(nil), rv.Refs...), mv.Series) {
		d := Dist{Name: sr.Name, Kind: sr.Kind}
		if t+1 < T {
			d.P = sr.P[t*A : (t+1)*A]
			if l := sr.Loss[t]; !math.IsInf(l, 0) && !math.IsNaN(l) {
				d.Loss = &sr.Loss[t]
			}
		}
		p.Dist = append(p.Dist, d)
	}
	for l, w := range rv.Omega[t] {
		if w > rv.Omega[t][p.OmegaMax] {
			p.OmegaMax = l
		}
	}
	p.MAP, p.MAPLogPosterior, err = s.mapContext(win.X[:t+1])
	if err != nil {
		return nil, err
	}
	if rv.True != nil {
		p.True = rv.True[t]
	}
	if rv.Posterior != nil {
		p.Posterior = rv.Posterior[t]
	}
	for o := range 2 {
		p.Matches[o] = make([][]int, s.maxK+1)
		for k := range s.maxK + 1 {
			p.Matches[o][k] = attnmap.SuffixMatches(win.X, t, k, o)
			if p.Matches[o][k] == nil {
				p.Matches[o][k] = []int{}
			}
		}
	}
	labels, pending, lerr := s.Labels(mi, step, false)
	p.LabelsPending = pending
	if lerr != nil {
		p.LabelsError = lerr.Error()
	}
	for l, hs := range mv.Maps {
		for h, mp := range hs {
			hd := Head{Layer: l, Head: h, Row: mp[t*T : t*T+t+1]}
			if labels != nil {
				hd.Label = &labels[l][h]
			}
			p.Heads = append(p.Heads, hd)
		}
	}
	return p, nil
}

// mapContext is the context that the MAP tree of x (after the dummy
// context) assigns to the history x, with the tree's log posterior.
func (s *Server) mapContext(x []byte) (*Context, float64, error) {
	cfg := s.ctw.Config()
	cfg.Init = ctw.Pad
	c, err := ctw.CountSequence(cfg, x)
	if err != nil {
		return nil, 0, fmt.Errorf("explore: MAP tree: %w", err)
	}
	mp := c.MAPTree()
	hist := append(make([]byte, cfg.D), x...)
	ctx := leafContext(mp.Tree, hist)
	return ctx, mp.LogPosterior, nil
}
