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

	"github.com/vomc/vomc/plot"
)

// ErrNoLabelled is ProfileFigure's error when no head is labelled.
var ErrNoLabelled = errors.New("attnmap: no labelled head to draw")

// ProfileFigure draws, for every labelled head of scores, its mass on its
// label's positions against the query position (Profile.Series), smoothed
// by a centred moving average of width smooth (NaN positions skipped), one
// line per head: whether each head keeps doing its job over the whole
// window. The format follows path's extension (.png, .svg, .pdf).
func ProfileFigure(path string, p *Profile, scores []HeadScore, smooth int, title string) error {
	f, err := profileFigure(p, scores, smooth, title)
	if err != nil {
		return err
	}
	return render(path, f.w, f.h, f.dpi, f.draw)
}

// profileFigure lays out ProfileFigure's figure.
func profileFigure(p *Profile, scores []HeadScore, smooth int, title string) (*figure, error) {
	if p == nil || p.T < 2 {
		return nil, errors.New("attnmap: empty profile")
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
			return nil, err
		}
		// plot's palette and dash patterns, in head order: every head's
		// line differs from the others, in colour up to 16 heads
		sty := plot.MethodStyle(n, false)
		line.LineStyle = draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3), Dashes: sty.Dashes}
		pl.Add(line)
		what := fmt.Sprintf("d=%d", hs.Best.D)
		if hs.Best.Kind == SuffixMatch {
			what = fmt.Sprintf("suffix k=%d/%d", hs.Best.K, hs.Best.Offset)
		}
		pl.Legend.Add(fmt.Sprintf("L%dH%d %s", hs.Layer, hs.Head, what), line)
		n++
	}
	if n == 0 {
		return nil, ErrNoLabelled
	}
	// Round position ticks (0, 50, 100, …) and the mass in tenths.
	pl.X.Tick.Marker = plot.RoundTicks{Max: 11}
	var yt []gplot.Tick
	for v := 0; v <= 10; v++ {
		tk := gplot.Tick{Value: float64(v) / 10}
		if v%2 == 0 {
			tk.Label = fmt.Sprintf("%.1f", float64(v)/10)
		}
		yt = append(yt, tk)
	}
	pl.Y.Tick.Marker = gplot.ConstantTicks(yt)
	pl.Legend.Top, pl.Legend.Left = true, false
	pl.Legend.TextStyle.Font.Size = vg.Points(9)
	pl.Legend.Padding = vg.Points(1)
	pl.Legend.ThumbnailWidth = vg.Points(24)
	W, H := 9*vg.Inch, 4.5*vg.Inch
	pl.Title.Text, pl.Title.TextStyle.Font.Size = plot.FitText(pl.Title.Text, pl.Title.TextStyle, W-vg.Points(16), 2, vg.Points(9))
	return &figure{w: W, h: H, dpi: DefaultDPI, draw: func(c draw.Canvas) {
		c.SetColor(color.White)
		c.Fill(c.Rectangle.Path())
		c = plot.Padded(c, vg.Points(4))
		// Headroom above the curves (which stay below 1.05) for the
		// legend, measured on the data area.
		pl.Y.Max = 1.05
		dc := pl.DataCanvas(c)
		h := dc.Max.Y - dc.Min.Y
		if lh := pl.Legend.Rectangle(dc).Size().Y + vg.Points(6); lh < 0.7*h {
			pl.Y.Max = 1.05 * float64(h/(h-lh))
		}
		pl.Draw(c)
	}}, nil
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
