package trainrun

import (
	"math"
	"testing"

	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/plot/plottest"
	"github.com/vomc/vomc/transformer"
)

// TestCurveText renders the training curve (many log intervals, epoch-end
// validation) and checks its text with plottest: no string overlaps
// another or leaves the figure.
func TestCurveText(t *testing.T) {
	var hist []transformer.LogEntry
	for s := 25; s <= 600; s += 25 {
		e := transformer.LogEntry{Step: s, TrainLoss: 0.85 + 0.2*math.Exp(-float64(s)/150), ValLoss: math.NaN()}
		if s%100 == 0 {
			e.EpochEnd, e.ValLoss = true, 0.8+0.1*math.Exp(-float64(s)/150)
		}
		hist = append(hist, e)
	}
	p, err := curvePlot(hist, "Training curve of tf-h4-4-x4-seed1")
	if err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, "curve", curveW, curveH, func(c draw.Canvas) { plot.DrawLegendRight(p, plot.Padded(c, 4)) })
}
