package figures

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LadderFile is the ladder's figure: each model family's second-half excess
// against its training tokens (log x), over the reference and over CTW.
const LadderFile = "ladder.png"

// LadderCurvesFile is the training curves of the ladder's models
// (replicate 0).
const LadderCurvesFile = "ladder_training.png"

// ladderFamily is one architecture of the ladder with its budgets.
type ladderFamily struct {
	Label  string
	Models []study.Model // by budget
}

// ladderFamilies groups the Fig. 3 models by architecture (the model
// without its -xK suffix).
func ladderFamilies(cfg study.Config) []ladderFamily {
	var out []ladderFamily
	idx := map[string]int{}
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil {
			continue
		}
		base := m
		base.Budget = 0
		k, ok := idx[base.Label()]
		if !ok {
			k = len(out)
			idx[base.Label()] = k
			out = append(out, ladderFamily{Label: base.Label()})
		}
		out[k].Models = append(out[k].Models, m)
	}
	return out
}

// ladderPoints are a family's (tokens, excess) points: per budget the mean
// over seeds (the line) and every seed (the marks), from ex.
func ladderPoints(cfg study.Config, f ladderFamily, ex func(*eval.MethodResult) float64, res *eval.Result) (line, seeds plotter.XYs) {
	for _, m := range f.Models {
		tokens := float64(max(1, m.Budget)) * cfg.TrainTokens()
		s, n := 0.0, 0
		for r := range cfg.SeedsOf(m) {
			if x := res.Method(results.RepLabel(m, r)); x != nil {
				v := ex(x)
				seeds = append(seeds, plotter.XY{X: tokens, Y: v})
				s, n = s+v, n+1
			}
		}
		if n > 0 {
			line = append(line, plotter.XY{X: tokens, Y: s / float64(n)})
		}
	}
	return line, seeds
}

// drawLadder draws LadderFile: two panels (over the reference, over CTW
// when the reference is not CTW), one line per family through its seed
// means, the seeds as marks, Markov(4)'s level as a horizontal line.
func drawLadder(cfg study.Config, res *eval.Result, dir string) error {
	ctwRes := results.First(res, "CTW")
	panels := []struct {
		title string
		ex    func(*eval.MethodResult) float64
	}{{"second-half excess over " + results.RefShort(res) + " (nats/symbol)", func(m *eval.MethodResult) float64 { return m.ExcessSecondHalf.Mean }}}
	if ctwRes != nil && ctwRes != res.Ref() {
		panels = append(panels, struct {
			title string
			ex    func(*eval.MethodResult) float64
		}{"second-half excess over CTW (nats/symbol)", func(m *eval.MethodResult) float64 {
			return m.ExcessSecondHalf.Mean - ctwRes.ExcessSecondHalf.Mean
		}})
	}
	fams := ladderFamilies(cfg)
	mk := results.First(res, "Markov(k=4")
	var plots []*gplot.Plot
	for _, pn := range panels {
		p := plot.NewStepPlot(fmt.Sprintf("Budget ladder: %s", pn.title), "training tokens (log scale)", pn.title)
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = ladderTicks(cfg, fams)
		p.Legend.ThumbnailWidth = vg.Points(28)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, f := range fams {
			line, seeds := ladderPoints(cfg, f, pn.ex, res)
			if len(line) == 0 {
				continue
			}
			sty := plot.MethodStyle(i, false)
			l, err := plotter.NewLine(line)
			if err != nil {
				return err
			}
			l.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6), Dashes: sty.Dashes}
			sc, err := plotter.NewScatter(seeds)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: sty.Color, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
			p.Add(l, sc)
			p.Legend.Add(f.Label, l, sc)
			for _, xy := range append(line, seeds...) {
				lo, hi = min(lo, xy.X), max(hi, xy.X)
			}
		}
		if hi > 0 {
			p.X.Min, p.X.Max = lo/1.3, hi*1.3
		}
		if mk != nil && hi > lo {
			y := pn.ex(mk)
			ml, err := plotter.NewLine(plotter.XYs{{X: lo / 1.2, Y: y}, {X: hi * 1.2, Y: y}})
			if err != nil {
				return err
			}
			sty := plot.MethodStyle(len(fams), false)
			ml.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
			p.Add(ml)
			p.Legend.Add(mk.Name, ml)
		}
		plots = append(plots, p)
	}
	if len(plots) == 0 {
		return nil
	}
	path := filepath.Join(dir, LadderFile)
	if len(plots) == 1 {
		return plot.SavePlotLegendRight(plots[0], 9*vg.Inch, 5*vg.Inch, strings.TrimPrefix(filepath.Ext(path), "."), path, true)
	}
	return plot.SaveDrawing(path, true, "png", 9*vg.Inch, 9*vg.Inch, 0, func(c draw.Canvas) {
		c = plot.Padded(c, vg.Points(4))
		h := (c.Max.Y - c.Min.Y) / vg.Length(len(plots))
		for i, p := range plots {
			sub := c
			sub.Max.Y = c.Max.Y - vg.Length(i)*h
			sub.Min.Y = sub.Max.Y - h
			plot.DrawLegendRight(p, sub)
		}
	})
}

// ladderTicks marks the ladder's budgets on the token axis: "98.3M (×1)".
func ladderTicks(cfg study.Config, fams []ladderFamily) gplot.ConstantTicks {
	seen := map[int]bool{}
	var ts gplot.ConstantTicks
	for _, f := range fams {
		for _, m := range f.Models {
			b := max(1, m.Budget)
			if seen[b] {
				continue
			}
			seen[b] = true
			tok := float64(b) * cfg.TrainTokens()
			ts = append(ts, gplot.Tick{Value: tok, Label: fmt.Sprintf("%.3gM (×%d)", tok/1e6, b)})
		}
	}
	return ts
}
