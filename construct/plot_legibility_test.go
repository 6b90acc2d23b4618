package construct

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg/draw"

	vplot "github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/plot/plottest"
)

// TestPlotText renders the error-vs-c and error-vs-FF-width figures and
// checks their text with plottest: no string overlaps another or leaves
// the figure, the legend sits beside the axes.
func TestPlotText(t *testing.T) {
	cs := []float64{1, 3, 10, 30, 100, 300, 1000, 3000, 1e4}
	errs := make([]float64, len(cs))
	for i, c := range cs {
		errs[i] = math.Exp(-c / 300)
	}
	_, p, err := errorPlot("e.png", "Construction (D=3, A=3): max |P_TF − P_CTW| over 20 windows against the temperature c", cs, errs, 1e-15)
	if err != nil {
		t.Fatal(err)
	}
	plottest.Check(t, "error vs c", errorPlotW, errorPlotH, func(c draw.Canvas) { vplot.DrawLegendRight(p, vplot.Padded(c, 4)) })
	var series []FFSeries
	for i, lab := range []string{"D=2, A=2", "D=3, A=3", "D=4, A=3 (wider)"} {
		s := FFSeries{Label: lab}
		for K := 1; K <= 64; K *= 2 {
			s.W = append(s.W, float64(40*K*(i+1)))
			s.K = append(s.K, K)
			s.Err = append(s.Err, 0.3/float64(K*K))
		}
		series = append(series, s)
	}
	for _, byK := range []bool{false, true} {
		_, p, err := ffWidthPlot("f.png", "ReLU-network FF layers: max |P_TF − P_CTW| against the FF width", series, byK)
		if err != nil {
			t.Fatal(err)
		}
		plottest.Check(t, "ff width", ffPlotW, ffPlotH, func(c draw.Canvas) { vplot.DrawLegendRight(p, vplot.Padded(c, 4)) })
	}
	if dir := os.Getenv("VOMC_FIGURE_DIR"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteErrorPlot(filepath.Join(dir, "construct_error.png"), true, "Construction (D=3, A=3): max |P_TF − P_CTW| over 20 windows against the temperature c", cs, errs, 1e-15); err != nil {
			t.Fatal(err)
		}
		if err := WriteFFWidthPlot(filepath.Join(dir, "construct_ff.png"), true, "ReLU-network FF layers: max |P_TF − P_CTW| against the FF width", series, false); err != nil {
			t.Fatal(err)
		}
	}
}
