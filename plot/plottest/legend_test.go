package plottest_test

import (
	"fmt"
	"image/color"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/plot/plottest"
)

// errorsOf is a testing.TB that keeps the errors reported to it.
type errorsOf struct {
	testing.TB
	errs []string
}

func (e *errorsOf) Helper() {}
func (e *errorsOf) Errorf(format string, a ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, a...))
}

// curvesPlot is a plot of one curve per style, each with a legend entry
// named after its index (and a band under the first, as plot draws them).
func curvesPlot(t *testing.T, styles []draw.LineStyle) *gplot.Plot {
	t.Helper()
	p := gplot.New()
	p.Title.Text = "curves"
	p.X.Label.Text, p.Y.Label.Text = "x", "y"
	for k, sty := range styles {
		xy := make(plotter.XYs, 50)
		for i := range xy {
			xy[i] = plotter.XY{X: float64(i), Y: float64(k) + float64(i%7)/10}
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			t.Fatal(err)
		}
		l.LineStyle = sty
		p.Add(l)
		if k == 0 {
			band, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: -0.2}, {X: 49, Y: -0.2}, {X: 49, Y: 0.8}, {X: 0, Y: 0.8}})
			if err != nil {
				t.Fatal(err)
			}
			band.Color, band.LineStyle.Width = color.NRGBA{0, 0x72, 0xB2, 0x38}, 0
			p.Add(band)
			p.Legend.Add(fmt.Sprintf("curve %d", k), band, l)
			continue
		}
		p.Legend.Add(fmt.Sprintf("curve %d", k), l)
	}
	return p
}

var (
	blue   = color.NRGBA{0x00, 0x72, 0xB2, 0xFF}
	orange = color.NRGBA{0xE6, 0x9F, 0x00, 0xFF}
	dashed = []vg.Length{vg.Points(6), vg.Points(3)}
)

// TestCheckLegendCatchesRepeat: a figure whose curves 1 and 3 are drawn
// alike (same colour, width and dashes) fails CheckLegend, and one whose
// curves 0 and 2 share only a colour fails it with distinctColours.
func TestCheckLegendCatchesRepeat(t *testing.T) {
	w, h := 6*vg.Inch, 4*vg.Inch
	repeat := curvesPlot(t, []draw.LineStyle{
		{Color: blue, Width: vg.Points(1.4)},
		{Color: orange, Width: vg.Points(1.4), Dashes: dashed},
		{Color: blue, Width: vg.Points(1.4), Dashes: dashed},
		{Color: orange, Width: vg.Points(1.4), Dashes: dashed}, // as curve 1
	})
	e := &errorsOf{TB: t}
	entries := plottest.CheckLegend(e, "repeat", w, h, repeat.Draw, false)
	if len(entries) != 4 {
		t.Fatalf("%d legend entries found, want 4: %+v", len(entries), entries)
	}
	if len(e.errs) != 1 || !strings.Contains(e.errs[0], `"curve 1" and "curve 3" are drawn alike`) {
		t.Errorf("errors %q, want one: curves 1 and 3 drawn alike", e.errs)
	}
	// With distinct colours asked for, curves 0 and 2 (blue, solid and
	// dashed) are reported as well.
	e = &errorsOf{TB: t}
	plottest.CheckLegend(e, "repeat", w, h, repeat.Draw, true)
	var shared int
	for _, s := range e.errs {
		if strings.Contains(s, "share a colour") {
			shared++
			if !strings.Contains(s, `"curve 0" and "curve 2"`) && !strings.Contains(s, `"curve 1" and "curve 3"`) {
				t.Errorf("unexpected: %s", s)
			}
		}
	}
	if shared != 2 {
		t.Errorf("errors %q: want curves 0 and 2, 1 and 3 sharing a colour", e.errs)
	}
}

// TestCheckLegendPasses: four curves in four colours pass, with their
// entries found in order and the first one's key holding its band's fill
// and its line.
func TestCheckLegendPasses(t *testing.T) {
	w, h := 6*vg.Inch, 4*vg.Inch
	p := curvesPlot(t, []draw.LineStyle{
		{Color: blue, Width: vg.Points(1.4)},
		{Color: orange, Width: vg.Points(1.4), Dashes: dashed},
		{Color: color.NRGBA{0x00, 0x9E, 0x73, 0xFF}, Width: vg.Points(1.4)},
		{Color: color.NRGBA{0xCC, 0x79, 0xA7, 0xFF}, Width: vg.Points(1.4)},
	})
	entries := plottest.CheckLegend(t, "distinct", w, h, p.Draw, true)
	for k, e := range entries {
		if e.Text != fmt.Sprintf("curve %d", k) {
			t.Errorf("entry %d is %q", k, e.Text)
		}
	}
	if len(entries) > 0 {
		if got, want := entries[0].Style(), "fill #0072B238 + stroke #0072B2FF 1.4pt"; got != want {
			t.Errorf("first key %q, want %q", got, want)
		}
		if got := entries[0].Colours(); got != "#0072B2" {
			t.Errorf("first key's colours %q, want the line's #0072B2", got)
		}
	}
	// Titles and tick labels are no entries, and a figure without a
	// legend has none.
	q := gplot.New()
	q.Title.Text = "no legend"
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	q.Add(l)
	ops, err := plottest.RecordOps(w, h, q.Draw)
	if err != nil {
		t.Fatal(err)
	}
	if es := plottest.LegendEntries(ops); len(es) != 0 {
		t.Errorf("entries found in a figure without a legend: %+v", es)
	}
}
