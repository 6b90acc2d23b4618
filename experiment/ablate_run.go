package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// AblateFiles are the files RunAblate writes into its output directory.
var AblateFiles = []string{"ablate.json", "ablate.txt", "ablate.png"}

// AblateRunOptions are `vomc ablate`'s: a model directory (or file), a
// data set, the first Windows of its windows (0: all), the output
// directory, and the study's options (AblateOptions without the model,
// the windows and the defaults).
type AblateRunOptions struct {
	Model, Data, Out string
	Windows          int
	Force            bool
	Backend          backend.Backend
	AblateOptions
}

// RunAblate checks the outputs, loads the model (on Backend) and the data
// set, runs Ablate on its first Windows windows (0: all but the last
// LabelWindows) with the heads labelled on the LabelWindows windows that
// follow them (disjoint from the evaluated ones, so that the labels are
// not selected on the windows that measure their costs), and writes the report
// into Out as JSON (ablate.json), text (ablate.txt, WriteText) and a
// figure (ablate.png, Figure).
func RunAblate(ctx context.Context, o AblateRunOptions) (*AblateReport, error) {
	if o.Model == "" || o.Data == "" || o.Out == "" {
		return nil, opterr.New("experiment", "ablation needs %s, %s and %s", "Model Data Out")
	}
	if o.Windows < 0 || o.Refs < 0 || o.Groups < 0 || o.LabelWindows < 0 || o.Margin < 0 || o.Workers < 0 {
		return nil, opterr.New("experiment", "ablation: %s, %s, %s, %s, %s and %s must be ≥ 0", "Windows Refs Groups LabelWindows Margin Workers")
	}
	if err := fsutil.CheckOutputDir(events.WarnWriter(o.Events), o.Out, o.Force, AblateFiles...); err != nil {
		return nil, err
	}
	file := o.Model
	if st, err := os.Stat(file); err == nil && st.IsDir() {
		file = filepath.Join(file, "model.safetensors")
	}
	m, err := transformer.LoadSafetensorsOn(o.Backend, file)
	if err != nil {
		return nil, err
	}
	defer m.Free()
	ds, err := dataset.ReadWindows(o.Data)
	if err != nil {
		return nil, err
	}
	d := methods.DefaultsFor(ds.Config().Prior)
	if d.A != m.Config.Alphabet {
		return nil, fmt.Errorf("experiment: the model has alphabet size %d, the data %d", m.Config.Alphabet, d.A)
	}
	a := o.AblateOptions
	a.Model, a.Defaults = m, d
	a = a.withDefaults() // after Defaults: MaxK's default is the prior's
	if a.Windows, a.Label, err = splitLabel(Windows(ds), o.Windows, a.LabelWindows); err != nil {
		return nil, err
	}
	r, err := Ablate(ctx, a)
	if err != nil {
		return nil, err
	}
	r.Path = o.Model
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	var txt strings.Builder
	r.WriteText(&txt)
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(o.Out, AblateFiles[0]), true, append(js, '\n')); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(o.Out, AblateFiles[1]), true, []byte(txt.String())); err != nil {
		return nil, err
	}
	return r, r.Figure(filepath.Join(o.Out, AblateFiles[2]), true)
}

// splitLabel splits the data's windows ws into the first w evaluated ones
// (0: all but the last l) and the l that follow, which label the heads.
func splitLabel(ws [][]byte, w, l int) (eval, label [][]byte, err error) {
	if w == 0 {
		w = len(ws) - l
	}
	if w < 1 || w+l > len(ws) {
		return nil, nil, fmt.Errorf("experiment: ablation: the data has %d windows, fewer than %d evaluated and the %d after them that label the heads (--windows, --label-windows)", len(ws), max(w, 1), l)
	}
	return ws[:w], ws[w : w+l], nil
}

// WriteText writes the report as tables: the heads, then the groups.
func (r *AblateReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s%s: %d windows of %d, mode %s; intact loss %.4f ± %.4f nats/symbol\n", r.Model, paren(r.Path), r.Windows, r.N, r.Mode, r.Intact.Mean, r.Intact.HalfWidth())
	if r.LabelDisjoint {
		fmt.Fprintf(w, "heads labelled by their attention on %d other windows of the data (disjoint from the evaluated ones)\n", r.LabelWindows)
	} else {
		fmt.Fprintf(w, "heads labelled by their attention on the first %d of the evaluated windows\n", r.LabelWindows)
	}
	fmt.Fprintf(w, "cost = ablated − intact loss, paired 95%% CI across windows; p one-sided (cost > 0), Holm across the %d heads; necessary: p_holm < %g\n", len(r.Heads), r.Alpha)
	fmt.Fprintf(w, "pattern: the head's attention replaced by its label's exact pattern; within: its cost's CI below +%g\n\n", r.Margin)
	fmt.Fprintf(w, "%-5s %-44s %-26s %-9s %-9s %-10s %s\n", "head", "label", "cost [95% CI]", "p_holm", "necessary", "pattern", "pattern cost [95% CI], within")
	for _, h := range r.Heads {
		lab := h.Label
		if i := strings.Index(lab, ", mass"); i > 0 {
			lab = lab[:i]
		}
		if len(lab) > 44 {
			lab = lab[:43] + "…"
		}
		pc := "–"
		if h.PatternCost != nil {
			pc = fmt.Sprintf("%+.4f [%+.4f, %+.4f], %v", h.PatternCost.Mean, h.PatternCost.Lo, h.PatternCost.Hi, h.PatternWithin)
		}
		fmt.Fprintf(w, "%-5s %-44s %-26s %-9s %-9v %-10s %s\n", h.Head, lab, ci(h.Cost), pvalue(h.PHolm), h.Necessary, dash(h.Pattern), pc)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintf(w, "\n%-30s %-26s %-8s %-22s %s\n", "group (ablated together)", "cost [95% CI]", "p", "random groups' costs", "group − random mean [95% CI]")
	}
	for _, g := range r.Groups {
		lo, hi := minMax(g.RandomCost)
		fmt.Fprintf(w, "%-30s %-26s %-8.3f %-22s %s\n", g.Name+" ("+strings.Join(g.Heads, "+")+")", ci(g.Cost), g.P,
			fmt.Sprintf("%d: %.4f..%.4f", len(g.RandomCost), lo, hi), ci(g.VsRandom))
	}
}

// ci is "mean [lo, hi]" with signs.
func ci(iv eval.Interval) string { return fmt.Sprintf("%+.4f [%+.4f, %+.4f]", iv.Mean, iv.Lo, iv.Hi) }

// pvalue prints p with two digits.
func pvalue(p float64) string { return fmt.Sprintf("%.2g", p) }

// paren is " (s)", or "" for an empty s.
func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func dash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
