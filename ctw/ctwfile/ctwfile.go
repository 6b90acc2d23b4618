// Package ctwfile does the work of `vomc ctw`: CTW on a symbol file, with
// the log marginal likelihood, the MAP context tree, and optionally the
// posterior weights ω over context lengths and the predictive
// distributions at every position, each after checking its outputs and
// its memory estimate (MemoryEstimate).
package ctwfile

import (
	"fmt"
	"io"
	"math"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/source/draw"
	"github.com/vomc/vomc/source/treefile"
)

// MaxPrintedLeaves bounds the MAP leaves Run prints.
const MaxPrintedLeaves = 40

// Options are the inputs of Run.
type Options struct {
	File     string
	Mode     symbols.Mode
	Alphabet string // text alphabet in symbol order ("": the characters present, sorted)
	D        int
	// Lambda is the stop probability λ; with AutoLambda it is AutoLambda(A).
	Lambda     float64
	AutoLambda bool
	Alpha      float64
	Init       ctw.Init
	// Map, Weights and Predictions are output files ("": none): the MAP
	// tree (a format of draw.Save), ω_{n,l} and the predictive
	// distributions at every position (CSV).
	Map, Weights, Predictions string
	Force                     bool // replace existing outputs
	// Events receives the report as log lines, and the stale temporaries
	// removed next to the outputs as warnings (nil: discarded).
	Events events.Sink
	// MemoryLimit refuses work whose estimated peak memory exceeds it
	// (bytes; 0: no check; sysmem.Limit).
	MemoryLimit int64

	log io.Writer // Events' log lines (Run)
}

// Report is what Run computed.
type Report struct {
	Config ctw.Config
	LogML  float64  // ln P(x) in nats
	MAP    *ctw.MAP // nil with the shorter initial context (no batch recursion)
}

// AutoLambda is the BCT default λ = 1 − 2^{−(A−1)} for A ≤ 16 and 1/2
// (classic CTW) for larger alphabets, where the BCT value rounds to 1.
func AutoLambda(A int) float64 {
	if A > 16 {
		return 0.5
	}
	return 1 - math.Pow(2, -float64(A-1))
}

// MemoryEstimate estimates the peak memory of Run on the symbols x: the
// process itself (sysmem.Base), CTW's context tree on x
// (ctw.SequenceMemoryEstimate: the contexts x creates, counted where nodes
// are large) and, with mapNodes > 0, the MAP tree of that many nodes
// (ctw.MAPMemoryEstimate).
func MemoryEstimate(cfg ctw.Config, x []byte, mapNodes int64) int64 {
	return sysmem.Base + ctw.SequenceMemoryEstimate(cfg, x) + ctw.MAPMemoryEstimate(cfg, mapNodes)
}

// Run reads the file, validates the configuration, checks the memory and
// the outputs, computes ln P(x) and (one counting pass) the MAP tree, and
// writes the report and the requested outputs.
func Run(o Options) (*Report, error) {
	o.log = events.LogWriter(o.Events)
	x, al, err := symbols.ReadFile(o.File, o.Mode, o.Alphabet)
	if err != nil {
		return nil, err
	}
	cfg, err := o.config(x, al.Size())
	if err != nil {
		return nil, err
	}
	if o.Map != "" && !draw.KnownFormat(o.Map) {
		return nil, fmt.Errorf("%s: unknown tree format (use %s)", o.Map, draw.Formats)
	}
	rep := &Report{Config: cfg}
	var counts *ctw.Counts
	if cfg.Init == ctw.Shorter {
		rep.LogML, err = ctw.LogMarginalLikelihood(cfg, x)
	} else if counts, err = ctw.CountSequence(cfg, x); err == nil {
		rep.LogML = counts.LogML()
	}
	if err != nil {
		return nil, err
	}
	o.printHeader(rep, x, al)
	if counts != nil {
		if rep.MAP, err = o.mapTree(counts, cfg, x, al); err != nil {
			return nil, err
		}
	}
	return rep, o.writeTraces(cfg, x)
}

// config validates the configuration for x over A symbols and checks its
// memory and the outputs.
func (o Options) config(x []byte, A int) (ctw.Config, error) {
	lambda := o.Lambda
	if o.AutoLambda {
		lambda = AutoLambda(A)
	}
	cfg := ctw.Config{A: A, D: o.D, Lambda: lambda, Alpha: o.Alpha, Init: o.Init}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if err := ctw.CheckMemory(cfg, int64(len(x))); err != nil {
		return cfg, err
	}
	if err := sysmem.Limit(fmt.Sprintf("CTW with A=%d, D=%d on %d symbols", A, o.D, len(x)), MemoryEstimate(cfg, x, 0), o.MemoryLimit); err != nil {
		return cfg, err
	}
	return cfg, fsutil.CheckOutputs(events.WarnWriter(o.Events), o.Force, o.Map, o.Weights, o.Predictions)
}

// printHeader reports the file, the configuration and ln P(x).
func (o Options) printHeader(rep *Report, x []byte, al symbols.Alphabet) {
	cfg, ml := rep.Config, rep.LogML
	counted := len(x)
	if cfg.Init == ctw.Condition {
		counted = max(0, len(x)-cfg.D)
	}
	fmt.Fprintf(o.log, "file %s: %d symbols, alphabet %v, A=%d\n", o.File, len(x), al, cfg.A)
	fmt.Fprintf(o.log, "CTW D=%d λ=%g α=%g init=%v\n", cfg.D, cfg.Lambda, cfg.Alpha, cfg.Init)
	fmt.Fprintf(o.log, "ln P(x) = %.6f nats = %.6f bits", ml, ml/math.Ln2)
	if counted > 0 {
		fmt.Fprintf(o.log, " (%.6f bits/symbol over %d predicted symbols)", -ml/math.Ln2/float64(counted), counted)
	}
	fmt.Fprintln(o.log)
}

// mapTree checks the MAP tree's memory (its internal nodes have all A
// children, each leaf A probabilities), builds it, prints its leaves and
// writes it to o.Map.
func (o Options) mapTree(counts *ctw.Counts, cfg ctw.Config, x []byte, al symbols.Alphabet) (*ctw.MAP, error) {
	if o.MemoryLimit > 0 {
		nodes := counts.MAPNodes()
		if err := sysmem.Limit(fmt.Sprintf("the MAP tree (%d nodes)", nodes), MemoryEstimate(cfg, x, nodes), o.MemoryLimit); err != nil {
			return nil, err
		}
	}
	mp := counts.MAPTree()
	fmt.Fprintf(o.log, "MAP tree: %d leaves, depth %d, posterior probability %.4g\n", mp.Tree.NumLeaves(), mp.Tree.Depth(), math.Exp(mp.LogPosterior))
	leaves := mp.Tree.Leaves()
	for i, lf := range leaves {
		if i == MaxPrintedLeaves {
			fmt.Fprintf(o.log, "  … %d more leaves (write them all with --map FILE.json)\n", len(leaves)-i)
			break
		}
		fmt.Fprintf(o.log, "  leaf %-12s p = %s\n", suffixString(lf.Suffix, al), treefile.ProbString(lf.P))
	}
	if o.Map != "" {
		if err := draw.Save(mp.Tree, o.Map, o.Force); err != nil {
			return nil, err
		}
		fmt.Fprintf(o.log, "wrote %s\n", o.Map)
	}
	return mp, nil
}

// suffixString formats a context in the file's alphabet.
func suffixString(s []byte, al symbols.Alphabet) string {
	if len(s) == 0 {
		return "()"
	}
	if al.Chars == nil {
		return fmt.Sprint(s)
	}
	return string(al.Format(s))
}

// writeTraces writes ω_{n,l} to o.Weights and the predictive
// distributions to o.Predictions at every position as CSV
// (ctw.WriteWeightsCSV, ctw.WritePredictionsCSV).
func (o Options) writeTraces(cfg ctw.Config, x []byte) error {
	for _, f := range []struct {
		path  string
		write func(io.Writer, ctw.Config, []byte) error
	}{{o.Weights, ctw.WriteWeightsCSV}, {o.Predictions, ctw.WritePredictionsCSV}} {
		if f.path == "" {
			continue
		}
		if err := fsutil.WriteFile(f.path, o.Force, func(w io.Writer) error { return f.write(w, cfg, x) }); err != nil {
			return err
		}
		fmt.Fprintf(o.log, "wrote %s\n", f.path)
	}
	return nil
}
