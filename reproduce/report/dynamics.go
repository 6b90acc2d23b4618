package report

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// dynamicsSection is the report's "Training dynamics" section: the grid
// of panels (DynamicsFile in figDir), a description, and two tables — every model's sequence of closest
// algorithms with their step ranges, and the steps from which its heads
// keep their final labels (ok false when the study measures none). kn is
// the name of the summary table's KN ("" without one), whose discount is
// tuned otherwise than the references' KN (knNote).
func dynamicsSection(cfg study.Config, deps map[string]*pipeline.Done, figDir, kn string) (files []string, f Finding, tables []table, ok bool, err error) {
	labels, res, err := results.ReadDynamics(cfg, deps)
	if err != nil || len(res) == 0 {
		return nil, Finding{}, nil, false, err
	}
	// The figures stage depends on the same dynamics stages, so it drew
	// the grid from these results.
	files = []string{filepath.Join(figDir, figures.DynamicsFile)}
	notBayes := ""
	if why := cfg.NotOptimal(); len(why) > 0 {
		notBayes = fmt.Sprintf(" Here CTW is not exactly the Bayes predictor (%s), so the two lines need not agree (the excess is KL(Bayes ‖ model) − KL(Bayes ‖ CTW) in expectation, not KL(CTW ‖ model)), and a model may beat CTW, where the grey line breaks off.", strings.Join(why, "; "))
	}
	ph := table{Caption: fmt.Sprintf("Closest algorithm by training step: the reference of least mean KL(reference ‖ model) per position on the %d probe windows; "+
		"“A ≈ B”: the probe windows cannot tell A and B apart — neither is shown worse than any reference by paired (window by window) comparisons "+
		"at a family-wise level of %g (Bonferroni, two-sided intervals: the truly closest reference is wrongly excluded with probability at most half that) — which is not evidence that they are equal. A phase's names are those of its last snapshot, the closest first. "+
		"In the figure, the grey line is the model's excess loss over CTW (drawn where positive: log axis); where CTW is the Bayes predictor its expectation is KL(CTW ‖ model), the black line.%s",
		res[0].Windows, dynamics.TieLevel, notBayes) + knNote(cfg, res, kn),
		Head: []string{"model", "steps", "closest algorithm", "KL from the closest at the phase's last step (nats, 95% CI)"}}
	hd := table{Caption: "Heads: the step from which each head keeps the label it has at the last snapshot (relative position d or suffix match k, null-tested).",
		Head: []string{"model", "head", "label", "from step", "at the last snapshot"}}
	var summary []string
	for i, r := range res {
		var seq []string
		for _, p := range r.Phases {
			ph.Rows = append(ph.Rows, []string{labels[i], fmt.Sprintf("%d–%d", p.From, p.To), p.Name(), klAt(r, p)})
			seq = append(seq, p.Name())
		}
		last := r.Points[len(r.Points)-1]
		summary = append(summary, fmt.Sprintf("%s: %s (excess over %s at step %d: %.4f ± %.4f nats/symbol, second half %.4f ± %.4f)",
			labels[i], strings.Join(seq, " → "), r.Excess, last.Step, last.Excess.Mean, last.Excess.CI, last.ExcessHalf.Mean, last.ExcessHalf.CI))
		for _, e := range r.Emergences {
			hd.Rows = append(hd.Rows, []string{labels[i], fmt.Sprintf("L%dH%d", e.Layer, e.Head), e.Hypothesis, fmt.Sprint(e.Step), e.Label})
		}
	}
	if len(hd.Rows) == 0 {
		hd.Caption += " No head is labelled at any model's last snapshot."
	}
	// a description, not a verdict: the paper makes no claim here (no
	// Claim: the report styles it as a note, neither agreeing nor not)
	f = Finding{Found: "phases of the closest algorithm — " + strings.Join(summary, "; ") + "."}
	return files, f, []table{ph, hd}, true, nil
}

// knNote says which KN the dynamics stages compare the models with: its
// discount δ is tuned on all the training set's windows (dynamicsStage),
// the summary table's KN's (named kn, "" when there is none) on the first
// KNTuneWindows of them (baselinesStage), so that the two δ may differ.
// It is "" when no reference is a KN.
func knNote(cfg study.Config, res []*dynamics.Result, kn string) string {
	var names []string
	for _, r := range res {
		for _, n := range r.References {
			if strings.HasPrefix(n, "KN") && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	all := cfg.TrainTrees * (cfg.TrainNK / cfg.N)
	out := fmt.Sprintf(" KN among the references is %s, its discount δ tuned on all %d windows of the training set", strings.Join(names, " and "), all)
	switch tuned := min(all, results.KNTuneWindows); {
	case kn == "":
	case tuned == all:
		out += fmt.Sprintf(", as the summary table's %s", kn)
	case len(names) == 1 && names[0] == kn:
		out += fmt.Sprintf(", not on the first %d of them as the summary table's %s (the same δ nonetheless)", tuned, kn)
	default:
		out += fmt.Sprintf(", not on the first %d of them as the summary table's %s, hence the different δ", tuned, kn)
	}
	return out + "."
}

// klAt is the divergence of the phase's closest reference at its last
// step, with its interval.
func klAt(r *dynamics.Result, p dynamics.Phase) string {
	if d, ok := r.PhaseKL(p); ok {
		return fmt.Sprintf("%.4f ± %.4f", d.Window.Mean, d.Window.CI)
	}
	return "—"
}
