package reproduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/source"
)

// Figure files written by the figures stage.
const (
	Fig3File      = "fig3_layers.png"
	Fig4File      = "fig4_attention_only.png"
	Fig10File     = "fig10_ppm.png"
	ConstructFile = "construct_vs_ctw.png"
)

// methodNames returns the result's names of the methods whose names start
// with one of the prefixes, in the order of the prefixes.
func methodNames(res *eval.Result, prefixes ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range prefixes {
		for _, m := range res.Methods {
			if strings.HasPrefix(m.Name, p) && !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// labels of the models of a list.
func labels(specs []string) []string {
	var out []string
	for _, s := range specs {
		if m, err := ParseModel(s); err == nil {
			out = append(out, m.Label())
		}
	}
	return out
}

// exact returns the names in want that res has.
func exact(res *eval.Result, want ...string) []string {
	var out []string
	for _, w := range want {
		if res.Method(w) != nil {
			out = append(out, w)
		}
	}
	return out
}

// fullReference is the Fig. 4 reference transformer: the largest full model
// of Fig3Models with at most 4 layers.
func fullReference(cfg Config) (Model, bool) {
	var best Model
	ok := false
	for _, s := range cfg.Fig3Models {
		m, err := ParseModel(s)
		if err != nil || !m.FF || !m.LN || m.Sin || m.Budget > 1 || len(m.Heads) > 4 {
			continue
		}
		if !ok || len(m.Heads) > len(best.Heads) {
			best, ok = m, true
		}
	}
	return best, ok
}

func drawLoss(res *eval.Result, names []string, title, path string, smooth int, replicates map[string]string) error {
	if smooth == 0 {
		smooth = max(1, res.N/100)
	}
	fig, err := plot.LossVsPosition(res, plot.Options{Title: title, Methods: names, Excess: len(names) > 1, Smooth: smooth, Replicates: replicates})
	if err != nil {
		return err
	}
	return fig.Save(path, 9*plot.Inch, 6*plot.Inch)
}

// figuresStage draws the figures from the results of every evaluation
// stage among stages (and writes the merged results and the across-seed
// statistics).
func figuresStage(cfg Config, stages []pipeline.Stage) pipeline.Stage {
	inputs := map[string]any{"fig3": cfg.Fig3Models, "fig4": cfg.Fig4Models, "synth": cfg.SynthVariants, "smooth": cfg.Smooth, "N": cfg.N}
	if cfg.NumSeeds() > 1 {
		inputs["seeds"] = cfg.NumSeeds()
	}
	if cfg.normalized().SynthEncodings != nil {
		inputs["encodings"] = cfg.Encodings()
	}
	var evals []string
	for _, s := range stages {
		if s.Name == StageBaselines || s.Name == StageConstruct || s.Name == StageSynth || strings.HasPrefix(s.Name, "eval-tf-") {
			evals = append(evals, s.Name)
		}
	}
	if len(cfg.Fig4Models) > 0 { // the training curves of Fig. 4's models
		for _, m := range fig4CurveModels(cfg) {
			evals = append(evals, trainStageName(m, 0))
		}
	}
	evals = append(evals, dynamicsStageNames(cfg)...) // the dynamics panels
	if cfg.Ladder {                                   // the ladder's training curves (replicate 0)
		for _, m := range cfg.Models() {
			if n := trainStageName(m, 0); !slices.Contains(evals, n) {
				evals = append(evals, n)
			}
		}
	}
	return pipeline.Stage{
		Name:   StageFigures,
		Kind:   pipeline.KindFigures,
		Inputs: inputs,
		Deps:   evals,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			return writeFigures(cfg, sc)
		},
	}
}

// Fig3ZoomFile is Fig. 3 with the transformers of two or more layers, the
// best fixed order and the references only.
const Fig3ZoomFile = "fig3_zoom.png"

// fig3ZoomNames are the methods of the zoomed Fig. 3: refs, the best
// fixed order (selectedFixedOrder) and the Fig. 3 models of two or more
// layers (replicate 0).
func fig3ZoomNames(cfg Config, mg *merged, refs []string) []string {
	names := append([]string{}, refs...)
	if b := selectedFixedOrder(mg); b != nil {
		names = append(names, b.Name)
	}
	for _, s := range cfg.Fig3Models {
		if m, err := ParseModel(s); err == nil && len(m.Heads) >= 2 && mg.Res.Method(m.Label()) != nil {
			names = append(names, m.Label())
		}
	}
	return names
}

// writeFigures is the figures stage's work.
func writeFigures(cfg Config, sc *pipeline.StageContext) ([]string, error) {
	mg, err := mergeResults(cfg, sc.Deps)
	if err != nil {
		return nil, err
	}
	res := mg.Res
	ctwName := res.Ref().Name
	sub := fmt.Sprintf("A=%d, D=%s, N=%d, %d test windows", cfg.A, source.DepthList(cfg.Depths), cfg.N, res.Windows)
	outs := []string{MergedFile}
	if err := fsutil.WriteFile(filepath.Join(sc.Dir, MergedFile), true, res.WriteJSON); err != nil {
		return nil, err
	}
	if st := seedStats(cfg, res); st != nil {
		if err := writeJSON(sc.Dir, SeedsFile, st); err != nil {
			return nil, err
		}
		outs = append(outs, SeedsFile)
	}
	// Fig. 3: transformers vs KN vs CTW, with every training replicate's
	// curve when S > 1 (the seed spread), drawn thin in its model's colour.
	refs := []string{ctwName}
	if c := first(res, "CTW"); c != nil && c.Name != ctwName {
		refs = append(refs, c.Name)
	}
	names := append(append(append([]string{}, refs...), methodNames(res, "KN", "Markov")...), withReplicates(cfg, res, exact(res, labels(cfg.Fig3Models)...))...)
	if err := drawLoss(res, names, "Fig. 3: transformers vs KN vs "+refShort(res)+" ("+sub+")", filepath.Join(sc.Dir, Fig3File), cfg.Smooth, replicateOf(cfg)); err != nil {
		return nil, err
	}
	outs = append(outs, Fig3File)
	// Fig. 3, zoomed: the transformers of two or more layers against the
	// best fixed order (chosen on validation windows) and the references,
	// so that the excess panel's scale is set by the methods that matter.
	if zoom := fig3ZoomNames(cfg, mg, refs); len(zoom) > len(refs) {
		if err := drawLoss(res, zoom, "Fig. 3, zoomed: transformers of ≥ 2 layers vs the best fixed order and "+refShort(res)+" ("+sub+")", filepath.Join(sc.Dir, Fig3ZoomFile), cfg.Smooth, nil); err != nil {
			return nil, err
		}
		outs = append(outs, Fig3ZoomFile)
	}
	// Fig. 4: attention-only and single-head vs full.
	if len(cfg.Fig4Models) > 0 {
		names = []string{ctwName}
		if ref, ok := fullReference(cfg); ok {
			names = append(names, exact(res, ref.Label())...)
		}
		names = append(names, exact(res, labels(cfg.Fig4Models)...)...)
		if err := drawLoss(res, names, "Fig. 4: attention-only vs full transformers ("+sub+")", filepath.Join(sc.Dir, Fig4File), cfg.Smooth, nil); err != nil {
			return nil, err
		}
		outs = append(outs, Fig4File)
		ms := fig4CurveModels(cfg)
		csub := fmt.Sprintf("A=%d, D=%s, N=%d; replicate 0", cfg.A, source.DepthList(cfg.Depths), cfg.N)
		if err := drawTrainingCurves(ms, mg.Logs, "Fig. 4 models: training curves ("+csub+")", filepath.Join(sc.Dir, Fig4CurvesFile)); err != nil {
			return nil, err
		}
		outs = append(outs, Fig4CurvesFile)
	}
	// The budget ladder: excess against training tokens.
	if cfg.Ladder {
		if err := drawLadder(cfg, res, sc.Dir); err != nil {
			return nil, err
		}
		if _, err := os.Stat(filepath.Join(sc.Dir, LadderFile)); err == nil {
			outs = append(outs, LadderFile)
		}
		csub := fmt.Sprintf("A=%d, D=%s, N=%d; replicate 0", cfg.A, source.DepthList(cfg.Depths), cfg.N)
		if err := drawTrainingCurves(cfg.Models(), mg.Logs, "Budget ladder: training curves ("+csub+")", filepath.Join(sc.Dir, LadderCurvesFile)); err != nil {
			return nil, err
		}
		outs = append(outs, LadderCurvesFile)
	}
	// Fig. 10: PPM (method A) in its three variants vs the transformers.
	names = append(append([]string{ctwName}, methodNames(res, "PPM")...), exact(res, labels(cfg.Fig3Models)...)...)
	if err := drawLoss(res, names, "Fig. 10: PPM (method A; as is, normalised, with exclusion) vs transformers ("+sub+")", filepath.Join(sc.Dir, Fig10File), cfg.Smooth, nil); err != nil {
		return nil, err
	}
	outs = append(outs, Fig10File)
	// Fig. 8: normal vs synthetic two-layer transformers.
	if _, ok := sc.Deps[StageSynth]; ok {
		for _, enc := range cfg.Encodings() {
			names := withReplicates(cfg, res, fig8Names(cfg, res, enc))
			title := "Fig. 8: normal (TF 0-2) vs synthetic (TF 2-0) two-layer transformers (" + sub + ")"
			if cfg.normalized().SynthEncodings != nil {
				title = "Fig. 8, " + enc + " encoding: TF 0-2 vs TF 2-0 (" + sub + ")"
			}
			if err := drawLoss(res, names, title, filepath.Join(sc.Dir, fig8File(enc)), cfg.Smooth, replicateOf(cfg)); err != nil {
				return nil, err
			}
			outs = append(outs, fig8File(enc))
		}
	}
	// The training dynamics, one panel per measured model.
	if ok, err := drawDynamics(cfg, sc.Deps, filepath.Join(sc.Dir, DynamicsFile)); err != nil {
		return nil, err
	} else if ok {
		outs = append(outs, DynamicsFile)
	}
	// The construction beside CTW.
	if mg.Construct != nil {
		title := fmt.Sprintf("(D+2)=%d-layer constructed transformer vs CTW (%d windows)", mg.CInfo.Layers, mg.Construct.Windows)
		var names []string // every method, so that the excess panel shows the (zero) difference
		for _, m := range mg.Construct.Methods {
			names = append(names, m.Name)
		}
		if err := drawLoss(mg.Construct, names, title, filepath.Join(sc.Dir, ConstructFile), cfg.Smooth, nil); err != nil {
			return nil, err
		}
		outs = append(outs, ConstructFile)
	}
	return outs, nil
}
