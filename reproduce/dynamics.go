package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/pipeline"
)

// The training-dynamics stages (Config.Dynamics): one per trained model,
// measuring its snapshots with package dynamics.

// dynamicsStageName names replicate r's dynamics stage of model m.
func dynamicsStageName(m Model, r int) string { return "dynamics-tf-" + m.Slug() + repSuffix(r) }

// dynamicsStage measures the snapshots of replicate r of model m on the
// first DynamicsWindows test windows (KN tuned on the training windows).
func dynamicsStage(cfg Config, m Model, r int, opts Options) pipeline.Stage {
	train := trainStageName(m, r)
	return pipeline.Stage{
		Name:   dynamicsStageName(m, r),
		Kind:   pipeline.KindEval,
		Inputs: map[string]any{"label": RepLabel(m, r), "windows": cfg.DynamicsWindows, "head_windows": cfg.headWindows(), "defaults": defaults(cfg)},
		Deps:   []string{StageTrainData, StageTestData, train},
		// resumable: the snapshots measured so far are kept in the stage's
		// directory (dynamics.Options.Checkpoint), so an interrupted stage
		// goes on from the last one
		Resumable: true,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test := filepath.Join(sc.Deps[StageTestData].Dir, dataDir)
			nw := cfg.DynamicsWindows
			if nw == 0 {
				nw = min(200, cfg.TestTrees)
			}
			ck := filepath.Join(sc.Dir, dynamics.CheckpointFile)
			build, err := pipeline.CodeKey() // this binary's, even under a given code key
			if err != nil {
				return nil, err
			}
			res, err := dynamics.Run(ctx, dynamics.RunConfig{Run: sc.Deps[train].Dir, Data: test, Windows: nw, HeadWindows: cfg.headWindows(), Backend: opts.backend(),
				Train: filepath.Join(sc.Deps[StageTrainData].Dir, dataDir), Null: attnmap.NullOptions{Seed: cfg.Seed},
				Workers: cfg.Workers, Checkpoint: ck, Identity: build})
			if err != nil {
				return nil, err
			}
			res.Run = RepLabel(m, r) // a label, not the stage's path
			if err := res.Write(sc.Dir, "Training dynamics: "+RepLabel(m, r), true); err != nil {
				return nil, err
			}
			if err := dynamics.RemoveCheckpoint(ck); err != nil {
				return nil, err
			}
			f := dynamics.Files
			return []string{f.JSON, f.CSV, f.Phases, f.PNG, f.SVG}, nil
		},
	}
}

// headWindows is DynamicsHeadWindows or its default, 50.
func (c Config) headWindows() int {
	if c.DynamicsHeadWindows > 0 {
		return c.DynamicsHeadWindows
	}
	return 50
}

// DynamicsFile is the figures stage's grid of training-dynamics panels.
const DynamicsFile = "fig_dynamics.png"

// dynamicsRun is a model replicate whose training dynamics are measured.
type dynamicsRun struct {
	m Model
	r int
}

// dynamicsRuns are the measured (model, replicate) pairs in the study's
// order: replicate by replicate, model by model.
func dynamicsRuns(cfg Config) []dynamicsRun {
	var out []dynamicsRun
	for r := range cfg.NumSeeds() {
		if cfg.dynamicsOf(r) == "" {
			continue
		}
		for _, m := range cfg.Models() {
			if r >= cfg.SeedsOf(m) {
				continue
			}
			out = append(out, dynamicsRun{m, r})
		}
	}
	return out
}

// dynamicsStageNames are the names of the study's dynamics stages.
func dynamicsStageNames(cfg Config) []string {
	var out []string
	for _, d := range dynamicsRuns(cfg) {
		out = append(out, dynamicsStageName(d.m, d.r))
	}
	return out
}

// readDynamics reads the results of the dynamics stages among deps, in
// the study's order, with the label of each.
func readDynamics(cfg Config, deps map[string]*pipeline.Done) ([]string, []*dynamics.Result, error) {
	var labels []string
	var out []*dynamics.Result
	for _, d := range dynamicsRuns(cfg) {
		done, ok := deps[dynamicsStageName(d.m, d.r)]
		if !ok {
			continue
		}
		res, err := dynamics.ReadResult(filepath.Join(done.Dir, dynamics.Files.JSON))
		if err != nil {
			return nil, nil, err
		}
		labels, out = append(labels, RepLabel(d.m, d.r)), append(out, res)
	}
	return labels, out, nil
}

// drawDynamics draws DynamicsFile from the dynamics stages among deps;
// false when there are none.
func drawDynamics(cfg Config, deps map[string]*pipeline.Done, path string) (bool, error) {
	labels, res, err := readDynamics(cfg, deps)
	if err != nil || len(res) == 0 {
		return false, err
	}
	panels := make([]dynamics.Panel, len(res))
	for i, r := range res {
		panels[i] = dynamics.Panel{Title: labels[i], Excess: r.Excess, Points: r.Points, Emergences: r.Emergences}
	}
	return true, dynamics.Panels(path, panels, 2)
}

// dynamicsSection is the report's "Training dynamics" section: the grid
// of panels (DynamicsFile in figDir), a description, and two tables — every model's sequence of closest
// algorithms with their step ranges, and the steps from which its heads
// keep their final labels (ok false when the study measures none). kn is
// the name of the summary table's KN ("" without one), whose discount is
// tuned otherwise than the references' KN (knNote).
func dynamicsSection(cfg Config, deps map[string]*pipeline.Done, figDir, kn string) (files []string, f Finding, tables []table, ok bool, err error) {
	labels, res, err := readDynamics(cfg, deps)
	if err != nil || len(res) == 0 {
		return nil, Finding{}, nil, false, err
	}
	// The figures stage depends on the same dynamics stages, so it drew
	// the grid from these results.
	files = []string{filepath.Join(figDir, DynamicsFile)}
	notBayes := ""
	if why := cfg.notOptimal(); len(why) > 0 {
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
func knNote(cfg Config, res []*dynamics.Result, kn string) string {
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
	switch tuned := min(all, KNTuneWindows); {
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
