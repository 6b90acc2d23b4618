package trainrun

import (
	"math"
	"path/filepath"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/transformer"
)

// DrawCurve draws the training curve of the log, titled with the run
// directory's name: the training loss of every log interval and the
// validation loss at every epoch end (and at the last step, where a
// maximum number of steps ends the run), in nats per symbol against the
// step, to curve.png and curve.svg in dir.
func DrawCurve(dir string, hist []transformer.LogEntry) error {
	if len(hist) == 0 {
		return nil
	}
	name := dir
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs)
	}
	p, err := curvePlot(hist, "Training curve of "+name)
	if err != nil {
		return err
	}
	for _, format := range []string{"png", "svg"} {
		if err := plot.SavePlotLegendRight(p, curveW, curveH, format, filepath.Join(dir, "curve."+format), true); err != nil {
			return err
		}
	}
	return nil
}

// curveW × curveH is the size of the training curve figure.
const curveW, curveH = 8 * vg.Inch, 4.5 * vg.Inch

// curvePlot is DrawCurve's plot (its legend is drawn to the right).
func curvePlot(hist []transformer.LogEntry, title string) (*gplot.Plot, error) {
	p := plot.NewStepPlot(title, "step", "loss (nats/symbol)")
	var trainXY, valXY plotter.XYs
	for _, e := range hist {
		if !math.IsNaN(e.TrainLoss) {
			trainXY = append(trainXY, plotter.XY{X: float64(e.Step), Y: e.TrainLoss})
		}
		if e.EpochEnd && !math.IsNaN(e.ValLoss) {
			valXY = append(valXY, plotter.XY{X: float64(e.Step), Y: e.ValLoss})
		}
	}
	for i, s := range []struct {
		name string
		xy   plotter.XYs
	}{{"train (per log interval)", trainXY}, {"validation (epoch ends, and the last step)", valXY}} {
		if len(s.xy) == 0 {
			continue
		}
		sty := plot.MethodStyle(i, false)
		l, pts, err := plotter.NewLinePoints(s.xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.4), Dashes: sty.Dashes}
		pts.Shape = draw.CircleGlyph{}
		pts.Color = sty.Color
		pts.Radius = vg.Points(1.5)
		if i == 0 && len(s.xy) > 60 {
			pts.Radius = 0
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	return p, nil
}
