package construct

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
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
	format, p, err := errorPlot(path, title, cs, errs, hard)
	if err != nil {
		return err
	}
	return vplot.SavePlotLegendRight(p, errorPlotW, errorPlotH, format, path, force)
}

// The sizes of WriteErrorPlot's and WriteFFWidthPlot's figures.
const (
	errorPlotW, errorPlotH = 7.5 * vg.Inch, 4 * vg.Inch
	ffPlotW, ffPlotH       = 8 * vg.Inch, 4.5 * vg.Inch
)

// errorPlot is WriteErrorPlot's plot and format.
func errorPlot(path, title string, cs, errs []float64, hard float64) (string, *gplot.Plot, error) {
	if len(cs) == 0 || len(cs) != len(errs) {
		return "", nil, fmt.Errorf("construct: %d temperatures and %d errors", len(cs), len(errs))
	}
	format, p, err := newErrorPlot(path, title, "temperature c")
	if err != nil {
		return "", nil, err
	}
	xy := make(plotter.XYs, len(cs))
	for k := range cs {
		xy[k].X = cs[k]
		xy[k].Y = math.Max(errs[k], ErrorFloor)
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return "", nil, err
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
			return "", nil, err
		}
		ref.Color = color.NRGBA{0, 0, 0, 0xFF}
		ref.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(ref)
		p.Legend.Add("c = ∞ (hard limit)", ref)
	}
	return format, p, nil
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
	format, p, err := ffWidthPlot(path, title, series, byK)
	if err != nil {
		return err
	}
	return vplot.SavePlotLegendRight(p, ffPlotW, ffPlotH, format, path, force)
}

// ffWidthPlot is WriteFFWidthPlot's plot and format.
func ffWidthPlot(path, title string, series []FFSeries, byK bool) (string, *gplot.Plot, error) {
	format, p, err := newErrorPlot(path, title, "FF width W (widest hidden ReLU layer)")
	if err != nil {
		return "", nil, err
	}
	palette := []color.NRGBA{{0x00, 0x72, 0xB2, 0xFF}, {0xD5, 0x5E, 0x00, 0xFF}, {0x00, 0x9E, 0x73, 0xFF}, {0xCC, 0x79, 0xA7, 0xFF}, {0xE6, 0x9F, 0x00, 0xFF}, {0x56, 0xB4, 0xE9, 0xFF}, {0, 0, 0, 0xFF}}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}
	for i, s := range series {
		if len(s.W) == 0 || len(s.W) != len(s.Err) {
			return "", nil, fmt.Errorf("construct: series %q has %d widths and %d errors", s.Label, len(s.W), len(s.Err))
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
			return "", nil, err
		}
		col := palette[i%len(palette)]
		line.Color, points.Color = col, col
		points.Shape = shapes[i%len(shapes)]
		p.Add(line, points)
		p.Legend.Add(s.Label, line, points)
	}
	if byK {
		p.X.Label.Text = "K (segments per piecewise-linear function)"
	}
	return format, p, nil
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
	p.X.Tick.Marker, p.Y.Tick.Marker = vplot.LogTicks{}, vplot.LogTicks{}
	p.Add(plotter.NewGrid())
	return format, p, nil
}
