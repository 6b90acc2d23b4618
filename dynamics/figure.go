package dynamics

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	vplot "github.com/vomc/vomc/plot"
)

// Figure draws the divergence from every reference to the model against
// the training step (log scale), one line per reference (the excess
// reference, CTW, solid black), with a dotted vertical line at every
// head's emergence step (labelled L<layer>H<head>), and writes it to path
// (.png or .svg, atomically).
func Figure(path, title string, pts []Point, em []Emergence) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return fmt.Errorf("dynamics: figure %s: want a .png or .svg extension", path)
	}
	if len(pts) == 0 {
		return fmt.Errorf("dynamics: no points to draw")
	}
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = "training step"
	p.Y.Label.Text = "mean KL(reference ‖ model) per position (nats)"
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	k := 0
	for r, d := range pts[0].KL {
		xy := make(plotter.XYs, 0, len(pts))
		for _, pt := range pts {
			v := pt.KL[r].Window.Mean
			if pt.Step < 1 || !(v > 0) {
				continue // log axes
			}
			xy = append(xy, plotter.XY{X: float64(pt.Step), Y: v})
			lo, hi = min(lo, v), max(hi, v)
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		ref := strings.HasPrefix(d.Reference, "CTW")
		st := vplot.MethodStyle(k, ref)
		if !ref {
			k++
		}
		l.Color, l.Dashes, l.Width = st.Color, st.Dashes, vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(d.Reference, l)
	}
	if math.IsInf(lo, 1) {
		return fmt.Errorf("dynamics: no positive divergence at a step ≥ 1 to draw")
	}
	for i, e := range em {
		if e.Step < 1 {
			continue
		}
		v, err := plotter.NewLine(plotter.XYs{{X: float64(e.Step), Y: lo}, {X: float64(e.Step), Y: hi}})
		if err != nil {
			return err
		}
		v.Color, v.Dashes = color.Gray{0x80}, []vg.Length{vg.Points(1), vg.Points(2)}
		p.Add(v)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: float64(e.Step), Y: hi * math.Pow(0.8, float64(i%6))}},
			Labels: []string{fmt.Sprintf("L%dH%d", e.Layer, e.Head)}})
		if err != nil {
			return err
		}
		lb.TextStyle[0].Font.Size = vg.Points(7)
		p.Add(lb)
	}
	return vplot.SavePlot(p, 7*vg.Inch, 4.5*vg.Inch, format, path, true)
}
