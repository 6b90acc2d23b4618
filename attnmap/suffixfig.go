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

// stems is a stem plot: a vertical line from 0 to each y, with a glyph on
// top (only where the stem is at least minGlyph tall).
type stems struct {
	xs, ys   []float64
	line     draw.LineStyle
	glyph    draw.GlyphStyle
	minGlyph float64
}

// Plot implements plot.Plotter.
func (s *stems) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	for i, x := range s.xs {
		px, py, p0 := trX(x), trY(s.ys[i]), trY(0)
		c.StrokeLine2(s.line, px, p0, px, py)
	}
	for i, x := range s.xs {
		if s.ys[i] >= s.minGlyph {
			c.DrawGlyph(s.glyph, vg.Point{X: trX(x), Y: trY(s.ys[i])})
		}
	}
}

// DataRange implements plot.DataRanger.
func (s *stems) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i, x := range s.xs {
		xmin, xmax = min(xmin, x), max(xmax, x)
		ymax = max(ymax, s.ys[i])
	}
	if len(s.xs) == 0 {
		xmin, xmax = 0, 0
	}
	return xmin, xmax, 0, ymax
}

// Thumbnail implements plot.Thumbnailer (the legend entry).
func (s *stems) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(s.line, x, c.Min.Y, x, c.Max.Y-s.glyph.Radius)
	c.DrawGlyph(s.glyph, vg.Point{X: x, Y: c.Max.Y - s.glyph.Radius})
}

// SuffixMatchFigure draws, like the bottom of the paper's Fig. 5, one
// panel per query position (stacked vertically): the positions
// SuffixMatches(x[:T], query, k, offset) as black stems with circles (of
// height the row's largest weight, so that they compare with the
// weights) and the head's attention weights att[query·T + j], j ≤ query,
// as red stems with diamonds (diamonds only on weights ≥ 2% of the
// largest, so the baseline stays readable), with a dashed line at the
// query itself. Each panel's title gives the query, its suffix, the
// number of matches and the attention mass on them (the score of the
// hypothesis at that query). att is one head's T×T map (row-major) of the
// window x[:T]; the format follows path's extension (.png, .svg or .pdf)
// and the file is written atomically, replacing any existing one.
func SuffixMatchFigure(path string, x []byte, att []float32, T int, queries []int, k, offset int) error {
	f, err := suffixFigure(x, att, T, queries, k, offset)
	if err != nil {
		return err
	}
	return render(path, f.w, f.h, f.dpi, f.draw)
}

// suffixFigure lays out SuffixMatchFigure's figure.
func suffixFigure(x []byte, att []float32, T int, queries []int, k, offset int) (*figure, error) {
	if T <= 0 || T > len(x) || len(att) != T*T {
		return nil, fmt.Errorf("attnmap: a %d-entry map of a %d-symbol window (x has %d)", len(att), T, len(x))
	}
	if len(queries) == 0 {
		return nil, errors.New("attnmap: no query positions")
	}
	if k < 0 || (offset != 0 && offset != 1) {
		return nil, fmt.Errorf("attnmap: invalid suffix length %d or offset %d", k, offset)
	}
	x = x[:T]
	const figW = 10 * vg.Inch
	var plots [][]*gplot.Plot
	for _, q := range queries {
		if q < 0 || q >= T {
			return nil, fmt.Errorf("attnmap: query position %d outside the window 0..%d", q, T-1)
		}
		row := att[q*T : q*T+q+1]
		top := 0.0
		for _, v := range row {
			top = max(top, float64(v))
		}
		matches := SuffixMatches(x, q, k, offset)
		mass := 0.0
		mx, my := make([]float64, len(matches)), make([]float64, len(matches))
		for i, j := range matches {
			mass += float64(row[j])
			mx[i], my[i] = float64(j), top
		}
		ax, ay := make([]float64, len(row)), make([]float64, len(row))
		for j, v := range row {
			ax[j], ay[j] = float64(j), float64(v)
		}
		match := &stems{xs: mx, ys: my,
			line:  draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)},
			glyph: draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}}
		weights := &stems{xs: ax, ys: ay, minGlyph: 0.02 * top,
			line:  draw.LineStyle{Color: color.NRGBA{0xD0, 0x10, 0x10, 0xFF}, Width: vg.Points(0.8)},
			glyph: draw.GlyphStyle{Color: color.NRGBA{0xD0, 0x10, 0x10, 0xFF}, Radius: vg.Points(2.6), Shape: diamond{}}}
		p := gplot.New()
		suffix := "(empty)"
		if k > 0 && q >= k-1 {
			suffix = symbolsOf(x[q-k+1 : q+1])
		}
		what := "ending with it"
		if offset == 1 {
			what = "right after it"
		}
		p.Title.Text = fmt.Sprintf("query %d, suffix %s (k=%d): %d positions %s; attention mass on them %.2f", q, suffix, k, len(matches), what, mass)
		if q < k-1 {
			p.Title.Text = fmt.Sprintf("query %d: fewer than k=%d symbols, no suffix", q, k)
		}
		p.Title.TextStyle.Font.Size = vg.Points(10)
		p.Title.Text, p.Title.TextStyle.Font.Size = plot.FitText(p.Title.Text, p.Title.TextStyle, figW-vg.Points(16), 2, vg.Points(8))
		p.X.Label.Text = "position"
		p.Y.Label.Text = "attention weight"
		p.X.Min, p.X.Max = -0.5, float64(T)-0.5
		p.X.Tick.Marker, p.Y.Tick.Marker = plot.RoundTicks{Max: 11}, plot.RoundTicks{Max: 5}
		p.Y.Min, p.Y.Max = 0, math.Max(top, 1e-6)*1.4 // headroom for the legend
		qline, err := plotter.NewLine(plotter.XYs{{X: float64(q), Y: 0}, {X: float64(q), Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		qline.LineStyle = draw.LineStyle{Color: color.Gray{0x90}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
		p.Add(qline, match, weights)
		p.Legend.Add(fmt.Sprintf("matching positions (k=%d, offset %d)", k, offset), match)
		p.Legend.Add("attention weights", weights)
		p.Legend.Top = true
		// on the side away from the weights (none after the query)
		p.Legend.Left = 2*q >= T
		p.Legend.TextStyle.Font.Size = vg.Points(9)
		p.Legend.Padding = vg.Points(2)
		plots = append(plots, []*gplot.Plot{p})
	}
	W, H := figW, vg.Length(len(queries))*2.6*vg.Inch
	return &figure{w: W, h: H, dpi: DefaultDPI, draw: func(c draw.Canvas) {
		c.SetColor(color.White)
		c.Fill(c.Rectangle.Path())
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
		cs := gplot.Align(plots, tiles, c)
		for i, p := range plots {
			p[0].Draw(cs[i][0])
		}
	}}, nil
}

// symbolsOf writes symbols as digits, symbols ≥ 10 in brackets.
func symbolsOf(s []byte) string {
	out := ""
	for _, v := range s {
		if v < 10 {
			out += string(rune('0' + v))
		} else {
			out += fmt.Sprintf("[%d]", v)
		}
	}
	return out
}

// diamond is a filled diamond glyph.
type diamond struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (diamond) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetColor(sty.Color)
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	p.Close()
	c.Fill(p)
}
