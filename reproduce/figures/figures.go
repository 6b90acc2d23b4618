package figures

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/source"
)

// Figure files written by the figures stage.
const (
	Fig3File      = "fig3_layers.png"
	Fig4File      = "fig4_attention_only.png"
	Fig10File     = "fig10_ppm.png"
	ConstructFile = "construct_vs_ctw.png"
)

// FullReference is the Fig. 4 reference transformer: the largest full model
// of Fig3Models with at most 4 layers.
func FullReference(cfg study.Config) (study.Model, bool) {
	var best study.Model
	ok := false
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
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

// Fig3ZoomFile is Fig. 3 with the transformers of two or more layers, the
// best fixed order and the references only.
const Fig3ZoomFile = "fig3_zoom.png"

// fig3ZoomNames are the methods of the zoomed Fig. 3: refs, the best
// fixed order (SelectedFixedOrder) and the Fig. 3 models of two or more
// layers (replicate 0).
func fig3ZoomNames(cfg study.Config, mg *results.Merged, refs []string) []string {
	names := append([]string{}, refs...)
	if b := results.SelectedFixedOrder(mg); b != nil {
		names = append(names, b.Name)
	}
	for _, s := range cfg.Fig3Models {
		if m, err := study.ParseModel(s); err == nil && len(m.Heads) >= 2 && mg.Res.Method(m.Label()) != nil {
			names = append(names, m.Label())
		}
	}
	return names
}

// Write is the figures stage's work: the merged results
// (results.MergedFile), the statistics across seeds (results.SeedsFile)
// and every figure of the study, in sc.Dir; it returns the files written.
func Write(cfg study.Config, sc *pipeline.StageContext) ([]string, error) {
	mg, err := results.Merge(cfg, sc.Deps)
	if err != nil {
		return nil, err
	}
	res := mg.Res
	outs := []string{results.MergedFile}
	if err := fsutil.WriteFile(filepath.Join(sc.Dir, results.MergedFile), true, res.WriteJSON); err != nil {
		return nil, err
	}
	if st := results.SeedStatsOf(cfg, res); st != nil {
		if err := results.WriteJSON(sc.Dir, results.SeedsFile, st); err != nil {
			return nil, err
		}
		outs = append(outs, results.SeedsFile)
	}
	d := drawing{cfg: cfg, mg: mg, deps: sc.Deps, dir: sc.Dir,
		sub: fmt.Sprintf("A=%d, D=%s, N=%d, %d test windows", cfg.A, source.DepthList(cfg.Depths), cfg.N, res.Windows)}
	for _, draw := range []func() ([]string, error){d.fig3, d.fig4, d.ladder, d.fig10, d.fig8, d.dynamics, d.construct} {
		files, err := draw()
		if err != nil {
			return nil, err
		}
		outs = append(outs, files...)
	}
	return outs, nil
}

// drawing is the figures stage at work: each method draws one figure (or
// none, where the study has no results for it) into dir and returns the
// files written.
type drawing struct {
	cfg  study.Config
	mg   *results.Merged
	deps map[string]*pipeline.Done
	dir  string
	sub  string // the subtitle: A, D, N and the test windows
}

// fig3 draws Fig. 3: transformers vs KN vs CTW, with every training
// replicate's curve when S > 1 (the seed spread), drawn thin in its
// model's colour; and Fig. 3 zoomed: the transformers of two or more
// layers against the best fixed order (chosen on validation windows) and
// the references, so that the excess panel's scale is set by the methods
// that matter.
func (d drawing) fig3() ([]string, error) {
	cfg, res := d.cfg, d.mg.Res
	ctwName := res.Ref().Name
	refs := []string{ctwName}
	if c := results.First(res, "CTW"); c != nil && c.Name != ctwName {
		refs = append(refs, c.Name)
	}
	names := append(append(append([]string{}, refs...), results.MethodNames(res, "KN", "Markov")...), results.WithReplicates(cfg, res, results.Exact(res, results.Labels(cfg.Fig3Models)...))...)
	if err := drawLoss(res, names, "Fig. 3: transformers vs KN vs "+results.RefShort(res)+" ("+d.sub+")", filepath.Join(d.dir, Fig3File), cfg.Smooth, results.ReplicateOf(cfg)); err != nil {
		return nil, err
	}
	outs := []string{Fig3File}
	if zoom := fig3ZoomNames(cfg, d.mg, refs); len(zoom) > len(refs) {
		if err := drawLoss(res, zoom, "Fig. 3, zoomed: transformers of ≥ 2 layers vs the best fixed order and "+results.RefShort(res)+" ("+d.sub+")", filepath.Join(d.dir, Fig3ZoomFile), cfg.Smooth, nil); err != nil {
			return nil, err
		}
		outs = append(outs, Fig3ZoomFile)
	}
	return outs, nil
}

// fig4 draws Fig. 4: attention-only and single-head vs full, and the
// training curves of its models.
func (d drawing) fig4() ([]string, error) {
	cfg, res := d.cfg, d.mg.Res
	if len(cfg.Fig4Models) == 0 {
		return nil, nil
	}
	names := []string{res.Ref().Name}
	if ref, ok := FullReference(cfg); ok {
		names = append(names, results.Exact(res, ref.Label())...)
	}
	names = append(names, results.Exact(res, results.Labels(cfg.Fig4Models)...)...)
	if err := drawLoss(res, names, "Fig. 4: attention-only vs full transformers ("+d.sub+")", filepath.Join(d.dir, Fig4File), cfg.Smooth, nil); err != nil {
		return nil, err
	}
	ms := Fig4CurveModels(cfg)
	csub := fmt.Sprintf("A=%d, D=%s, N=%d; replicate 0", cfg.A, source.DepthList(cfg.Depths), cfg.N)
	if err := drawTrainingCurves(ms, d.mg.Logs, "Fig. 4 models: training curves ("+csub+")", filepath.Join(d.dir, Fig4CurvesFile)); err != nil {
		return nil, err
	}
	return []string{Fig4File, Fig4CurvesFile}, nil
}

// ladder draws the budget ladder (excess against training tokens) and its
// models' training curves.
func (d drawing) ladder() ([]string, error) {
	cfg := d.cfg
	if !cfg.Ladder {
		return nil, nil
	}
	var outs []string
	if err := drawLadder(cfg, d.mg.Res, d.dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(d.dir, LadderFile)); err == nil {
		outs = append(outs, LadderFile)
	}
	csub := fmt.Sprintf("A=%d, D=%s, N=%d; replicate 0", cfg.A, source.DepthList(cfg.Depths), cfg.N)
	if err := drawTrainingCurves(cfg.Models(), d.mg.Logs, "Budget ladder: training curves ("+csub+")", filepath.Join(d.dir, LadderCurvesFile)); err != nil {
		return nil, err
	}
	return append(outs, LadderCurvesFile), nil
}

// fig10 draws Fig. 10: PPM (method A) in its three variants vs the
// transformers.
func (d drawing) fig10() ([]string, error) {
	cfg, res := d.cfg, d.mg.Res
	names := append(append([]string{res.Ref().Name}, results.MethodNames(res, "PPM")...), results.Exact(res, results.Labels(cfg.Fig3Models)...)...)
	if err := drawLoss(res, names, "Fig. 10: PPM (method A; as is, normalised, with exclusion) vs transformers ("+d.sub+")", filepath.Join(d.dir, Fig10File), cfg.Smooth, nil); err != nil {
		return nil, err
	}
	return []string{Fig10File}, nil
}

// fig8 draws Fig. 8, per encoding: normal vs synthetic two-layer
// transformers.
func (d drawing) fig8() ([]string, error) {
	cfg, res := d.cfg, d.mg.Res
	if _, ok := d.deps[results.StageSynth]; !ok {
		return nil, nil
	}
	var outs []string
	for _, enc := range cfg.Encodings() {
		names := results.WithReplicates(cfg, res, fig8Names(cfg, res, enc))
		title := "Fig. 8: normal (TF 0-2) vs synthetic (TF 2-0) two-layer transformers (" + d.sub + ")"
		if cfg.Normalized().SynthEncodings != nil {
			title = "Fig. 8, " + enc + " encoding: TF 0-2 vs TF 2-0 (" + d.sub + ")"
		}
		if err := drawLoss(res, names, title, filepath.Join(d.dir, Fig8FileFor(enc)), cfg.Smooth, results.ReplicateOf(cfg)); err != nil {
			return nil, err
		}
		outs = append(outs, Fig8FileFor(enc))
	}
	return outs, nil
}

// dynamics draws the training dynamics, one panel per measured model.
func (d drawing) dynamics() ([]string, error) {
	ok, err := drawDynamics(d.cfg, d.deps, filepath.Join(d.dir, DynamicsFile))
	if err != nil || !ok {
		return nil, err
	}
	return []string{DynamicsFile}, nil
}

// construct draws the construction beside CTW: every method, so that the
// excess panel shows the (zero) difference.
func (d drawing) construct() ([]string, error) {
	c := d.mg.Construct
	if c == nil {
		return nil, nil
	}
	title := fmt.Sprintf("(D+2)=%d-layer constructed transformer vs CTW (%d windows)", d.mg.CInfo.Layers, c.Windows)
	var names []string
	for _, m := range c.Methods {
		names = append(names, m.Name)
	}
	if err := drawLoss(c, names, title, filepath.Join(d.dir, ConstructFile), d.cfg.Smooth, nil); err != nil {
		return nil, err
	}
	return []string{ConstructFile}, nil
}
