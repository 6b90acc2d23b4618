// Package experiment runs vomc's end-to-end experiments: evaluating a list
// of methods in context on a data set and writing the tables and figures
// (used by `vomc eval`, reproduce's evaluation stages and dynamics), and the
// small default run behind `vomc quickstart`.
package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/draw"
)

// Windows returns the windows of a data set as slices (no copy).
func Windows(ds *dataset.Dataset) [][]byte {
	w := make([][]byte, ds.Windows())
	for i := range w {
		w[i] = ds.Window(i)
	}
	return w
}

// Outputs names the files WriteOutputs writes into a directory.
var Outputs = struct{ JSON, CSV, Summary, PNG, SVG string }{
	"results.json", "results.csv", "summary.txt", "loss.png", "loss.svg",
}

// Evaluate builds the methods of list with defaults d and evaluates them
// in context on the windows (each from a fresh state). cfg.Reference
// names the reference as methods.Reference reads it (empty: by kind), and
// cfg.Pairs the methods of the paired differences as methods.Find does
// (a spec in any spelling, a label, or a bare kind one method has).
// The methods' evaluated windows (d.Windows: what npy and torch methods
// predict, refs=test's references) are the windows where d gives none.
func Evaluate(ctx context.Context, windows [][]byte, list methods.List, d methods.Defaults, cfg eval.Config) (*eval.Result, []methods.Built, error) {
	if d.Windows == nil {
		d.Windows = windows
	}
	built, err := methods.Build(list, d)
	if err != nil {
		return nil, nil, err
	}
	return evaluateBuilt(ctx, windows, built, d, cfg)
}

// SlideWarning says which models of built have a context shorter than
// the longest of the windows (they slide: positions past the context are
// predicted from the last context symbols only); "" when none.
func SlideWarning(built []methods.Built, windows [][]byte) string {
	N := 0
	for _, w := range windows {
		N = max(N, len(w))
	}
	var short []string
	for _, b := range built {
		if m, ok := b.Predictor.(interface{ WindowLimits() (int, int) }); ok {
			if T, _ := m.WindowLimits(); T < N {
				short = append(short, fmt.Sprintf("%s (context %d)", b.Predictor.Name(), T))
			}
		}
	}
	if len(short) == 0 {
		return ""
	}
	return fmt.Sprintf("the windows (N=%d) are longer than the context of %s: past its context a model predicts from a sliding window of its last symbols, so its loss there is not in-context learning over the whole window", N, strings.Join(short, ", "))
}

// evaluateBuilt evaluates the built methods in context on the windows,
// the excesses over the method cfg.Reference means (methods.Reference: a
// label, a spec in any spelling or a bare kind; empty: by kind, the first
// bayes, else ctw, else the first method), and the paired differences of
// cfg.Pairs, whose methods are named the same ways (Pairs).
func evaluateBuilt(ctx context.Context, windows [][]byte, built []methods.Built, d methods.Defaults, cfg eval.Config) (*eval.Result, []methods.Built, error) {
	ref, err := methods.Reference(built, cfg.Reference)
	if err != nil {
		return nil, nil, err
	}
	cfg.Reference = built[ref].Predictor.Name()
	if cfg.Pairs, err = Pairs(cfg.Pairs).resolve(built); err != nil {
		return nil, nil, err
	}
	if cfg.Labels == nil {
		cfg.Labels = map[string]string{}
	}
	for _, b := range built {
		if b.Note != "" {
			cfg.Labels[b.Predictor.Name()] = b.Note
		}
	}
	res, err := eval.Evaluate(ctx, windows, d.A, methods.Predictors(built), cfg)
	return res, built, err
}

// WriteOutputs writes results.json, results.csv, summary.txt and the
// figure (loss.png and loss.svg, like the paper's Fig. 3, with the excess
// panel) into dir, each atomically; existing files are an error unless
// force.
func WriteOutputs(res *eval.Result, dir string, force bool, opts plot.Options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, o := range []struct {
		name  string
		write func(io.Writer) error
	}{{Outputs.JSON, res.WriteJSON}, {Outputs.CSV, res.WriteCSV}, {Outputs.Summary, res.WriteSummaryTable}} {
		if err := fsutil.WriteFile(filepath.Join(dir, o.name), force, o.write); err != nil {
			return err
		}
	}
	if len(res.Methods) > 1 {
		opts.Excess = true
	}
	opts = plot.Focus(res, opts)
	fig, err := plot.LossVsPosition(res, opts)
	if err != nil {
		return err
	}
	for _, name := range []string{Outputs.PNG, Outputs.SVG} {
		p := filepath.Join(dir, name)
		if !force {
			if err := fsutil.CheckNew(p); err != nil {
				return err
			}
		}
		if err := fig.Save(p, 8*plot.Inch, 6*plot.Inch); err != nil {
			return err
		}
	}
	return nil
}

// QuickConfig is the small default experiment of `vomc quickstart`.
type QuickConfig struct {
	Prior   source.Prior
	K       int // test windows (one fresh sequence per tree)
	KTrain  int // training windows for tuning KN's δ
	N       int // window length
	Methods methods.List
	Seed    uint64
	Workers int
	// Events receives the progress of the stages (tasks "train set",
	// "test set" over the trees, "evaluate windows") and the
	// stale temporaries removed next to the outputs as warnings (nil: not
	// reported).
	Events events.Sink
}

// DefaultQuick is A=3, D=3, λ=0.15, α=0.5, 1000 test windows and 200
// training windows of N=256, comparing CTW, KN (δ tuned), PPM (method A),
// an order-D Markov estimator and the unigram.
func DefaultQuick() QuickConfig {
	return QuickConfig{Prior: source.PaperPrior(3), K: 1000, KTrain: 200, N: 256,
		Methods: methods.MustParse("ctw,kn,ppm,markov,unigram"), Seed: 1}
}

// Quickstart checks its outputs (CheckQuickstartOutputs), builds a
// training and a test set from the prior, writes them and a drawing of the
// first test tree under out, tunes KN on the training set, evaluates the
// methods on the test set and writes the outputs of WriteOutputs,
// reporting on q.Events.
func Quickstart(ctx context.Context, q QuickConfig, out string, force bool) (*eval.Result, error) {
	ev := events.Or(q.Events)
	if err := CheckQuickstartOutputs(ev, out, force); err != nil {
		return nil, err
	}
	stage := func(name string) func(int, int) { return events.ProgressFunc(ev, name) }
	test := dataset.Config{Prior: q.Prior, K: q.K, NK: q.N, N: q.N, Fresh: true, Seed: q.Seed}
	train := dataset.Config{Prior: q.Prior, K: q.KTrain, NK: q.N, N: q.N, Fresh: true, Seed: q.Seed + 1_000_003}
	for _, c := range []dataset.Config{test, train} {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	trainDS, err := dataset.Build(train, q.Workers, stage("train set"))
	if err != nil {
		return nil, err
	}
	testDS, err := dataset.Build(test, q.Workers, stage("test set"))
	if err != nil {
		return nil, err
	}
	if err := trainDS.Write(filepath.Join(out, "data", "train"), force); err != nil {
		return nil, err
	}
	if err := testDS.Write(filepath.Join(out, "data", "test"), force); err != nil {
		return nil, err
	}
	for _, name := range []string{"tree0.svg", "tree0.png", "tree0.json"} {
		if err := draw.Save(testDS.Trees[0], filepath.Join(out, name), force); err != nil {
			return nil, err
		}
	}
	d := methods.DefaultsFor(q.Prior)
	d.Tune = Windows(trainDS)
	d.TuneNote = fmt.Sprintf("%d training windows", len(d.Tune))
	res, _, err := Evaluate(ctx, Windows(testDS), q.Methods, d, eval.Config{Workers: q.Workers, Events: events.Prefix(ev, "evaluate")})
	if err != nil {
		return nil, err
	}
	title := fmt.Sprintf("In-context loss, A=%d, D=%s, λ=%g, %d windows of N=%d", q.Prior.A, source.DepthList(q.Prior.Depths), q.Prior.Lambda, q.K, q.N)
	if err := WriteOutputs(res, out, force, plot.Options{Title: title}); err != nil {
		return nil, err
	}
	return res, nil
}

// CheckQuickstartOutputs checks Quickstart's outputs before any work: the
// files of the evaluation and the first tree in out, and the data sets
// out/data/train and out/data/test (removed temporaries are warned of on
// ev).
func CheckQuickstartOutputs(ev events.Sink, out string, force bool) error {
	warn := events.WarnWriter(ev)
	if err := fsutil.CheckOutputDir(warn, out, force, Outputs.JSON, Outputs.CSV, Outputs.Summary,
		Outputs.PNG, Outputs.SVG, "tree0.svg", "tree0.png", "tree0.json"); err != nil {
		return err
	}
	for _, d := range []string{"train", "test"} {
		if err := fsutil.CheckOutputDir(warn, filepath.Join(out, "data", d), force, dataset.ManifestFile); err != nil {
			return err
		}
	}
	return nil
}
