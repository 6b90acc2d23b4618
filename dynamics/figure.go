package dynamics

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"
	"strings"

	gplot "gonum.org/v1/plot"
	vgfont "gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vplot "github.com/vomc/vomc/plot"
)

// Figure draws the divergence from every reference to the model against
// the training step (log scale), one line per reference (the excess
// reference, CTW, solid black), the model's excess loss over the
// reference named excess (Result.Excess) per symbol (thick grey, where
// positive: nats, the same scale),
// with a dotted vertical line at every
// head's emergence step, labelled above the plot with the heads that
// emerged there (L<layer>H<head>, comma-separated); the legend is in a
// column to the right. It writes the figure to path (.png or .svg,
// atomically).
func Figure(path, title, excess string, pts []Point, em []Emergence) error {
	format, err := figureFormat(path)
	if err != nil {
		return err
	}
	w, h, fn, _, err := figure(title, excess, pts, em, true)
	if err != nil {
		return err
	}
	return vplot.SaveDrawing(path, true, format, w, h, 0, fn)
}

// figureFormat is the format of a figure file, "png" or "svg", from its
// extension.
func figureFormat(path string) (string, error) {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	if format != "png" && format != "svg" {
		return "", fmt.Errorf("dynamics: figure %s: want a .png or .svg extension", path)
	}
	return format, nil
}

// legendEntry is one line of a figure's legend; drawn: the figure has the
// line (a reference with no positive divergence has none on log axes).
type legendEntry struct {
	name  string
	thumb gplot.Thumbnailer
	drawn bool
}

// figure lays out Figure's figure: its size, its drawing function and its
// legend's entries (one per reference, in order, then the excess loss when
// drawn), drawn beside the axes when legend is set (Panels draws them once
// for all panels otherwise).
func figure(title, excess string, pts []Point, em []Emergence, legend bool) (vg.Length, vg.Length, func(draw.Canvas), []legendEntry, error) {
	if len(pts) == 0 {
		return 0, 0, nil, nil, fmt.Errorf("dynamics: no points to draw")
	}
	p := newDynamicsPlot(title)
	// The loss beside the divergences: the excess over the reference
	// (CTW) per symbol, where positive (log axis).
	if excess == "" {
		excess = "the reference"
	}
	exLegend, err := addExcess(p, pts)
	if err != nil {
		return 0, 0, nil, nil, err
	}
	entries, xmin, xmax, err := addDivergences(p, pts)
	if err != nil {
		return 0, 0, nil, nil, err
	}
	if math.IsInf(xmin, 1) {
		return 0, 0, nil, nil, fmt.Errorf("dynamics: no positive divergence at a step ≥ 1 to draw")
	}
	if exLegend != nil {
		entries = append(entries, legendEntry{"excess loss over " + excess, exLegend, true})
	}
	if legend {
		for _, e := range entries {
			if e.drawn {
				p.Legend.Add(e.name, e.thumb)
			}
		}
	}
	marks := emergenceMarks(em)
	for _, m := range marks {
		xmin, xmax = min(xmin, m.step), max(xmax, m.step)
	}
	p.X.Min, p.X.Max = xmin, xmax
	return 8 * vg.Inch, 5 * vg.Inch, func(c draw.Canvas) { drawFigure(p, marks, vplot.Padded(c, vg.Points(4))) }, entries, nil
}

// newDynamicsPlot returns the empty plot of Figure: log training step
// against log nats per position, with a light grid and the legend's
// style.
func newDynamicsPlot(title string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.X.Label.Text = "training step"
	p.Y.Label.Text = "nats per position: mean KL(reference ‖ model); excess loss"
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = vplot.LogTicks{}
	p.Y.Scale = gplot.LogScale{}
	p.Y.Tick.Marker = vplot.LogTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = color.Gray{0xE0}, color.Gray{0xE0}
	p.Add(grid)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.Padding = vg.Points(2)
	p.Legend.ThumbnailWidth = vg.Points(28)
	return p
}

// addExcess draws the model's excess loss per symbol (nats) against the
// step as a thick grey line where it is positive, in runs of consecutive
// positive points at steps ≥ 1 so that no segment bridges a point left
// out. It returns the first run's line for the legend (nil: none drawn).
func addExcess(p *gplot.Plot, pts []Point) (*plotter.Line, error) {
	var runs []plotter.XYs
	var cur plotter.XYs
	for _, pt := range pts {
		if pt.Step < 1 {
			continue
		}
		if v := pt.Excess.Mean; v > 0 {
			cur = append(cur, plotter.XY{X: float64(pt.Step), Y: v})
			continue
		}
		if len(cur) > 0 {
			runs, cur = append(runs, cur), nil
		}
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	var first *plotter.Line
	for i, xy := range runs {
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = color.Gray{0x90}, vg.Points(3), nil
		p.Add(l) // first, so that the reference lines (CTW's, close to it) are drawn over it
		if i == 0 {
			first = l
		}
	}
	return first, nil
}

// addDivergences draws each reference's mean divergence KL(reference ‖
// model) per position (nats) against the step, at the steps ≥ 1 where it
// is positive, and returns the legend entries of the references, in
// order, and the range of the steps drawn (+Inf, −Inf: none).
func addDivergences(p *gplot.Plot, pts []Point) (entries []legendEntry, xmin, xmax float64, err error) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	k := 0
	for r, d := range pts[0].KL {
		// the style by the reference's place, whether drawn or not, so
		// that every panel of Panels gives a reference the same style
		ref := strings.HasPrefix(d.Reference, "CTW")
		st := vplot.MethodStyle(k, ref)
		if !ref {
			k++
		}
		xy := make(plotter.XYs, 0, len(pts))
		for _, pt := range pts {
			v := pt.KL[r].Window.Mean
			if pt.Step < 1 || !(v > 0) {
				continue // log axes
			}
			xy = append(xy, plotter.XY{X: float64(pt.Step), Y: v})
			xmin, xmax = min(xmin, float64(pt.Step)), max(xmax, float64(pt.Step))
		}
		l := &plotter.Line{LineStyle: plotter.DefaultLineStyle} // the legend's, when not drawn
		if len(xy) > 0 {
			if l, err = plotter.NewLine(xy); err != nil {
				return nil, 0, 0, err
			}
		}
		l.Color, l.Dashes, l.Width = st.Color, st.Dashes, vg.Points(1.5)
		entries = append(entries, legendEntry{d.Reference, l, len(xy) > 0})
		if len(xy) > 0 {
			p.Add(l)
		}
	}
	return entries, xmin, xmax, nil
}

// emergenceMarks returns the emergence steps ≥ 1 in increasing order,
// each labelled with the heads that emerged there (L<layer>H<head>,
// comma-separated, in the order of em).
func emergenceMarks(em []Emergence) []mark {
	byStep := map[int][]string{}
	for _, e := range em {
		if e.Step < 1 {
			continue
		}
		byStep[e.Step] = append(byStep[e.Step], fmt.Sprintf("L%dH%d", e.Layer, e.Head))
	}
	var marks []mark
	for s, heads := range byStep {
		marks = append(marks, mark{step: float64(s), label: strings.Join(heads, ", ")})
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].step < marks[j].step })
	return marks
}

// mark is an emergence step and its label.
type mark struct {
	step  float64
	label string
	row   int
}

// drawFigure draws p (its legend, if any, on the right) with the emergence marks: a
// dotted line through the data area at each step, its label in a band
// between the title and the data area, in as many rows as keep the labels
// apart, each label centred on its line where it fits.
func drawFigure(p *gplot.Plot, marks []mark, c draw.Canvas) {
	sty := draw.TextStyle{Color: color.Gray{0x40}, Font: vgfont.From(gplot.DefaultFont, vg.Points(8)),
		XAlign: draw.XCenter, YAlign: draw.YBottom, Handler: gplot.DefaultTextHandler}
	area0 := vplot.LegendRightArea(p, c)
	defer vplot.FitTitle(p, area0.Max.X-area0.Min.X)()
	lineH := sty.Font.Size + vg.Points(2)
	gap := vg.Points(4)
	// x of each label, from the layout without the band (the band only
	// moves the data area down).
	place := func(dc draw.Canvas) []vg.Length {
		trX, _ := p.Transforms(&dc)
		xs := make([]vg.Length, len(marks))
		for i, m := range marks {
			w := sty.Width(m.label)
			xs[i] = min(max(trX(m.step), dc.Min.X+w/2), dc.Max.X-w/2)
		}
		return xs
	}
	rows := 0
	if len(marks) > 0 {
		xs := place(vplot.DataArea(p, c))
		var ends []vg.Length // right end of the last label of every row
		for i := range marks {
			w := sty.Width(marks[i].label)
			r := 0
			for r < len(ends) && xs[i]-w/2 < ends[r]+gap {
				r++
			}
			if r == len(ends) {
				ends = append(ends, 0)
			}
			ends[r] = xs[i] + w/2
			marks[i].row = r
		}
		rows = len(ends)
	}
	band := vg.Length(rows)*lineH + vg.Points(2)
	if rows == 0 {
		band = 0
	}
	titlePad := p.Title.Padding
	if p.Title.Text != "" {
		p.Title.Padding += band
	} else {
		c.Max.Y -= band
	}
	dc := vplot.DrawLegendRight(p, c)
	p.Title.Padding = titlePad
	if rows == 0 {
		return
	}
	trX, _ := p.Transforms(&dc)
	xs := place(dc)
	line := draw.LineStyle{Color: color.Gray{0x80}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}
	for i, m := range marks {
		x := trX(m.step)
		y := dc.Max.Y + vg.Points(2) + vg.Length(m.row)*lineH
		top := dc.Max.Y
		if m.row == 0 {
			top = y
		}
		c.StrokeLine2(line, x, dc.Min.Y, x, top)
		c.FillText(sty, vg.Point{X: xs[i], Y: y}, m.label)
	}
}

// Panel is one model's measurement in a Panels figure.
type Panel struct {
	Title      string
	Excess     string // the reference of Points' excess loss (Result.Excess)
	Points     []Point
	Emergences []Emergence
}

// Panels draws one Figure panel per model (its divergences from every
// reference against the training step, log scales, its heads' emergence
// steps marked) in a grid of cols columns, row by row, and writes it to
// path (.png or .svg, atomically). The panels do not share axes: each
// model's steps and divergences set its own. When every panel has the
// same references (and excess reference), and so the same lines, their
// legend is drawn once, in columns above the grid, and the panels' axes
// take their whole width; otherwise each panel has its own legend.
func Panels(path string, panels []Panel, cols int) error {
	format, err := figureFormat(path)
	if err != nil {
		return err
	}
	w, h, fn, err := panelsFigure(panels, cols)
	if err != nil {
		return err
	}
	return vplot.SaveDrawing(path, true, format, w, h, 0, fn)
}

// sameLines reports whether every panel draws the same lines: the same
// references in the same order and the same excess reference.
func sameLines(panels []Panel) bool {
	names := func(p Panel) string {
		var b strings.Builder
		b.WriteString(p.Excess)
		if len(p.Points) > 0 {
			for _, d := range p.Points[0].KL {
				b.WriteString("\x00" + d.Reference)
			}
		}
		return b.String()
	}
	for _, p := range panels[1:] {
		if names(p) != names(panels[0]) {
			return false
		}
	}
	return true
}

// panelsFigure lays out Panels' figure: its size and drawing function.
func panelsFigure(panels []Panel, cols int) (vg.Length, vg.Length, func(draw.Canvas), error) {
	if len(panels) == 0 {
		return 0, 0, nil, fmt.Errorf("dynamics: no panels to draw")
	}
	cols = max(1, min(cols, len(panels)))
	rows := (len(panels) + cols - 1) / cols
	const cw, ch = 7 * vg.Inch, 4.6 * vg.Inch
	shared := sameLines(panels)
	fns := make([]func(draw.Canvas), len(panels))
	var entries []legendEntry // the lines drawn in any panel
	for i, p := range panels {
		_, _, fn, es, err := figure(p.Title, p.Excess, p.Points, p.Emergences, !shared)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("%s: %w", p.Title, err)
		}
		fns[i] = fn
		for j, e := range es {
			if j == len(entries) {
				entries = append(entries, e)
			} else if e.drawn && !entries[j].drawn {
				entries[j] = e
			}
		}
	}
	var drawn []legendEntry
	for _, e := range entries {
		if e.drawn {
			drawn = append(drawn, e)
		}
	}
	w := vg.Length(cols) * cw
	var band vg.Length
	var drawLegend func(draw.Canvas)
	if shared {
		band, drawLegend = legendBand(drawn, w)
	}
	return w, band + vg.Length(rows)*ch, func(c draw.Canvas) {
		if drawLegend != nil {
			drawLegend(draw.Crop(c, 0, 0, c.Max.Y-c.Min.Y-band, 0))
		}
		for i, fn := range fns {
			r, k := i/cols, i%cols
			min := vg.Point{X: c.Min.X + vg.Length(k)*cw, Y: c.Max.Y - band - vg.Length(r+1)*ch}
			fn(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: min, Max: vg.Point{X: min.X + cw, Y: min.Y + ch}}})
		}
	}, nil
}

// legendBand lays out the entries of a shared legend in as many columns of
// equal width as fit in width w (entries in reading order, row by row):
// the height of the band and its drawing function, which draws the band
// centred in the canvas it is given.
func legendBand(entries []legendEntry, w vg.Length) (vg.Length, func(draw.Canvas)) {
	if len(entries) == 0 {
		return 0, nil
	}
	one := func(es []legendEntry) gplot.Legend {
		l := gplot.NewLegend()
		l.TextStyle.Font.Size = vg.Points(12)
		l.ThumbnailWidth = vg.Points(32)
		l.Padding = vg.Points(4)
		l.Top, l.Left = true, true
		for _, e := range es {
			l.Add(e.name, e.thumb)
		}
		return l
	}
	probe := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: w}}}
	colW := vg.Length(0)
	for _, e := range entries {
		l := one([]legendEntry{e})
		colW = max(colW, l.Rectangle(probe).Size().X)
	}
	colW += vg.Points(16) // between columns
	const margin = 8 * vg.Length(1)
	ncol := max(1, min(len(entries), int((w-2*margin)/colW)))
	nrow := (len(entries) + ncol - 1) / ncol
	columns := make([]gplot.Legend, ncol)
	for k := range columns {
		var es []legendEntry
		for r := range nrow {
			if i := r*ncol + k; i < len(entries) {
				es = append(es, entries[i])
			}
		}
		columns[k] = one(es)
	}
	h := columns[0].Rectangle(probe).Size().Y + 2*margin // the first column has nrow entries
	return h, func(c draw.Canvas) {
		left := c.Min.X + (c.Max.X-c.Min.X-vg.Length(ncol)*colW)/2
		for k := range columns {
			x := left + vg.Length(k)*colW
			columns[k].Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: c.Min.Y + margin}, Max: vg.Point{X: x + colW, Y: c.Max.Y - margin}}})
		}
	}
}
