package experiment

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/compress"
	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/kn"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend"
)

// HalfFile is the file the half-file protocol (EvalOptions.Half) writes.
const HalfFile = "half.txt"

// EvalOptions are the inputs of RunEval.
type EvalOptions struct {
	Data string // a data set directory, or
	File string // a symbol file read with Mode and Alphabet (symbols.ReadFile)

	Mode     symbols.Mode
	Alphabet string
	// N cuts the file into windows of N symbols (0: one window); D,
	// Lambda and Alpha are the methods' defaults for a file (a data set's
	// come from its prior).
	N, D          int
	Lambda, Alpha float64
	// Half evaluates a file by the protocol of Begleiter, El-Yaniv and
	// Yona (2004) instead (EvalHalf), writing HalfFile into Out.
	Half bool

	Train   string       // data set on which KN's δ is tuned ("": the evaluated windows)
	Methods methods.List // the methods, parsed once (methods.Parse)
	// Reference names the reference of the excesses (methods.Find: a
	// method's label, its spec in any spelling, or its bare kind when one
	// method has it); "": the first bayes method, else the first ctw,
	// else the first method (methods.Reference).
	Reference string
	// Pairs are pairs of methods whose paired difference A − B is
	// reported beside the excesses, named the same ways (Pairs).
	Pairs   Pairs
	Out     string // output directory (WriteOutputs)
	Export  string // directory for every method's distributions as .npy ("": none)
	Workers int
	Force   bool // replace existing outputs
	// Slide accepts models whose context is shorter than the windows
	// (SlideWarning, then kept in the result's labels); without it they
	// are refused (*SlideError) before the evaluation.
	Slide bool
	Plot  plot.Options // the figure's options
	// Backend is the compute backend of tf methods' models, chosen by the
	// caller (nil: a tf or synth method fails, transformer.ErrNoBackend).
	Backend backend.Backend
	// Torch is the PyTorch engine that torch methods' models run on, made
	// once by the caller, which decides its interpreter (nil: a torch
	// method is refused).
	Torch *trainrun.Torch

	// Events receives the report as log lines (what was read, notes, the
	// summary table, the files written), the progress over the windows
	// (task "windows"), and warnings: the stale temporaries removed, a
	// data set's shared trees, models that slide (nil: discarded).
	Events events.Sink
	// MemoryLimit refuses work whose estimated peak memory exceeds it
	// (bytes; 0: no check; sysmem.Limit).
	MemoryLimit int64

	log io.Writer // Events' log lines (RunEval)
}

// EvalReport is what RunEval computed: the evaluation (nil with Half), the
// methods built, the exported files, and the half-file table.
type EvalReport struct {
	Result   *eval.Result
	Built    []methods.Built
	Exported []string
	Half     string
}

// RunEval checks the outputs, reads the data set or file, builds the
// methods with their defaults (tuning KN on Train or on the evaluated
// windows), evaluates them in context, writes the outputs into Out
// (WriteOutputs) and, with Export, every method's distributions. With
// Half it runs EvalHalf on the file instead.
func RunEval(ctx context.Context, o EvalOptions) (*EvalReport, error) {
	o.Events = events.Or(o.Events)
	o.log = events.LogWriter(o.Events)
	if o.Half && (o.Reference != "" || len(o.Pairs) > 0) {
		return nil, fmt.Errorf("the half-file protocol (Half) reports each method's loss alone: no reference, no pairs")
	}
	if err := o.CheckMethods(); err != nil {
		return nil, err
	}
	if err := CheckEvalOutputs(o.Events, o.Out, o.Export, o.Half, o.Force); err != nil {
		return nil, err
	}
	if err := CheckTuning(o.Methods, o.Train); err != nil {
		return nil, err
	}
	var d methods.Defaults
	var labels map[string]string
	var err error
	if o.Data != "" {
		d, labels, err = o.readDataSet()
	} else {
		var x []byte
		if d, x, err = o.readFile(); err == nil && o.Half {
			d.Backend, d.Torch = o.Backend, o.Torch
			return o.runHalf(x, d)
		}
	}
	if err != nil {
		return nil, err
	}
	d.Backend, d.Torch = o.Backend, o.Torch
	if err := o.setTuning(&d); err != nil {
		return nil, err
	}
	return o.evaluate(ctx, d, labels)
}

// CheckMethods checks the methods before any work: their files
// (methods.List.Check), and that the reference and the pairs name some of
// them where that can be known before they are built
// (methods.List.CheckName: a name written as a spec; a label is checked
// once they are built).
func (o EvalOptions) CheckMethods() error {
	if err := o.Methods.Check(); err != nil {
		return err
	}
	if o.Reference != "" {
		if err := o.Methods.CheckName(o.Reference); err != nil {
			return fmt.Errorf("reference method: %w", err)
		}
	}
	return o.Pairs.check(o.Methods)
}

// SlideError refuses models whose context is shorter than the windows
// (EvalOptions.Slide).
type SlideError struct{ Warning string }

func (e *SlideError) Error() string {
	return e.Warning + "; evaluate it so with --slide, or on windows no longer than its context"
}

// CheckEvalOutputs checks RunEval's outputs before any work: the files of
// out (or HalfFile with half) and the export directory, warning of removed
// temporaries on ev.
func CheckEvalOutputs(ev events.Sink, out, export string, half, force bool) error {
	warn := events.WarnWriter(ev)
	names := []string{Outputs.JSON, Outputs.CSV, Outputs.Summary, Outputs.PNG, Outputs.SVG}
	if half {
		names = []string{HalfFile}
	}
	if err := fsutil.CheckOutputDir(warn, out, force, names...); err != nil {
		return err
	}
	if export != "" {
		return fsutil.CheckOutputDir(warn, export, force)
	}
	return nil
}

// CheckEvalMemory reads the headers of the data set (and the tuning set,
// if any) and refuses evaluating list on it with workers when the estimate
// (EvalMemoryEstimate) exceeds limit (bytes; 0: no check; sysmem.Limit).
func CheckEvalMemory(data, train string, list methods.List, workers int, limit int64) error {
	h, err := dataset.ReadHeader(data)
	if err != nil {
		return err
	}
	d := methods.DefaultsFor(h.Prior)
	w := methods.Workload{A: d.A, D: d.D, Windows: h.Windows, N: h.N, Workers: workers}
	if train != "" {
		th, err := dataset.ReadHeader(train)
		if err != nil {
			return err
		}
		w.Tune, w.TuneN = th.Windows, th.N
	}
	W := int64(h.Windows)
	return sysmem.Limit(fmt.Sprintf("evaluating %s (%d windows of N=%d)", data, h.Windows, h.N), EvalMemoryEstimate(list, W*int64(h.N)+4*W, w), limit)
}

// EvalMemoryEstimate estimates the peak memory of RunEval evaluating the
// methods of list on w: the process itself (sysmem.Base), the evaluated
// data (dataBytes: symbols and tree indices) with a slice header per
// window, the tuning windows (w.Tune of them, none when KN tunes on the
// evaluated ones), the methods' states (methods.MemoryEstimate) and the
// result accumulators.
func EvalMemoryEstimate(list methods.List, dataBytes int64, w methods.Workload) int64 {
	est := sysmem.Base + dataBytes + 24*int64(w.Windows)
	if w.Tune > 0 {
		est += int64(w.Tune) * (int64(w.TuneN) + 4 + 24)
	}
	est += methods.MemoryEstimate(list, w)
	// per-position accumulators: results, and up to 2 chunks per worker
	M := int64(len(list))
	return est + M*int64(w.N)*8*8*int64(2*max(1, w.Workers)+2)
}

// SharedTreesWarning returns a warning when a data set's windows share
// context trees (⌊NK/N⌋ > 1 windows per tree): the confidence intervals
// treat the windows as independent, which windows of one tree are not.
func SharedTreesWarning(c dataset.Config) string {
	if w := c.WindowsPerTree(); w > 1 {
		return fmt.Sprintf("warning: the %d windows come from %d trees (%d per tree); the 95%% CIs assume independent windows, so they are too narrow here (use a data set with one window per tree, e.g. 'vomc data' with --NK = -N)", c.K*w, c.K, w)
	}
	return ""
}

// readDataSet reads the data set o.Data (after the memory check) and
// returns its defaults with the windows, and the result's labels.
func (o EvalOptions) readDataSet() (methods.Defaults, map[string]string, error) {
	labels := map[string]string{}
	if o.MemoryLimit > 0 {
		if err := CheckEvalMemory(o.Data, o.Train, o.Methods, o.Workers, o.MemoryLimit); err != nil {
			return methods.Defaults{}, nil, err
		}
	}
	ds, err := dataset.ReadWindows(o.Data)
	if err != nil {
		return methods.Defaults{}, nil, err
	}
	d := methods.DefaultsFor(ds.Config().Prior)
	d.Windows = Windows(ds)
	fmt.Fprintf(o.log, "data set %s: %d windows of N=%d, A=%d\n", o.Data, len(d.Windows), ds.Config().N, d.A)
	if w := SharedTreesWarning(ds.Config()); w != "" {
		o.Events.Warn(w)
		labels["warning"] = w
	}
	return d, labels, nil
}

// readFile reads o.File and returns the defaults with the windows cut
// from it (none with Half), and the symbols.
func (o EvalOptions) readFile() (methods.Defaults, []byte, error) {
	x, al, err := symbols.ReadFile(o.File, o.Mode, o.Alphabet)
	if err != nil {
		return methods.Defaults{}, nil, err
	}
	d := methods.Defaults{A: al.Size(), D: o.D, Lambda: o.Lambda, Alpha: o.Alpha}
	if o.Half {
		return d, x, nil
	}
	if o.N < 0 || o.N > len(x) {
		return d, nil, fmt.Errorf("window length %d outside 0..%d (the file's length)", o.N, len(x))
	}
	n := o.N
	if n == 0 {
		n = len(x)
	}
	for i := 0; i+n <= len(x); i += n {
		d.Windows = append(d.Windows, x[i:i+n])
	}
	w := methods.Workload{A: d.A, D: d.D, Windows: len(d.Windows), N: n, Workers: o.Workers}
	if err := sysmem.Limit("evaluating "+o.File, EvalMemoryEstimate(o.Methods, int64(len(x)), w), o.MemoryLimit); err != nil {
		return d, nil, err
	}
	if err := ctw.CheckMemory(ctw.Config{A: d.A, D: d.D, Lambda: 0.5, Alpha: 0.5}, int64(n)); err != nil {
		return d, nil, err
	}
	fmt.Fprintf(o.log, "file %s: %d symbols over %v, %d windows of N=%d\n", o.File, len(x), al, len(d.Windows), n)
	return d, x, nil
}

// setTuning sets the windows on which KN's δ is tuned: the data set
// o.Train, else the evaluated windows.
func (o EvalOptions) setTuning(d *methods.Defaults) error {
	if o.Train != "" {
		tds, err := dataset.ReadWindows(o.Train)
		if err != nil {
			return err
		}
		if tds.Config().Prior.A != d.A {
			return fmt.Errorf("training set %s has A=%d, the evaluated data A=%d", o.Train, tds.Config().Prior.A, d.A)
		}
		d.Tune = Windows(tds)
		d.TuneNote = fmt.Sprintf("%d windows of %s", len(d.Tune), o.Train)
	} else {
		d.Tune = d.Windows
		d.TuneNote = fmt.Sprintf("the %d evaluated windows (oracle tuning)", len(d.Windows))
	}
	for _, s := range o.Methods {
		if _, fixed := s.Value("delta"); s.Kind == "kn" && !fixed {
			n := 0
			for _, w := range d.Tune {
				n += len(w)
			}
			fmt.Fprintf(o.log, "tuning KN's δ on %s: %d passes over %d symbols …\n", d.TuneNote, kn.TuneEvaluations, n)
			d.TuneProgress = events.ProgressFunc(o.Events, "tuning KN's δ")
			break
		}
	}
	return nil
}

// evaluate runs Evaluate on d.Windows, reports and writes the outputs.
func (o EvalOptions) evaluate(ctx context.Context, d methods.Defaults, labels map[string]string) (*EvalReport, error) {
	built, err := methods.Build(o.Methods, d)
	if err != nil {
		return nil, err
	}
	if w := SlideWarning(built, d.Windows); w != "" {
		if !o.Slide {
			return nil, &SlideError{w}
		}
		o.Events.Warn("warning: " + w)
		if labels == nil {
			labels = map[string]string{}
		}
		labels["warning_context"] = w
	}
	res, built, err := evaluateBuilt(ctx, d.Windows, built, d, eval.Config{Workers: o.Workers, Reference: o.Reference, Pairs: o.Pairs, Events: o.Events, Labels: labels})
	if err != nil {
		return nil, err
	}
	for _, b := range built {
		if b.Note != "" {
			fmt.Fprintf(o.log, "%s: %s\n", b.Predictor.Name(), b.Note)
		}
	}
	if err := res.WriteSummaryTable(o.log); err != nil {
		return nil, err
	}
	if w := labels["warning_context"]; w != "" {
		fmt.Fprintln(o.log, "warning: "+w)
	}
	if err := WriteOutputs(res, o.Out, o.Force, o.Plot); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.log, "wrote %s/{%s,%s,%s,%s,%s}\n", o.Out, Outputs.JSON, Outputs.CSV, Outputs.Summary, Outputs.PNG, Outputs.SVG)
	rep := &EvalReport{Result: res, Built: built}
	if o.Export != "" {
		if rep.Exported, err = methods.ExportNPY(o.Export, o.Force, d.Windows, methods.Predictors(built)); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.log, "exported %s\n", strings.Join(rep.Exported, ", "))
	}
	return rep, nil
}

// runHalf runs EvalHalf on x with KN tuned on its first half, reports the
// table and writes it to Out/HalfFile.
func (o EvalOptions) runHalf(x []byte, d methods.Defaults) (*EvalReport, error) {
	d.Tune, d.TuneNote = [][]byte{x[:len(x)/2]}, "the first half of the file"
	s, err := EvalHalf(x, o.Methods, d)
	if err != nil {
		return nil, err
	}
	o.Events.Log(strings.TrimSuffix(s, "\n"))
	return &EvalReport{Half: s}, fsutil.WriteBytes(filepath.Join(o.Out, HalfFile), o.Force, []byte(s))
}

// EvalHalf returns the table of the half-file log-loss of each method of
// list (defaults d): learn on x's first half, freeze, and average −log2 P
// on the second half (compress.HalfLogLoss), in bits/symbol.
func EvalHalf(x []byte, list methods.List, d methods.Defaults) (string, error) {
	built, err := methods.Build(list, d)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Begleiter, El-Yaniv and Yona (2004) protocol: learn x[1..%d], freeze, test x[%d..%d]\n", len(x)/2, len(x)/2+1, len(x))
	fmt.Fprintf(&b, "%-36s %14s  %s\n", "method", "bits/symbol", "frozen")
	for _, bm := range built {
		bits, frozen, err := compress.HalfLogLoss(bm.Predictor, x)
		if err != nil {
			return "", err
		}
		note := "yes"
		if !frozen {
			note = "no: this method cannot freeze and kept learning"
		}
		fmt.Fprintf(&b, "%-36s %14.4f  %s\n", bm.Predictor.Name(), bits, note)
	}
	return b.String(), nil
}
