package construct

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vplot "github.com/vomc/vomc/plot"
)

// ErrorFloor is the smallest error drawn on the log axis of the error-vs-c
// plot (an exact 0 is drawn there).
const ErrorFloor = 1e-17

// WriteErrorPlot draws the maximal deviation from CTW against the
// temperature c (both axes logarithmic; see ErrorVsC) and writes it to path
// atomically (fsutil.WriteFile), as PNG, SVG or PDF by extension. hard, when
// not NaN, is drawn as a dashed horizontal line labelled "c = ∞".
func WriteErrorPlot(path string, force bool, title string, cs, errs []float64, hard float64) error {
	if len(cs) == 0 || len(cs) != len(errs) {
		return fmt.Errorf("construct: %d temperatures and %d errors", len(cs), len(errs))
	}
	format, p, err := newErrorPlot(path, title, "temperature c")
	if err != nil {
		return err
	}
	xy := make(plotter.XYs, len(cs))
	for k := range cs {
		xy[k].X = cs[k]
		xy[k].Y = math.Max(errs[k], ErrorFloor)
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	blue := color.NRGBA{0x00, 0x72, 0xB2, 0xFF}
	line.Color, points.Color = blue, blue
	points.Shape = draw.CircleGlyph{}
	p.Add(line, points)
	p.Legend.Add("finite c", line, points)
	if !math.IsNaN(hard) {
		h := math.Max(hard, ErrorFloor)
		ref, err := plotter.NewLine(plotter.XYs{{X: cs[0], Y: h}, {X: cs[len(cs)-1], Y: h}})
		if err != nil {
			return err
		}
		ref.Color = color.NRGBA{0, 0, 0, 0xFF}
		ref.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(ref)
		p.Legend.Add("c = ∞ (hard limit)", ref)
	}
	p.Legend.Left = true
	p.Legend.YOffs = vg.Inch // above the hard-limit line at the bottom
	return vplot.SavePlot(p, 6*vg.Inch, 4*vg.Inch, format, path, force)
}

// decades marks the powers of ten of a log axis, labelled 1e-15, 0.01, 1,
// 1000, …, labelling every k-th decade so that at most 8 labels appear.
type decades struct{}

func (decades) Ticks(lo, hi float64) []gplot.Tick {
	a, b := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	step := max(1, (b-a+7)/8)
	var ts []gplot.Tick
	for e := a; e <= b; e++ {
		v := math.Pow(10, float64(e))
		if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
			continue
		}
		t := gplot.Tick{Value: v}
		if e%step == 0 {
			if e >= -2 && e <= 4 {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			} else {
				t.Label = fmt.Sprintf("1e%d", e)
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// FFSeries is one curve of WriteFFWidthPlot: the maximal deviation from
// CTW (probabilities, max over positions and symbols) of the construction
// with ReLU-network FF layers against their width W (the widest hidden
// layer), one point per number K of segments per smooth function.
type FFSeries struct {
	Label string
	W     []float64
	K     []int
	Err   []float64
}

// WriteFFWidthPlot draws max |P_TF − P_CTW| against the FF width W (both
// axes logarithmic) for each series and writes it to path atomically, as
// PNG, SVG or PDF by extension. With byK it draws against K (segments per
// smooth function) instead.
func WriteFFWidthPlot(path string, force bool, title string, series []FFSeries, byK bool) error {
	format, p, err := newErrorPlot(path, title, "FF width W (widest hidden ReLU layer)")
	if err != nil {
		return err
	}
	palette := []color.NRGBA{{0x00, 0x72, 0xB2, 0xFF}, {0xD5, 0x5E, 0x00, 0xFF}, {0x00, 0x9E, 0x73, 0xFF}, {0xCC, 0x79, 0xA7, 0xFF}, {0xE6, 0x9F, 0x00, 0xFF}, {0x56, 0xB4, 0xE9, 0xFF}, {0, 0, 0, 0xFF}}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}
	for i, s := range series {
		if len(s.W) == 0 || len(s.W) != len(s.Err) {
			return fmt.Errorf("construct: series %q has %d widths and %d errors", s.Label, len(s.W), len(s.Err))
		}
		xy := make(plotter.XYs, len(s.W))
		for k := range s.W {
			xy[k].X, xy[k].Y = s.W[k], math.Max(s.Err[k], ErrorFloor)
			if byK {
				xy[k].X = float64(s.K[k])
			}
		}
		line, points, err := plotter.NewLinePoints(xy)
		if err != nil {
			return err
		}
		col := palette[i%len(palette)]
		line.Color, points.Color = col, col
		points.Shape = shapes[i%len(shapes)]
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	if byK {
		p.X.Label.Text = "K (segments per piecewise-linear function)"
		p.Legend.Left = true
	} else {
		p.Legend.Top = true
		p.Legend.XOffs = -1.5 * vg.Inch
	}
	return vplot.SavePlot(p, 7*vg.Inch, 4.5*vg.Inch, format, path, force)
}

// FFSweep builds the construction for cfg with ReLU-network FFs of K =
// 1, 2, 4, … ≤ maxK segments per smooth function, runs it on x and
// returns the series (label set by the caller).
func FFSweep(cfg Config, x []byte, maxK int) (FFSeries, error) {
	var s FFSeries
	ref, err := CTWDist(cfg, x)
	if err != nil {
		return s, err
	}
	for K := 1; K <= maxK; K *= 2 {
		c, err := Build(cfg)
		if err != nil {
			return s, err
		}
		nets, err := c.UseMLP(K)
		if err != nil {
			return s, err
		}
		tr, err := c.Run(x, false)
		if err != nil {
			return s, err
		}
		s.W = append(s.W, float64(nets.Width()))
		s.K = append(s.K, K)
		s.Err = append(s.Err, maxDiff(tr.Dist, ref))
	}
	return s, nil
}

// newErrorPlot checks path's extension (png, svg or pdf, returned as the
// format) and makes a log–log plot of max |P_TF − P_CTW| against xLabel.
func newErrorPlot(path, title, xLabel string) (string, *gplot.Plot, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch format {
	case "png", "svg", "pdf":
	default:
		return "", nil, fmt.Errorf("construct: plot file %s: want a .png, .svg or .pdf extension", path)
	}
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "max |P_TF − P_CTW|"
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = decades{}, decades{}
	p.Add(plotter.NewGrid())
	return format, p, nil
}
