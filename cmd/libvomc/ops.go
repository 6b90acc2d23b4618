package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/dataset/datadir"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// ops are the operations of vomc_call by name; the Python package calls
// each from one function (python/vomc).
var ops = map[string]op{
	"version":        opVersion,
	"prior":          opPrior,
	"sample":         opSample,
	"generate":       opGenerate,
	"data_make":      opDataMake,
	"data_build":     opDataBuild,
	"data_read":      opDataRead,
	"data_write":     opDataWrite,
	"predict":        opPredict,
	"ctw_trace":      opCTWTrace,
	"evaluate":       opEvaluate,
	"attention_maps": opAttentionMaps,
	"label_heads":    opLabelHeads,
	"explore_static": opExploreStatic,
	"panic":          opPanic,
}

// opVersion: the module's version and the Go that built the library.
func opVersion(context.Context, []byte, [][]byte) (any, [][]byte, error) {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return map[string]string{"vomc": v, "go": runtime.Version(), "tool": dataset.ToolVersion}, nil, nil
}

// opPanic panics: the one way for the tests of the Python package to
// check that a panic becomes an exception and the interpreter lives on.
// With "in": "predict" or "evaluate" the panic happens inside a predictor
// on a worker goroutine of methods.Distributions or eval.Evaluate (two
// workers, four windows), as a bug of a method would give.
func opPanic(ctx context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r struct {
		In string `json:"in"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	const W, N, A = 4, 8, 2
	windows := make([][]byte, W)
	for w := range windows {
		windows[w] = make([]byte, N)
	}
	p := panicky{}
	switch r.In {
	case "":
		panicky{}.NewState().Predict(nil)
	case "predict":
		return nil, nil, methods.Distributions(ctx, p, windows, make([]float64, W*N*A), 2)
	case "evaluate":
		_, err := eval.Evaluate(ctx, windows, A, []predict.Predictor{p}, eval.Config{Workers: 2})
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("panic: in %q: want predict or evaluate", r.In)
}

// panicky is opPanic's predictor of two symbols: its Predict has a bug.
type panicky struct{}

func (panicky) Name() string            { return "panicky" }
func (panicky) AlphabetSize() int       { return 2 }
func (panicky) NewState() predict.State { return panicky{} }
func (panicky) Observe(byte)            {}
func (panicky) Predict([]float64) {
	var m map[string]int
	m["vomc"]++ // assignment to a nil map: a runtime panic, as a bug would give
}

// priorReq is a prior as the Python package gives it: the command line's
// PriorSpec with lists as numbers.
type priorReq struct {
	A          int       `json:"A"`
	Depths     []int     `json:"depths"`
	Lambda     float64   `json:"lambda"`
	Alpha      []float64 `json:"alpha"`
	Leaves     string    `json:"leaves"`
	SparseZero *float64  `json:"sparse_zero"`
	SparseFrac *float64  `json:"sparse_frac"`
}

// opPrior checks a prior as 'vomc data' checks its flags
// (source.PriorSpec.Parse) and returns it in the manifest's JSON form.
func opPrior(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r priorReq
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	ds := make([]string, len(r.Depths))
	for i, d := range r.Depths {
		ds[i] = strconv.Itoa(d)
	}
	as := make([]string, len(r.Alpha))
	for i, a := range r.Alpha {
		as[i] = strconv.FormatFloat(a, 'g', -1, 64)
	}
	s := source.PriorSpec{A: r.A, Depths: strings.Join(ds, ","), Lambda: r.Lambda, Alpha: strings.Join(as, ","),
		Leaves: r.Leaves, LeavesSet: r.Leaves != ""}
	if r.Leaves == "" {
		s.Leaves = "dirichlet"
	}
	if r.SparseZero != nil {
		s.SparseZero, s.SparseZeroSet = *r.SparseZero, true
	}
	if r.SparseFrac != nil {
		s.SparseFrac, s.SparseFracSet = *r.SparseFrac, true
	}
	p, err := s.Parse()
	if err != nil {
		return nil, nil, err
	}
	return p, nil, p.Validate()
}

// opSample samples K trees from a prior, tree i from source.RNG(seed, i):
// the trees of a data set with that seed, and tree 0 that of 'vomc tree
// sample --seed'.
func opSample(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r struct {
		Prior source.Prior `json:"prior"`
		K     int          `json:"K"`
		Seed  uint64       `json:"seed"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	if err := r.Prior.Validate(); err != nil {
		return nil, nil, err
	}
	if r.K < 1 || r.K > dataset.MaxTrees {
		return nil, nil, fmt.Errorf("K = %d trees, want 1..%d", r.K, dataset.MaxTrees)
	}
	trees := make([]*source.Tree, r.K)
	for i := range trees {
		t, err := r.Prior.Sample(source.RNG(r.Seed, uint64(i)))
		if err != nil {
			return nil, nil, err
		}
		trees[i] = t
	}
	return trees, nil, nil
}

// opGenerate draws n symbols from a tree with a seed, the bytes 'vomc
// generate --raw --seed' writes (source.Stream).
func opGenerate(ctx context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r struct {
		Tree *source.Tree `json:"tree"`
		N    int64        `json:"n"`
		Seed uint64       `json:"seed"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	if r.Tree == nil {
		return nil, nil, fmt.Errorf("vomc: generate: no tree")
	}
	if r.N < 0 || r.N > dataset.MaxBytes {
		return nil, nil, fmt.Errorf("n = %d symbols, want 0..%d", r.N, int64(dataset.MaxBytes))
	}
	var b bytes.Buffer
	b.Grow(int(r.N))
	if err := source.Stream(&b, r.Tree, r.Seed, r.N, true); err != nil {
		return nil, nil, err
	}
	return nil, [][]byte{b.Bytes()}, nil
}

// dataReq is a data set's configuration (dataset.Config).
type dataReq struct {
	Prior   source.Prior `json:"prior"`
	K       int          `json:"K"`
	NK      int          `json:"NK"`
	N       int          `json:"N"`
	Fresh   bool         `json:"fresh"`
	Seed    uint64       `json:"seed"`
	Workers int          `json:"workers"`
	Dir     string       `json:"dir"`
	NPY     bool         `json:"npy"`
	Force   bool         `json:"force"`
}

func (r dataReq) config() dataset.Config {
	nk := r.NK
	if nk == 0 {
		nk = r.N
	}
	return dataset.Config{Prior: r.Prior, K: r.K, NK: nk, N: r.N, Fresh: r.Fresh, Seed: r.Seed}
}

// opDataMake writes a data set as 'vomc data' does (datadir.Make): the
// same bytes for the same configuration.
func opDataMake(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r dataReq
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	if r.Dir == "" {
		return nil, nil, fmt.Errorf("vomc: no directory to write the data set to")
	}
	ds, err := datadir.Make(r.config(), datadir.Options{Dir: r.Dir, Workers: r.Workers, NPY: r.NPY, Force: r.Force})
	if err != nil {
		return nil, nil, err
	}
	return dataAnswer(ds)
}

// opDataBuild builds a data set in memory (dataset.Build).
func opDataBuild(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r dataReq
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	cfg := r.config()
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	ds, err := dataset.Build(cfg, r.Workers, nil)
	if err != nil {
		return nil, nil, err
	}
	return dataAnswer(ds)
}

// opDataRead reads a data set directory: with trees, dataset.Read
// (checksums and all), else dataset.ReadWindows (what 'vomc eval' reads:
// no trees, much faster for many deep trees).
func opDataRead(_ context.Context, req []byte, _ [][]byte) (any, [][]byte, error) {
	var r struct {
		Dir   string `json:"dir"`
		Trees bool   `json:"trees"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	read := dataset.ReadWindows
	if r.Trees {
		read = dataset.Read
	}
	ds, err := read(r.Dir)
	if err != nil {
		return nil, nil, err
	}
	return dataAnswer(ds)
}

// dataAnswer is a data set as an answer: the manifest, the symbols and
// the tree indices (int32, little-endian).
func dataAnswer(ds *dataset.Dataset) (any, [][]byte, error) {
	ds.Manifest.Trees = ds.Trees
	m, err := ds.Manifest.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	treeOf := make([]byte, 4*len(ds.TreeOf))
	for i, t := range ds.TreeOf {
		binary.LittleEndian.PutUint32(treeOf[4*i:], uint32(t))
	}
	return json.RawMessage(m), [][]byte{ds.Symbols, treeOf}, nil
}

// opDataWrite writes a data set held by the caller: its manifest, symbols
// and tree indices (arrays 0 and 1), checked as dataset.Write checks.
func opDataWrite(_ context.Context, req []byte, arrays [][]byte) (any, [][]byte, error) {
	var r struct {
		Manifest json.RawMessage `json:"manifest"`
		Dir      string          `json:"dir"`
		Force    bool            `json:"force"`
	}
	if err := decode(req, &r); err != nil {
		return nil, nil, err
	}
	m, err := dataset.ReadManifest(bytes.NewReader(r.Manifest))
	if err != nil {
		return nil, nil, err
	}
	syms, err := array(arrays, 0, int64(m.Windows)*int64(m.N), "symbols")
	if err != nil {
		return nil, nil, err
	}
	tb, err := array(arrays, 1, 4*int64(m.Windows), "tree_of")
	if err != nil {
		return nil, nil, err
	}
	treeOf := make([]int32, m.Windows)
	for i := range treeOf {
		treeOf[i] = int32(binary.LittleEndian.Uint32(tb[4*i:]))
	}
	ds := &dataset.Dataset{Manifest: *m, Symbols: bytes.Clone(syms), TreeOf: treeOf, Trees: m.Trees}
	return nil, nil, ds.Write(r.Dir, r.Force)
}
