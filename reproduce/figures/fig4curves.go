package figures

import (
	"math"
	"path/filepath"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Fig4CurvesFile is the training curves of Fig. 4's models and the full
// reference transformer (replicate 0).
const Fig4CurvesFile = "fig4_training.png"

// Fig4CurveModels are the models whose training curves Fig4CurvesFile
// draws: the full reference (when there is one) and Fig. 4's models.
func Fig4CurveModels(cfg study.Config) []study.Model {
	var ms []study.Model
	if ref, ok := FullReference(cfg); ok {
		ms = append(ms, ref)
	}
	for _, s := range cfg.Fig4Models {
		if m, err := study.ParseModel(s); err == nil {
			ms = append(ms, m)
		}
	}
	return ms
}

// drawTrainingCurves draws the training loss (the mean of every log
// interval, averaged over 5 consecutive intervals) against the step for
// each model with a log, in nats per symbol.
func drawTrainingCurves(models []study.Model, logs map[string][]transformer.LogEntry, title, path string) error {
	p, err := trainingCurvesPlot(models, logs, title)
	if err != nil {
		return err
	}
	return plot.SavePlotLegendRight(p, 9*vg.Inch, 5*vg.Inch, filepath.Ext(path)[1:], path, true)
}

// trainingCurvesPlot is drawTrainingCurves' plot (its legend is drawn to
// the right).
func trainingCurvesPlot(models []study.Model, logs map[string][]transformer.LogEntry, title string) (*gplot.Plot, error) {
	p := plot.NewStepPlot(title, "training step", "training loss (nats/symbol, mean of 5 log intervals)")
	p.Legend.ThumbnailWidth = vg.Points(28)
	for i, m := range models {
		h := logs[m.Label()]
		var xy plotter.XYs
		for j := range h {
			s, n := 0.0, 0
			for k := max(0, j-4); k <= j; k++ {
				if !math.IsNaN(h[k].TrainLoss) {
					s, n = s+h[k].TrainLoss, n+1
				}
			}
			if n > 0 {
				xy = append(xy, plotter.XY{X: float64(h[j].Step), Y: s / float64(n)})
			}
		}
		if len(xy) == 0 {
			continue
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		sty := plot.MethodStyle(i, false)
		l.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.4), Dashes: sty.Dashes}
		p.Add(l)
		p.Legend.Add(m.Label(), l)
	}
	return p, nil
}
