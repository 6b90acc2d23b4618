package attnmap

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ErrNoLabelled is ProfileFigure's error when no head is labelled.
var ErrNoLabelled = errors.New("attnmap: no labelled head to draw")

// profileColors are distinct line colours (Okabe–Ito, then Tableau).
var profileColors = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, {0xD5, 0x5E, 0x00, 0xFF}, {0x00, 0x9E, 0x73, 0xFF},
	{0xCC, 0x79, 0xA7, 0xFF}, {0xE6, 0x9F, 0x00, 0xFF}, {0x56, 0xB4, 0xE9, 0xFF},
	{0x8C, 0x56, 0x4B, 0xFF}, {0x7F, 0x7F, 0x7F, 0xFF}, {0xBC, 0xBD, 0x22, 0xFF},
}

// ProfileFigure draws, for every labelled head of scores, its mass on its
// label's positions against the query position (Profile.Series), smoothed
// by a centred moving average of width smooth (NaN positions skipped), one
// line per head: whether each head keeps doing its job over the whole
// window. The format follows path's extension (.png, .svg, .pdf).
func ProfileFigure(path string, p *Profile, scores []HeadScore, smooth int, title string) error {
	if p == nil || p.T < 2 {
		return errors.New("attnmap: empty profile")
	}
	pl := gplot.New()
	pl.Title.Text = title
	pl.Title.TextStyle.Font.Size = vg.Points(11)
	pl.X.Label.Text = "query position"
	pl.Y.Label.Text = "attention mass on the label's positions"
	pl.X.Min, pl.X.Max = 0, float64(p.T-1)
	pl.Y.Min, pl.Y.Max = 0, 1.05
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{0xE0}, color.Gray{0xE0}
	pl.Add(grid)
	n := 0
	for _, ls := range p.labelledSeries(scores) {
		hs := ls.head
		xy := smoothNaN(ls.series, smooth)
		if len(xy) < 2 {
			continue
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		line.LineStyle = draw.LineStyle{Color: profileColors[n%len(profileColors)], Width: vg.Points(1.3)}
		if n >= len(profileColors) {
			line.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		}
		pl.Add(line)
		what := fmt.Sprintf("d=%d", hs.Best.D)
		if hs.Best.Kind == SuffixMatch {
			what = fmt.Sprintf("suffix k=%d/%d", hs.Best.K, hs.Best.Offset)
		}
		pl.Legend.Add(fmt.Sprintf("L%dH%d %s", hs.Layer, hs.Head, what), line)
		n++
	}
	if n == 0 {
		return ErrNoLabelled
	}
	// Headroom above the curves for the legend (one line ≈ 0.055 of the
	// axis at this size), and integer position ticks.
	pl.Y.Max = 1.05 + 0.055*float64(n)
	var ticks []gplot.Tick
	step := max(1, niceStep(p.T))
	for v := 0; v < p.T; v += step {
		ticks = append(ticks, gplot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	pl.X.Tick.Marker = gplot.ConstantTicks(ticks)
	var yt []gplot.Tick
	for v := 0; v <= 10; v += 2 {
		yt = append(yt, gplot.Tick{Value: float64(v) / 10, Label: fmt.Sprintf("%.1f", float64(v)/10)})
	}
	pl.Y.Tick.Marker = gplot.ConstantTicks(yt)
	pl.Legend.Top, pl.Legend.Left = true, false
	pl.Legend.TextStyle.Font.Size = vg.Points(8)
	pl.Legend.Padding = vg.Points(1)
	return render(path, 9*vg.Inch, 4.5*vg.Inch, DefaultDPI, func(c draw.Canvas) {
		c.SetColor(color.White)
		c.Fill(c.Rectangle.Path())
		pl.Draw(c)
	})
}

// smoothNaN returns the points (i, mean of the finite v[j], |j−i| ≤ w/2)
// for every i with at least one finite neighbour.
func smoothNaN(v []float64, w int) plotter.XYs {
	h := max(w, 1) / 2
	var out plotter.XYs
	for i := range v {
		s, n := 0.0, 0
		for j := max(0, i-h); j <= min(len(v)-1, i+h); j++ {
			if !math.IsNaN(v[j]) {
				s += v[j]
				n++
			}
		}
		if n > 0 {
			out = append(out, plotter.XY{X: float64(i), Y: s / float64(n)})
		}
	}
	return out
}

// niceStep is a tick spacing of 1, 2 or 5 × 10^k giving 5 to 10 ticks
// over 0..T−1.
func niceStep(T int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if T/(m*p) <= 10 {
				return m * p
			}
		}
	}
}
