package experiment

import (
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
)

// Figure draws the report's heads: for each head, the cost of ablating it
// (first colour) and of replacing its attention by its label's exact pattern
// (second colour; absent without a pattern), each a point with its 95%
// interval, and the margin dashed, in nats/symbol; saved as PNG.
func (r *AblateReport) Figure(path string, force bool) error {
	p := gplot.New()
	p.Title.Text = fmt.Sprintf("%s: cost of each head (%d windows, %s ablation)", r.Model, r.Windows, r.Mode)
	defer plot.FitTitle(p, 7*vg.Inch)()
	p.Y.Label.Text = "loss − intact (nats/symbol)"
	p.Add(plotter.NewGrid())
	names := make([]string, len(r.Heads))
	var abl, pat points
	for i, h := range r.Heads {
		names[i] = h.Head
		if h.Labelled {
			names[i] += "*"
		}
		abl = append(abl, point{float64(i) - 0.15, h.Cost})
		if h.PatternCost != nil {
			pat = append(pat, point{float64(i) + 0.15, *h.PatternCost})
		}
	}
	pal := plot.Palette()
	for k, s := range []struct {
		name string
		v    points
	}{{"ablated (" + r.Mode + ")", abl}, {"exact pattern of its label", pat}} {
		if len(s.v) == 0 {
			continue
		}
		pts, err := plotter.NewScatter(s.v)
		if err != nil {
			return err
		}
		e, err := plotter.NewYErrorBars(s.v)
		if err != nil {
			return err
		}
		pts.Color, e.Color = pal[k], pal[k]
		pts.Radius, pts.Shape = vg.Points(3), draw.CircleGlyph{}
		p.Add(e, pts)
		p.Legend.Add(s.name, pts)
	}
	m, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: r.Margin}, {X: float64(len(r.Heads)) - 0.5, Y: r.Margin}})
	if err != nil {
		return err
	}
	m.Dashes, m.Color = []vg.Length{vg.Points(3), vg.Points(2)}, color.Gray{Y: 100}
	p.Add(m)
	p.Legend.Add(fmt.Sprintf("margin %g", r.Margin), m)
	p.Legend.Top = true
	p.NominalX(names...)
	p.X.Label.Text = "head (* labelled by its attention)"
	return plot.SavePlot(p, 7*vg.Inch, 3.6*vg.Inch, "png", path, force)
}

// point is a cost at x with its interval.
type point struct {
	x  float64
	iv eval.Interval
}

// points are plotter.XYer and plotter.YErrorer.
type points []point

func (p points) Len() int                    { return len(p) }
func (p points) XY(i int) (float64, float64) { return p[i].x, p[i].iv.Mean }
func (p points) YError(i int) (float64, float64) {
	return p[i].iv.Mean - p[i].iv.Lo, p[i].iv.Hi - p[i].iv.Mean
}
