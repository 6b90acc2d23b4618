package figures

import (
	"math"
	"testing"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/plot/plottest"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestTrainingCurvesText renders Fig. 4's training curves for five models
// and checks the figure's text with plottest.
func TestTrainingCurvesText(t *testing.T) {
	logs := map[string][]transformer.LogEntry{}
	var models []study.Model
	for i, s := range []string{"2,2,2,2", "2,2-ff-ln", "2,2,2,2-ff-ln", "1,1", "1,1,1-ff"} {
		m, err := study.ParseModel(s)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
		for step := 25; step <= 600; step += 25 {
			logs[m.Label()] = append(logs[m.Label()], transformer.LogEntry{Step: step, TrainLoss: 0.9 + 0.03*float64(i) + 0.2*math.Exp(-float64(step)/100)})
		}
	}
	p, err := trainingCurvesPlot(models, logs, "Fig. 4 models: training curves (replicate 0; A=3, D=2, N=64, 200 test windows)")
	if err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, "fig4 training", 9*vg.Inch, 5*vg.Inch, func(c draw.Canvas) { plot.DrawLegendRight(p, plot.Padded(c, 4)) })
}
