package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/internal/fsutil"
)

// Wrap breaks text into lines no wider than width in the style sty: at
// the clause boundaries ", " where it can, filling each line greedily with
// clauses, and at spaces inside a clause wider than width (a word wider
// than width gets a line of its own), but not inside a parenthesis of at
// most three words ("(offset 1)"). Existing line breaks are kept.
func Wrap(text string, sty draw.TextStyle, width Length) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		clauses := strings.SplitAfter(para, ", ")
		line := ""
		for _, cl := range clauses {
			switch {
			case sty.Width(strings.TrimSpace(line+cl)) <= width:
				line += cl
			case sty.Width(strings.TrimSpace(cl)) <= width:
				out = append(out, strings.TrimSpace(line))
				line = cl
			default: // a long clause: by words, from where the line is
				for _, w := range words(cl) {
					if line == "" || sty.Width(strings.TrimSpace(line)+" "+w) <= width {
						line = strings.TrimSpace(line) + " " + w
						line = strings.TrimSpace(line)
						continue
					}
					out = append(out, strings.TrimSpace(line))
					line = w
				}
				if strings.HasSuffix(cl, " ") {
					line += " "
				}
			}
		}
		out = append(out, strings.TrimSpace(line))
	}
	for len(out) > 1 && out[0] == "" {
		out = out[1:]
	}
	return strings.Join(out, "\n")
}

// words splits a clause at its spaces, except inside a parenthesis that
// closes within three words, which stays one word.
func words(cl string) []string {
	f := strings.Fields(cl)
	var out []string
	for i := 0; i < len(f); i++ {
		w := f[i]
		if strings.HasPrefix(w, "(") && !strings.Contains(w, ")") {
			for j := i + 1; j < len(f) && j <= i+2; j++ {
				if strings.Contains(f[j], ")") {
					w, i = strings.Join(f[i:j+1], " "), j
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// FitText makes text fit in width: unchanged when it does at the style's
// size; otherwise wrapped onto at most maxLines lines at the largest size
// from the style's down to minSize (in steps of 0.5 pt) at which every line
// fits, or at minSize (lines may then stay too wide when a single word is).
// It returns the text and the font size to draw it with.
func FitText(text string, sty draw.TextStyle, width Length, maxLines int, minSize Length) (string, Length) {
	size := sty.Font.Size
	if widest(text, sty) <= width {
		return text, size
	}
	maxLines = max(maxLines, 1)
	minSize = min(minSize, size)
	for s := size; ; s -= vg.Points(0.5) {
		s = max(s, minSize)
		sty.Font.Size = s
		w := Wrap(text, sty, width)
		if strings.Count(w, "\n")+1 <= maxLines && widest(w, sty) <= width {
			return w, s
		}
		if s <= minSize {
			return w, s
		}
	}
}

// widest is the width of the widest line of text.
func widest(text string, sty draw.TextStyle) Length {
	w := Length(0)
	for _, l := range strings.Split(text, "\n") {
		w = max(w, sty.Width(l))
	}
	return w
}

// FitTitle fits p's title in width and returns a function that restores
// the title as it was; call it after drawing. A title too wide for one
// line is broken before its last parenthesis ("Fig. 3: … CTW" / "(A=3, …
// windows)") when both parts fit and the first is a third of it or more,
// else at the space that balances the two lines best, and otherwise
// wrapped by FitText (at most two lines, down to 80% of its size but not
// below 8 pt).
func FitTitle(p *gplot.Plot, width Length) (restore func()) {
	text, size := p.Title.Text, p.Title.TextStyle.Font.Size
	restore = func() { p.Title.Text, p.Title.TextStyle.Font.Size = text, size }
	if text == "" || strings.Contains(text, "\n") || p.Title.TextStyle.Width(text) <= width {
		return restore
	}
	if i := strings.LastIndex(text, " ("); 3*i >= len(text) {
		two := text[:i] + "\n" + text[i+1:]
		if widest(two, p.Title.TextStyle) <= width {
			p.Title.Text = two
			return restore
		}
	}
	// the most balanced break at a space
	best, bestW := "", width
	for i := range len(text) {
		if text[i] != ' ' {
			continue
		}
		two := text[:i] + "\n" + text[i+1:]
		if w := widest(two, p.Title.TextStyle); w <= bestW {
			best, bestW = two, w
		}
	}
	if best != "" {
		p.Title.Text = best
		return restore
	}
	p.Title.Text, p.Title.TextStyle.Font.Size = FitText(text, p.Title.TextStyle, width, 2, max(min(size, vg.Points(8)), 0.8*size))
	return restore
}

// DrawLegendRight draws p on c with its legend, when it has entries, in a
// column to the right of the axes, its top level with the top of the data
// area, so that it never covers data, its entries at least 0.2 em apart;
// the title is fitted (FitTitle) to the width left to the plot. The label
// of a logarithmic y axis is drawn here, centred on the data area: gonum
// lays it out as if centred on the linear midpoint of the range, which
// shrinks the data area (see LegendRightArea). It returns the data area
// as drawn (DataArea); p is left as it was.
func DrawLegendRight(p *gplot.Plot, c draw.Canvas) draw.Canvas {
	leg := p.Legend
	area := LegendRightArea(p, c)
	defer FitTitle(p, area.Max.X-area.Min.X)()
	ylabel, ysty := logYLabel(p)
	if ylabel != "" {
		p.Y.Label.Text = ""
		defer func() { p.Y.Label.Text = ylabel }()
	}
	p.Legend = gplot.NewLegend()
	defer func() { p.Legend = leg }()
	if leg.Rectangle(c).Size().X <= 0 {
		p.Legend = leg // empty
	}
	p.Draw(area)
	dc := p.DataCanvas(area)
	if ylabel != "" {
		c.FillText(ysty, vg.Point{X: c.Min.X, Y: (dc.Min.Y + dc.Max.Y) / 2}, ylabel)
	}
	if leg.Rectangle(c).Size().X <= 0 {
		return dc
	}
	lc := draw.Crop(c, area.Max.X-c.Min.X+legendPad, 0, dc.Min.Y-c.Min.Y, -(c.Max.Y - dc.Max.Y))
	leg.Top, leg.Left, leg.XOffs, leg.YOffs = true, true, 0, 0
	// gonum stacks entries 0.85 em apart: at least 0.2 em between them.
	leg.Padding = max(leg.Padding, 0.2*leg.TextStyle.Font.Size)
	leg.Draw(lc)
	return dc
}

// DataArea is the data area of p as DrawLegendRight(p, c) draws it.
func DataArea(p *gplot.Plot, c draw.Canvas) draw.Canvas {
	area := LegendRightArea(p, c)
	defer FitTitle(p, area.Max.X-area.Min.X)()
	if ylabel, _ := logYLabel(p); ylabel != "" {
		p.Y.Label.Text = ""
		defer func() { p.Y.Label.Text = ylabel }()
	}
	return p.DataCanvas(area)
}

// logYLabel returns the y label of p and its (rotated) style when the y
// axis is logarithmic, else "".
func logYLabel(p *gplot.Plot) (string, draw.TextStyle) {
	if _, ok := p.Y.Scale.(gplot.LogScale); !ok || p.Y.Label.Text == "" {
		return "", draw.TextStyle{}
	}
	sty := p.Y.Label.TextStyle
	sty.Rotation += math.Pi / 2
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	return p.Y.Label.Text, sty
}

// legendPad is the space between the axes and a legend beside them.
const legendPad = 8 * vg.Length(1)

// LegendRightArea is the part of c that DrawLegendRight draws p's axes
// on: c less, on the right, a column as wide as the legend when it has
// entries and, on the left, the y label of a logarithmic axis.
func LegendRightArea(p *gplot.Plot, c draw.Canvas) draw.Canvas {
	if l, sty := logYLabel(p); l != "" {
		c = draw.Crop(c, sty.Height(l)+p.Y.Label.Padding+vg.Points(4), 0, 0, 0)
	}
	lw := p.Legend.Rectangle(c).Size().X
	if lw <= 0 {
		return c
	}
	return draw.Crop(c, 0, -(lw + legendPad), 0, 0)
}

// Padded returns c less a margin of m on every side, so that text drawn
// at its edges (a title at the top) does not touch the border of the
// image.
func Padded(c draw.Canvas, m Length) draw.Canvas {
	return draw.Crop(c, m, -m, m, -m)
}

// SaveDrawing renders fn on a white w × h canvas in the format ("png" at
// dpi dots per inch, 0 meaning DefaultDPI; "svg"; "pdf") and writes it to
// path with fsutil.WriteFile (atomically; an existing path is an error
// unless force). A panic in fn (gonum panics on some degenerate inputs) is
// returned as an error.
func SaveDrawing(path string, force bool, format string, w, h Length, dpi int, fn func(draw.Canvas)) (err error) {
	if dpi == 0 {
		dpi = DefaultDPI
	}
	cw := NewCanvas(format, w, h, dpi)
	if cw == nil {
		return fmt.Errorf("plot: %s: unsupported format %q (want png, svg or pdf)", path, format)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: rendering %s failed: %v", path, r)
		}
	}()
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	fn(dc)
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return err
	}
	return fsutil.WriteFile(path, force, func(out io.Writer) error {
		_, err := out.Write(buf.Bytes())
		return err
	})
}

// SavePlotLegendRight is SaveDrawing of p drawn by DrawLegendRight with a
// 4-point margin.
func SavePlotLegendRight(p *gplot.Plot, w, h Length, format, path string, force bool) error {
	return SaveDrawing(path, force, format, w, h, 0, func(c draw.Canvas) { DrawLegendRight(p, Padded(c, vg.Points(4))) })
}

// NewStepPlot returns a plot of a quantity against the training step: the
// title and axis labels, a light grid, round ticks (RoundTicks) with the
// step axis from 0, and a 10-point legend (to be drawn with
// SavePlotLegendRight).
func NewStepPlot(title, xLabel, yLabel string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{0xE0}, color.Gray{0xE0}
	p.Add(grid)
	p.X.Tick.Marker, p.Y.Tick.Marker = RoundTicks{}, RoundTicks{}
	p.X.Min = 0 // the step axis from 0, so its ticks start there
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	return p
}
