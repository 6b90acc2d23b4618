package trainrun

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/gonum/floats"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/transformer"
)

// DrawCurve draws the training curve of the log, titled with the run
// directory's name: the training loss of every log interval and the
// validation loss at every epoch end (and at the last step, where a
// maximum number of steps ends the run), in nats per symbol against the
// step, to curve.png and curve.svg in dir.
func DrawCurve(dir string, hist []transformer.LogEntry) error {
	return DrawCurveRef(dir, hist, Reference{})
}

// Reference is a loss drawn across the training curve (Name "": none).
type Reference struct {
	Name string
	Loss float64 // nats per predicted symbol
}

// CTWReference is the loss of CTW with the prior of val's data set (the
// largest of its depths) on the validation windows val, per predicted
// symbol (positions 2..T, as the training losses): the reference a
// trained model approaches. ok is false without validation windows or
// their data set.
func CTWReference(val transformer.Windows) (ref Reference, ok bool) {
	ds := DatasetOf(val)
	if val == nil || val.Windows() == 0 || ds == nil {
		return ref, false
	}
	pr := ds.Config().Prior
	cfg := ctw.Config{A: pr.A, D: slices.Max(pr.Depths), Lambda: pr.Lambda, Alpha: 0.5}
	if len(pr.Alpha) == 1 {
		cfg.Alpha = pr.Alpha[0]
	} else if len(pr.Alpha) > 1 {
		cfg.AlphaVec = pr.Alpha
	}
	sum, n := 0.0, 0
	for i := range val.Windows() {
		w := val.Window(i)
		lml, err := ctw.LogMarginalLikelihood(cfg, w)
		if err != nil || len(w) < 2 {
			return ref, false
		}
		first := 1 / float64(cfg.A) // the first symbol's probability (pad init: every node fresh)
		if cfg.AlphaVec != nil {
			first = cfg.AlphaVec[w[0]] / floats.Sum(cfg.AlphaVec)
		}
		sum += -lml + math.Log(first)
		n += len(w) - 1
	}
	return Reference{Name: fmt.Sprintf("CTW(D=%d,λ=%g)", cfg.D, cfg.Lambda), Loss: sum / float64(n)}, true
}

// DrawCurveRef is DrawCurve with the reference ref drawn as a dashed
// horizontal line.
func DrawCurveRef(dir string, hist []transformer.LogEntry, ref Reference) error {
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
	if ref.Name != "" {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ref.Loss}, {X: float64(hist[len(hist)-1].Step), Y: ref.Loss}})
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{0x40}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s on validation: %.4f", ref.Name, ref.Loss), l)
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
	}{{"train (per log interval)", trainXY}, {"validation (epoch ends, last step)", valXY}} {
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
