package dynamics

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// DefaultMethods are the reference predictors of a prior of maximum depth
// D: the unigram, Markov(k) for k = 1..D, Kneser–Ney and CTW.
func DefaultMethods(D int) methods.List {
	parts := []string{"unigram"}
	for k := 1; k <= D; k++ {
		parts = append(parts, fmt.Sprintf("markov:k=%d", k))
	}
	return methods.MustParse(strings.Join(append(parts, "kn", "ctw"), ","))
}

// RunConfig describes a measurement of a training run.
type RunConfig struct {
	// Run is the run directory (its snapshots: 'vomc train --snapshots').
	Run string
	// Backend is the compute backend of the snapshots' models, chosen by
	// the caller (nil: Run fails, transformer.ErrNoBackend).
	Backend backend.Backend
	// Data is the test data set; its first Windows windows (0: 200) are
	// the probe set.
	Data    string
	Windows int
	// Train is a data set on whose windows Kneser–Ney's discount is tuned
	// (empty: the probe windows).
	Train string
	// Methods are the reference specifications (package methods; empty:
	// DefaultMethods of the data's prior, with its λ and α).
	Methods methods.List
	// HeadWindows, MaxK and Null configure the head labels (Options).
	HeadWindows, MaxK int
	Null              attnmap.NullOptions
	Workers           int
	// Checkpoint, if set, keeps the measured snapshots so that an
	// interrupted run resumes (Options.Checkpoint); Identity names the
	// caller's build (e.g. pipeline.CodeKey), to which Run adds the
	// backend's name (Options.Identity).
	Checkpoint, Identity string
	// Events, if set, receives the progress over the snapshots
	// (Options.Events).
	Events events.Sink
}

// Result is a measured run.
type Result struct {
	Run string `json:"run"`
	// Label names the model in titles and the phases text (e.g.
	// "TF(4,4) [seed 1]"); empty: the run directory.
	Label      string      `json:"label,omitempty"`
	Data       string      `json:"data"`
	Windows    int         `json:"windows"`
	N          int         `json:"N"`
	References []string    `json:"references"`
	Excess     string      `json:"excess_reference"`
	Points     []Point     `json:"points"`
	Phases     []Phase     `json:"phases"`
	Emergences []Emergence `json:"emergences"`
}

// Run measures the snapshots of cfg.Run on the probe windows of cfg.Data;
// it stops with ctx's error when ctx is cancelled.
func Run(ctx context.Context, cfg RunConfig) (*Result, error) {
	if cfg.Backend == nil {
		return nil, fmt.Errorf("dynamics: %w", transformer.ErrNoBackend)
	}
	snaps, err := Snapshots(cfg.Run)
	if err != nil {
		return nil, err
	}
	ds, err := dataset.Read(cfg.Data)
	if err != nil {
		return nil, err
	}
	nw := cfg.Windows
	if nw == 0 {
		nw = 200
	}
	all := experiment.Windows(ds)
	if nw < 2 || nw > len(all) {
		return nil, fmt.Errorf("dynamics: %d probe windows asked for, the data set %s has %d (need 2..%d)", nw, cfg.Data, len(all), len(all))
	}
	probe := all[:nw]
	d := methods.DefaultsFor(ds.Config().Prior)
	refs, excess, err := references(cfg, d, probe)
	if err != nil {
		return nil, err
	}
	load := func(s Snapshot) (Model, error) {
		m, err := transformer.LoadSafetensorsOn(cfg.Backend, s.Path)
		if err != nil {
			return nil, err
		}
		if m.Config.Alphabet != d.A || m.Config.Context < len(probe[0]) {
			return nil, fmt.Errorf("dynamics: snapshot %s (A=%d, N=%d) does not fit the probe windows (A=%d, N=%d)",
				s.Path, m.Config.Alphabet, m.Config.Context, d.A, len(probe[0]))
		}
		return m, nil
	}
	pts, err := Measure(ctx, snaps, load, Options{Windows: probe, References: refs, Excess: excess, HeadWindows: cfg.HeadWindows,
		MaxK: cfg.MaxK, Null: cfg.Null, Workers: cfg.Workers, Events: cfg.Events, Checkpoint: cfg.Checkpoint, Identity: identity(cfg)})
	if err != nil {
		return nil, err
	}
	r := &Result{Run: cfg.Run, Data: cfg.Data, Windows: nw, N: len(probe[0]), Points: pts, Phases: Phases(pts), Emergences: Emergences(pts)}
	for _, ref := range refs {
		r.References = append(r.References, ref.Name)
	}
	r.Excess = excess
	return r, nil
}

// identity is cfg.Identity with the name of the backend the snapshots are
// loaded on.
func identity(cfg RunConfig) string { return cfg.Identity + "; backend " + cfg.Backend.Name() }

// references are the reference predictors of cfg.Methods (empty:
// DefaultMethods of the data's prior, whose defaults are d), Kneser–Ney
// tuned on the windows of cfg.Train or else on the probe windows, and the
// name of the excesses' reference among them (methods.Reference: by kind,
// the exact Bayes predictor, else CTW, else the first).
func references(cfg RunConfig, d methods.Defaults, probe [][]byte) ([]Reference, string, error) {
	d.Tune, d.TuneNote = probe, "the probe windows"
	if cfg.Train != "" {
		tds, err := dataset.ReadWindows(cfg.Train)
		if err != nil {
			return nil, "", err
		}
		d.Tune, d.TuneNote = experiment.Windows(tds), "the windows of "+cfg.Train
	}
	list := cfg.Methods
	if len(list) == 0 {
		list = DefaultMethods(d.D)
		// Where CTW(D) is not the Bayes predictor of the data's prior
		// (mixed depths, non-Dirichlet leaves), the exact one is measured
		// too, and the excess is over it.
		if p := d.Prior; p != nil && !ctwIsBayes(*p) {
			list = append(list, methods.MustParse("bayes")...)
		}
	}
	built, err := methods.Build(list, d)
	if err != nil {
		return nil, "", err
	}
	var refs []Reference
	for _, b := range built {
		refs = append(refs, Reference{Name: b.Predictor.Name(), P: b.Predictor})
	}
	ex, err := methods.Reference(built, "")
	return refs, refs[ex].Name, err
}

// excessIndex is the index of the excess reference (see Options.Excess):
// the one named name, or with name empty the first; −1 when a given name
// is missing.
func excessIndex(refs []Reference, name string) int {
	if name == "" {
		return 0
	}
	for i, r := range refs {
		if r.Name == name {
			return i
		}
	}
	return -1
}

// ctwIsBayes reports whether CTW with the prior's (D, λ, α) is its exact
// Bayes predictor: one maximum depth and Dirichlet leaves.
func ctwIsBayes(p source.Prior) bool {
	for _, D := range p.Depths {
		if D != p.Depths[0] {
			return false
		}
	}
	return p.Leaves == source.Dirichlet
}

// Files are the files Write writes.
var Files = struct{ JSON, CSV, Phases, PNG, SVG string }{"dynamics.json", "dynamics.csv", "phases.txt", "dynamics.png", "dynamics.svg"}

// FileNames are the files Write writes, in order.
func FileNames() []string {
	return []string{Files.JSON, Files.CSV, Files.Phases, Files.PNG, Files.SVG}
}

// ExistingOutput is the path of the first of Write's files that exists in
// dir, or "" when none does.
func ExistingOutput(dir string) string {
	for _, f := range FileNames() {
		if p := filepath.Join(dir, f); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Write writes the result into dir: dynamics.json (everything),
// dynamics.csv (one row per snapshot: step, loss, excess with intervals,
// each reference's divergence with interval, the closest reference, the
// number of labelled heads), phases.txt (PhasesText) and the figure
// (dynamics.png/svg). Existing files are an error unless force.
func (r *Result) Write(dir, title string, force bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		w    func(io.Writer) error
	}{
		{Files.JSON, func(w io.Writer) error { _, err := w.Write(append(j, '\n')); return err }},
		{Files.CSV, r.writeCSV},
		{Files.Phases, func(w io.Writer) error { _, err := io.WriteString(w, r.PhasesText()); return err }},
	} {
		if err := fsutil.WriteFile(filepath.Join(dir, f.name), force, f.w); err != nil {
			return err
		}
	}
	for _, f := range []string{Files.PNG, Files.SVG} {
		if err := Figure(filepath.Join(dir, f), title, r.Excess, r.Points, r.Emergences); err != nil {
			return err
		}
	}
	return nil
}

// ReadResult reads a Result written by Write (its dynamics.json).
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("dynamics: %s: %w", path, err)
	}
	if len(r.Points) == 0 {
		return nil, fmt.Errorf("dynamics: %s has no snapshots", path)
	}
	for i, pt := range r.Points {
		if len(pt.KL) != len(r.References) {
			return nil, fmt.Errorf("dynamics: %s: snapshot %d has %d divergences for %d references", path, i, len(pt.KL), len(r.References))
		}
	}
	r.Phases = Phases(r.Points) // derived: not trusted from the file
	return &r, nil
}

func (r *Result) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"step", "loss", "loss_ci", "excess", "excess_ci", "excess_half", "excess_half_ci"}
	for _, n := range r.References {
		head = append(head, "kl_"+n, "kl_"+n+"_ci")
	}
	cw.Write(append(head, "closest", "tied_with", "labelled_heads"))
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
	for _, p := range r.Points {
		row := []string{strconv.Itoa(p.Step), f(p.Loss.Mean), f(p.Loss.CI), f(p.Excess.Mean), f(p.Excess.CI), f(p.ExcessHalf.Mean), f(p.ExcessHalf.CI)}
		for _, d := range p.KL {
			row = append(row, f(d.Window.Mean), f(d.Window.CI))
		}
		n := 0
		for _, h := range p.Heads {
			if h.Labelled {
				n++
			}
		}
		cw.Write(append(row, p.Closest, strings.Join(p.Tied, "; "), strconv.Itoa(n)))
	}
	cw.Flush()
	return cw.Error()
}

// PhaseKL is the divergence from the phase's closest reference at the
// phase's last snapshot (false when r has no such point or reference).
func (r *Result) PhaseKL(ph Phase) (Divergence, bool) {
	for _, pt := range r.Points {
		if pt.Step != ph.To {
			continue
		}
		for _, d := range pt.KL {
			if d.Reference == ph.Closest {
				return d, true
			}
		}
	}
	return Divergence{}, false
}

// PhasesText is the table of "closest algorithm" phases and the heads'
// emergence steps.
func (r *Result) PhasesText() string {
	var b strings.Builder
	name := r.Run
	if r.Label != "" {
		name = r.Label + " (" + r.Run + ")"
	}
	fmt.Fprintf(&b, "%s: %d snapshots, %d probe windows of N=%d from %s\n", name, len(r.Points), r.Windows, r.N, r.Data)
	fmt.Fprintf(&b, "closest algorithm (least mean KL(reference ‖ model) per position; A ≈ B: the %d probe windows cannot tell them apart — neither is shown worse than any reference by paired comparisons, family-wise level %g):\n", r.Windows, TieLevel)
	width := 0
	for _, ph := range r.Phases {
		width = max(width, utf8.RuneCountInString(ph.Name()))
	}
	for _, ph := range r.Phases {
		kl := 0.0
		if d, ok := r.PhaseKL(ph); ok {
			kl = d.Window.Mean
		}
		name := ph.Name()
		fmt.Fprintf(&b, "  steps %7d–%-7d %s%s (KL %.4f nats at step %d)\n", ph.From, ph.To, name, strings.Repeat(" ", width-utf8.RuneCountInString(name)), kl, ph.To)
	}
	if len(r.Points) > 0 {
		last := r.Points[len(r.Points)-1]
		fmt.Fprintf(&b, "at step %d: excess over %s %.4f ± %.4f nats/symbol (window), %.4f ± %.4f (second half)\n",
			last.Step, r.Excess, last.Excess.Mean, last.Excess.CI, last.ExcessHalf.Mean, last.ExcessHalf.CI)
	}
	if len(r.Emergences) == 0 {
		fmt.Fprintf(&b, "no head is labelled at the last snapshot\n")
	}
	for _, e := range r.Emergences {
		fmt.Fprintf(&b, "  head L%dH%d: %s from step %d (at the end: %s)\n", e.Layer, e.Head, e.Hypothesis, e.Step, e.Label)
	}
	return b.String()
}
