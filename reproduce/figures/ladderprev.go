package figures

import (
	"fmt"
	"path/filepath"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// LadderPrevFile is the ladder's previous-symbol heads by budget
// (DrawLadderPrev).
const LadderPrevFile = "ladder_prev.png"

// BestPrev is, at each query position q of a ladder profile, the weight on
// key q−1 of the layer-1 head that puts the most there (LadderProfile.Best:
// the reading of criterion (B′)); nil without heads.
func BestPrev(p results.LadderProfile) []float64 {
	if len(p.Prev) == 0 {
		return nil
	}
	best := make([]float64, len(p.Prev[0]))
	for q := range best {
		best[q], _ = p.Best(q)
	}
	return best
}

// DrawLadderPrev draws into dir/LadderPrevFile one panel per architecture
// of the ladder (the models of cfg.Fig3Models without their budgets, in
// that order): BestPrev of each model's profile against the query
// position, one line per budget (its colour) and seed (seed 0 solid,
// seed 1 dashed), from profiles keyed by results.RepLabel. The window's
// last position, which has no training target, is drawn too. It reports
// whether it drew anything (not when no model has a profile).
func DrawLadderPrev(dir string, cfg study.Config, profiles map[string]results.LadderProfile) (bool, error) {
	var plots []*gplot.Plot
	for _, f := range ladderFamilies(cfg) {
		p := plot.NewStepPlot(f.Label+": best layer-1 head's weight on the previous key", "query position", "attention weight on key q−1")
		p.Y.Min, p.Y.Max = 0, 1.05
		p.Legend.ThumbnailWidth = vg.Points(28)
		lines := 0
		for i, m := range f.Models {
			for r := range cfg.SeedsOf(m) {
				best := BestPrev(profiles[results.RepLabel(m, r)])
				if len(best) == 0 {
					continue
				}
				xy := make(plotter.XYs, len(best))
				for q, w := range best {
					xy[q] = plotter.XY{X: float64(q), Y: w}
				}
				var dashes []vg.Length // seed 0 solid, later seeds dashed
				if r > 0 {
					dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				}
				if err := addLine(p, fmt.Sprintf("×%d, seed %d", max(1, m.Budget), r), xy, i, vg.Points(1.1), dashes); err != nil {
					return false, err
				}
				lines++
			}
		}
		if lines > 0 {
			plots = append(plots, p)
		}
	}
	if len(plots) == 0 {
		return false, nil
	}
	return true, saveStacked(filepath.Join(dir, LadderPrevFile), plots, 9*vg.Inch, vg.Length(len(plots))*2.6*vg.Inch)
}
