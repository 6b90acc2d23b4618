// Package treefile does the work of `vomc tree` and `vomc generate` on
// context-tree files: sampling a tree from a prior, reading, printing and
// drawing tree files, and generating symbols from one, each after checking
// its outputs and its memory estimate (SampleMemoryEstimate,
// GenerateMemoryEstimate).
package treefile

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/draw"
)

// Options are the outputs of Sample and Show and how they report.
type Options struct {
	// Outs are the files the tree is written to, in the format each
	// extension names (draw.Save).
	Outs  []string
	Force bool // replace existing outputs
	// Events receives the tree's leaves (Print) and a line per file
	// written as log lines, and the stale temporaries removed next to the
	// outputs as warnings (nil: discarded).
	Events events.Sink
	// MemoryLimit refuses work whose estimated peak memory exceeds it
	// (bytes; 0: no check; sysmem.Limit).
	MemoryLimit int64
}

// Sample checks the outputs, validates pr, checks the memory estimate of
// sampling from it (SampleMemoryEstimate), samples a tree with seed, prints it
// (Print) and writes it to every output.
func Sample(pr source.Prior, seed uint64, o Options) (*source.Tree, error) {
	if err := fsutil.CheckOutputs(events.WarnWriter(o.Events), o.Force, o.Outs...); err != nil {
		return nil, err
	}
	if err := pr.Validate(); err != nil {
		return nil, err
	}
	if err := sysmem.Limit(fmt.Sprintf("a tree with A=%d, D=%v, λ=%g (%.3g nodes expected)", pr.A, pr.Depths, pr.Lambda, pr.ExpectedNodes()), SampleMemoryEstimate(pr), o.MemoryLimit); err != nil {
		return nil, err
	}
	t, err := pr.Sample(source.RNG(seed, 0))
	if err != nil {
		return nil, err
	}
	return t, o.output(t)
}

// SampleMemoryEstimate estimates the peak memory of Sample from pr: the
// process itself (sysmem.Base) and twice (the garbage collector's headroom)
// the live memory of the tree's expected source.Prior.ExpectedNodes nodes,
// each of source.NodeBytes, its copy for the JSON writer (8·A bytes) and
// its line of the printed tree (≈ 6·A + 30 bytes, held in a builder that
// grows by doubling, so twice that).
func SampleMemoryEstimate(pr source.Prior) int64 {
	perNode := float64(source.NodeBytes(pr.A)) + float64(20*pr.A+60)
	return sysmem.Base + int64(2*pr.ExpectedNodes()*perNode)
}

// Show checks the outputs, reads the tree file path (Read), prints it and
// writes it to every output.
func Show(path string, o Options) (*source.Tree, error) {
	if err := fsutil.CheckOutputs(events.WarnWriter(o.Events), o.Force, o.Outs...); err != nil {
		return nil, err
	}
	t, err := Read(path)
	if err != nil {
		return nil, err
	}
	return t, o.output(t)
}

// output logs t (Print) on o.Events and writes it to o.Outs.
func (o Options) output(t *source.Tree) error {
	ev := events.Or(o.Events)
	var b strings.Builder
	Print(&b, t)
	ev.Log(strings.TrimSuffix(b.String(), "\n"))
	for _, p := range o.Outs {
		if err := draw.Save(t, p, o.Force); err != nil {
			return err
		}
		ev.Log("wrote " + p)
	}
	return nil
}

// Read reads a tree from a JSON file; errors of the content name the file.
func Read(path string) (*source.Tree, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := source.ReadTreeJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Print writes a summary line of t and every leaf: its suffix (oldest
// symbol first) and its next-symbol distribution (ProbString).
func Print(w io.Writer, t *source.Tree) {
	fmt.Fprintf(w, "context tree: A=%d, max depth D=%d, %d leaves, actual depth %d\n", t.A, t.D, t.NumLeaves(), t.Depth())
	for _, lf := range t.Leaves() {
		fmt.Fprintf(w, "  leaf %-14s p = %s\n", source.FormatSuffix(lf.Suffix, t.A), ProbString(lf.P))
	}
}

// ProbString formats a distribution as [p0 p1 …] with 3 decimals.
func ProbString(p []float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range p {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(v, 'f', 3, 64))
	}
	return b.String() + "]"
}

// Generation asks for n symbols from the tree in the file Tree.
type Generation struct {
	Tree string
	N    int64
	Seed uint64
	// Raw writes one byte per symbol instead of text (source.Stream).
	Raw bool
	// Out is the output file, written atomically (replaced only with
	// Force); "" writes to Stdout.
	Out    string
	Force  bool
	Stdout io.Writer
	// Events receives the stale temporaries removed next to Out as
	// warnings (nil: discarded).
	Events events.Sink
	// MemoryLimit refuses work whose estimated peak memory exceeds it
	// (bytes; 0: no check; sysmem.Limit).
	MemoryLimit int64
}

// Generate checks the output, reads the tree, checks that text output has
// a character for every symbol and the memory estimate
// (GenerateMemoryEstimate), and streams g.N symbols from the dummy context
// (source.Stream).
func Generate(g Generation) error {
	if g.N < 0 {
		return fmt.Errorf("%d symbols: a negative count", g.N)
	}
	if err := fsutil.CheckOutputs(events.WarnWriter(g.Events), g.Force, g.Out); err != nil {
		return err
	}
	t, err := Read(g.Tree)
	if err != nil {
		return err
	}
	if !g.Raw && t.A > len(source.TextDigits) {
		return fmt.Errorf("A=%d is too large for text output (at most %d symbols have a character); write raw bytes", t.A, len(source.TextDigits))
	}
	if err := sysmem.Limit(fmt.Sprintf("generating from a tree with %d leaves", t.NumLeaves()), GenerateMemoryEstimate(t), g.MemoryLimit); err != nil {
		return err
	}
	write := func(w io.Writer) error { return source.Stream(w, t, g.Seed, g.N, g.Raw) }
	if g.Out == "" {
		return write(g.Stdout)
	}
	return fsutil.WriteFile(g.Out, g.Force, write)
}

// GenerateMemoryEstimate estimates the peak memory of Generate from t: the
// process itself (sysmem.Base), the tree twice (while its JSON is decoded,
// and the compiled sampler: source.Tree.MemoryEstimate), one chunk of
// symbols and its text form (source.StreamChunk).
func GenerateMemoryEstimate(t *source.Tree) int64 {
	return sysmem.Base + 2*t.MemoryEstimate() + 4<<20 + 3*source.StreamChunk
}
