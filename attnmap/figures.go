package attnmap

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	vgfont "gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/brewer"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/plot"
)

// DefaultDPI is the PNG resolution when Options.DPI is 0.
const DefaultDPI = 150

// Options controls Heatmaps. The zero value gives 2.6-inch panels, colour
// = weight^0.5, DefaultDPI and, for maps of more than 128 positions, zoom
// panels of the last 64 queries and keys (see Zoom).
type Options struct {
	// Title is drawn above the grid (none when empty).
	Title string
	// Labels, when non-nil, adds a second title line under "layer l head
	// h" of head maps[l][h] (e.g. its ScoreHeads label); missing or empty
	// entries add nothing.
	Labels [][]string
	// Gamma maps a weight w ∈ [0, 1] to the colour scale as w^Gamma (0
	// means 0.5: a square-root scale, which shows the small weights of
	// heads that spread their attention over many positions).
	Gamma float64
	// Panel is the side of one heatmap panel (0 means 2.6 inches).
	Panel vg.Length
	// DPI is the PNG resolution (0 means DefaultDPI).
	DPI int
	// Zoom chooses the zoom panels drawn under the full maps (by default,
	// for maps of more than 128 positions, the last 64 queries and keys).
	Zoom Zoom
}

// Zoom is the window of a head's map that Heatmaps draws again, enlarged,
// in a zoom panel under the full map: queries QueryEnd−Size … QueryEnd−1
// (the rows) and keys KeyEnd−Size … KeyEnd−1 (the columns), drawn as large
// as the full map so that every cell is several pixels wide, with the
// range in the panel's title; the full map marks the window with a
// rectangle. A full map of T positions gets about panel/T pixels per
// position (a 512-position map in a 2.6-inch panel: under one pixel), so
// thin stripes and speckles of weight fade there and show in the zoom.
type Zoom struct {
	// Size is the side of the window in positions: 0 means 64 for maps of
	// more than 128 positions and no zoom panels for smaller maps (drawn
	// at two or more pixels per position already); a negative Size means
	// no zoom panels.
	Size int
	// QueryEnd is one past the window's last query (0 means T: the
	// window ends at the last query) and KeyEnd one past its last key (0
	// means QueryEnd: the window sits on the diagonal). The zero Zoom is
	// thus the last 64 queries and their last 64 keys.
	QueryEnd, KeyEnd int
}

// DefaultZoom is the side of the zoom window when Zoom.Size is 0, and
// ZoomFrom the number of positions above which the zoom panels are drawn
// by default.
const (
	DefaultZoom = 64
	ZoomFrom    = 128
)

// window resolves z for T×T maps: the first query and key and the side of
// the window, or n = 0 for no zoom panels.
func (z Zoom) window(T int) (q0, k0, n int, err error) {
	n = z.Size
	switch {
	case n < 0, n == 0 && T <= ZoomFrom:
		return 0, 0, 0, nil
	case n == 0:
		n = DefaultZoom
	}
	qe, ke := z.QueryEnd, z.KeyEnd
	if qe == 0 {
		qe = T
	}
	if ke == 0 {
		ke = qe
	}
	if n > T || qe > T || ke > T || qe < n || ke < n {
		return 0, 0, 0, fmt.Errorf("attnmap: zoom window of %d positions ending at query %d and key %d is not inside the %d×%d maps", n, qe, ke, T, T)
	}
	return qe - n, ke - n, n, nil
}

// colour scale: white, then ColorBrewer's sequential YlGnBu
var heatColors = func() []color.Color {
	p, err := brewer.GetPalette(brewer.TypeSequential, "YlGnBu", 9)
	if err != nil {
		panic(err)
	}
	return append([]color.Color{color.White}, p.Colors()...)
}()

// maskColor fills the causal zeros above the diagonal.
var maskColor = color.NRGBA{0xF0, 0xF0, 0xF0, 0xFF}

// heatColor returns the colour of v ∈ [0, 1] (clamped), linearly
// interpolated between heatColors.
func heatColor(v float64) color.NRGBA {
	if !(v > 0) {
		v = 0
	}
	v = min(v, 1)
	f := v * float64(len(heatColors)-1)
	i := min(int(f), len(heatColors)-2)
	t := f - float64(i)
	r0, g0, b0, _ := heatColors[i].RGBA()
	r1, g1, b1, _ := heatColors[i+1].RGBA()
	mix := func(a, b uint32) uint8 { return uint8((float64(a)*(1-t) + float64(b)*t) / 257) }
	return color.NRGBA{mix(r0, r1), mix(g0, g1), mix(b0, b1), 0xFF}
}

// heatImage renders the n×n window of a T×T map from query q0 and key k0
// (the whole map: 0, 0, T) at s×s pixels per cell (nearest neighbour, so
// cells stay sharp however the renderer scales the image).
func heatImage(a []float32, T, q0, k0, n, s int, gamma float64) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, n*s, n*s))
	for r := range n {
		for col := range n {
			i, j := q0+r, k0+col
			c := maskColor
			if j <= i {
				c = heatColor(math.Pow(math.Max(float64(a[i*T+j]), 0), gamma))
			}
			for y := r * s; y < (r+1)*s; y++ {
				for x := col * s; x < (col+1)*s; x++ {
					img.SetNRGBA(x, y, c)
				}
			}
		}
	}
	return img
}

// imageScale is the number of image pixels per cell that draws n cells
// in a panel of side panel at about 2 image pixels per output pixel (at
// most 2048 image pixels a side).
func imageScale(panel vg.Length, dpi, n int) int {
	s := max(1, int(math.Ceil(2*float64(panel)/vg.Inch.Points()*float64(dpi)/float64(n))))
	if n*s > 2048 {
		s = max(1, 2048/n)
	}
	return s
}

// zoomColor outlines the zoom window on the full maps: Okabe–Ito's
// vermillion, which the white–yellow–green–blue colour scale lacks.
var zoomColor = color.NRGBA{0xD5, 0x5E, 0x00, 0xFF}

// posRange writes the positions lo … hi as "lo–hi".
func posRange(lo, hi int) string { return fmt.Sprintf("%d–%d", lo, hi) }

// negTicks labels an axis whose data coordinate is −position (so that
// position 0 is at the top, as in a matrix): ticks of the positions in
// [−max, −min] placed at their negated values.
type negTicks struct{}

// Ticks implements plot.Ticker.
func (negTicks) Ticks(lo, hi float64) []gplot.Tick {
	ts := plot.RoundTicks{Max: 6}.Ticks(-hi, -lo)
	for i := range ts {
		v := ts[i].Value
		ts[i].Value = -v
		if ts[i].Label != "" {
			ts[i].Label = trimNum(v)
		}
	}
	return ts
}

// trimNum formats an axis value without trailing zeros.
func trimNum(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

// Heatmaps draws every head's attention map (maps[l][h], T×T row-major,
// as from transformer.Model.AttentionMaps) in one figure: a grid with a
// row per layer and a column per head, each panel a heatmap with the key
// position j on the x axis and the query position i on the y axis (i = 0
// at the top, as a matrix, so stripes below the diagonal attend a fixed
// distance back), titled "layer l head h" (1-based), with a shared colour
// bar. Under each layer's row, unless opts.Zoom turns them off (they are
// on by default for T > 128), a row of zoom panels draws a window of each
// head's map (by default its last 64 queries and keys) at the size of the
// full map, titled with the window's range and outlined on the full map.
// The format follows path's extension (.png, .svg or .pdf); the file is
// written atomically (temporary file, then rename), replacing any
// existing one.
func Heatmaps(path string, maps [][][]float32, opts Options) error {
	f, err := heatmapFigure(maps, opts)
	if err != nil {
		return err
	}
	return render(path, f.w, f.h, f.dpi, f.draw)
}

// figure is a figure ready to be drawn on a w × h canvas.
type figure struct {
	w, h vg.Length
	dpi  int
	draw func(draw.Canvas)
	// dataAreas, when set, returns the data areas of the figure's grid of
	// panels as draw draws them on c, row by row (for Heatmaps: a layer's
	// full maps, then its zoom panels when drawn), nil where no panel.
	dataAreas func(c draw.Canvas) [][]*draw.Canvas
}

// heatmapFigure lays out Heatmaps' figure.
func heatmapFigure(maps [][][]float32, opts Options) (*figure, error) {
	cols, T, err := mapGrid(maps)
	if err != nil {
		return nil, err
	}
	gamma, panel, dpi, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	q0, k0, zn, err := opts.Zoom.window(T)
	if err != nil {
		return nil, err
	}
	g := newHeatmapGrid(len(maps), cols, T, panel, dpi, gamma, zn > 0)
	zoomRange := "queries " + posRange(q0, q0+zn-1) + ", keys " + posRange(k0, k0+zn-1)
	if q0 == k0 {
		zoomRange = "queries and keys " + posRange(q0, q0+zn-1)
	}
	for l, heads := range maps {
		if err := g.addLayer(l, heads, opts.Labels, q0, k0, zn, zoomRange); err != nil {
			return nil, err
		}
	}
	titleSty := g.titleSty
	titleSty.Font.Size = vg.Points(12)
	title, titleSize := plot.FitText(opts.Title, titleSty, g.W-vg.Points(8), 2, vg.Points(10))
	titleSty.Font.Size = titleSize
	titleH := vg.Length(0)
	if title != "" {
		titleH = titleSty.Height(title) + vg.Points(10)
	}
	H := titleH
	for _, n := range g.rowLines {
		H += panel + vg.Length(n)*g.titleSty.Font.Size + vg.Points(6)
	}
	return &figure{w: g.W, h: H, dpi: dpi,
		dataAreas: func(c draw.Canvas) [][]*draw.Canvas { return g.dataAreas(c, titleH) },
		draw: func(c draw.Canvas) {
			c.SetColor(color.White)
			c.Fill(c.Rectangle.Path())
			if title != "" {
				c.FillText(titleSty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - vg.Points(4)}, title)
			}
			g.draw(c, titleH)
		}}, nil
}

// mapGrid checks that maps holds at least one head and that every map is
// T×T for one T > 0, and returns the number of columns of the figure's
// grid (the most heads of a layer) and T.
func mapGrid(maps [][][]float32) (cols, T int, err error) {
	if len(maps) == 0 {
		return 0, 0, errors.New("attnmap: no attention maps")
	}
	T = -1
	for l, heads := range maps {
		cols = max(cols, len(heads))
		for h, a := range heads {
			t := int(math.Round(math.Sqrt(float64(len(a)))))
			if t*t != len(a) || t == 0 || (T >= 0 && t != T) {
				return 0, 0, fmt.Errorf("attnmap: layer %d head %d: a map of %d entries, want T×T with one T for all", l+1, h+1, len(a))
			}
			T = t
		}
	}
	if cols == 0 {
		return 0, 0, errors.New("attnmap: no heads")
	}
	return cols, T, nil
}

// resolve returns the colour exponent, the panel side and the DPI of
// opts with their defaults, checked.
func (opts Options) resolve() (gamma float64, panel vg.Length, dpi int, err error) {
	gamma = opts.Gamma
	if gamma == 0 {
		gamma = 0.5
	}
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		return 0, 0, 0, fmt.Errorf("attnmap: invalid gamma %v", opts.Gamma)
	}
	panel = opts.Panel
	if panel == 0 {
		panel = 2.6 * vg.Inch
	}
	if !(panel > 0) {
		return 0, 0, 0, fmt.Errorf("attnmap: invalid panel size %v", opts.Panel)
	}
	dpi = opts.DPI
	if dpi == 0 {
		dpi = DefaultDPI
	}
	if dpi < 0 {
		return 0, 0, 0, fmt.Errorf("attnmap: negative DPI %d", dpi)
	}
	return gamma, panel, dpi, nil
}

// The heatmap grid's padding in points: between the columns, and at the
// grid's left and right.
const heatPadX, heatPadSide = 6, 4

// heatmapGrid is the grid of Heatmaps' panels: a row per layer (and one
// of zoom panels under it when zoomed), a column per head, and the colour
// bar on the right. The panels' titles ("layer l head h" and the head's
// label) are wrapped to the width of a panel, and every row is made
// taller by its titles' lines, so that the heatmaps stay square and no
// title runs into its neighbour's.
type heatmapGrid struct {
	T, cols  int
	perLayer int // rows per layer: 1, or 2 with zoom panels
	panel    vg.Length
	dpi      int
	gamma    float64
	W, barW  vg.Length // the figure's width and the colour bar's
	tileW    vg.Length // the width of a panel's tile
	titleSty draw.TextStyle
	plots    [][]*gplot.Plot // [row][head], nil where a layer has fewer heads
	rowLines []int           // the most title lines of each row's panels
}

// newHeatmapGrid returns the empty grid for layers × cols maps of T×T,
// each drawn in a panel of side panel.
func newHeatmapGrid(layers, cols, T int, panel vg.Length, dpi int, gamma float64, zoom bool) *heatmapGrid {
	g := &heatmapGrid{T: T, cols: cols, perLayer: 1, panel: panel, dpi: dpi, gamma: gamma, barW: 0.9 * vg.Inch}
	g.W = vg.Length(cols)*panel + g.barW
	g.tileW = (g.W - g.barW - 2*vg.Points(heatPadSide) - vg.Points(heatPadX)*vg.Length(cols-1)) / vg.Length(cols)
	g.titleSty = draw.TextStyle{Color: color.Black, Font: vgfont.From(gplot.DefaultFont, vg.Points(10)),
		XAlign: draw.XCenter, YAlign: draw.YTop, Handler: gplot.DefaultTextHandler}
	if zoom {
		g.perLayer = 2
	}
	g.plots = make([][]*gplot.Plot, g.perLayer*layers)
	g.rowLines = make([]int, len(g.plots))
	return g
}

// addLayer adds the panels of layer l (0-based): each head's full map,
// titled with its label when labels has one, and, when zn > 0, its zoom
// panel of the zn×zn window from query q0 and key k0 (whose range
// zoomRange names), the window outlined on the full map.
func (g *heatmapGrid) addLayer(l int, heads [][]float32, labels [][]string, q0, k0, zn int, zoomRange string) error {
	row := g.perLayer * l
	g.plots[row] = make([]*gplot.Plot, g.cols)
	if zn > 0 {
		g.plots[row+1] = make([]*gplot.Plot, g.cols)
	}
	for h, a := range heads {
		title := fmt.Sprintf("layer %d head %d", l+1, h+1)
		if l < len(labels) && h < len(labels[l]) && labels[l][h] != "" {
			title += "\n" + labels[l][h]
		}
		p := g.panelPlot(a, 0, 0, g.T, title, row)
		g.plots[row][h] = p
		if zn == 0 {
			continue
		}
		x0, x1 := float64(k0)-0.5, float64(k0+zn)-0.5
		y0, y1 := -float64(q0+zn)+0.5, -float64(q0)+0.5
		box, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y0}, {X: x0, Y: y1}, {X: x1, Y: y1}, {X: x1, Y: y0}, {X: x0, Y: y0}})
		if err != nil {
			return err
		}
		box.LineStyle = draw.LineStyle{Color: zoomColor, Width: vg.Points(1)}
		p.Add(box)
		g.plots[row+1][h] = g.panelPlot(a, q0, k0, zn, fmt.Sprintf("layer %d head %d, zoom:\n%s", l+1, h+1, zoomRange), row+1)
	}
	return nil
}

// panelPlot is a heatmap panel of the window from (q0, k0) of side n of
// the map a, titled title, in grid row row: keys on x, queries on y
// (plotted at −position, so that query 0 is at the top).
func (g *heatmapGrid) panelPlot(a []float32, q0, k0, n int, title string, row int) *gplot.Plot {
	p := gplot.New()
	p.Title.Text, p.Title.TextStyle.Font.Size = plot.FitText(title, g.titleSty, g.tileW-vg.Points(4), 4, vg.Points(8))
	g.rowLines[row] = max(g.rowLines[row], strings.Count(p.Title.Text, "\n")+1)
	p.Title.Padding = vg.Points(3)
	p.X.Label.Text = "key position"
	p.Y.Label.Text = "query position"
	for _, ax := range []*gplot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = vg.Points(9.5)
		ax.Tick.Label.Font.Size = vg.Points(9)
	}
	p.X.Tick.Marker = plot.RoundTicks{Max: 6}
	p.Y.Tick.Marker = negTicks{}
	x0, x1 := float64(k0)-0.5, float64(k0+n)-0.5
	y0, y1 := -float64(q0+n)+0.5, -float64(q0)+0.5
	p.Add(plotter.NewImage(heatImage(a, g.T, q0, k0, n, imageScale(g.panel, g.dpi, n), g.gamma), x0, y0, x1, y1))
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min, p.Y.Max = y0, y1
	return p
}

// layout returns the canvases of the grid's panels on c, below a title
// band of height titleH and left of the colour bar, aligned.
func (g *heatmapGrid) layout(c draw.Canvas, titleH vg.Length) [][]draw.Canvas {
	grid := draw.Crop(c, 0, -g.barW, 0, -titleH)
	tiles := draw.Tiles{Rows: len(g.plots), Cols: g.cols, PadX: vg.Points(heatPadX), PadY: vg.Points(10),
		PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(heatPadSide), PadRight: vg.Points(heatPadSide)}
	return gplot.Align(g.plots, tiles, grid)
}

// dataAreas returns the data areas of the grid's panels as draw draws
// them on c (see figure.dataAreas).
func (g *heatmapGrid) dataAreas(c draw.Canvas, titleH vg.Length) [][]*draw.Canvas {
	canvases := g.layout(c, titleH)
	out := make([][]*draw.Canvas, len(g.plots))
	for r := range g.plots {
		out[r] = make([]*draw.Canvas, g.cols)
		for h, p := range g.plots[r] {
			if p != nil {
				dc := p.DataCanvas(canvases[r][h])
				out[r][h] = &dc
			}
		}
	}
	return out
}

// draw draws the panels on c under a title band of height titleH, and the
// colour bar beside the first layer's panels, its data area level with
// theirs.
func (g *heatmapGrid) draw(c draw.Canvas, titleH vg.Length) {
	canvases := g.layout(c, titleH)
	for l := range g.plots {
		for h, p := range g.plots[l] {
			if p != nil {
				p.Draw(canvases[l][h])
			}
		}
	}
	top := g.plots[0][0].DataCanvas(canvases[0][0])
	bar := colorBar(g.gamma, top.Max.Y-top.Min.Y)
	bc := draw.Crop(c, c.Max.X-c.Min.X-g.barW+vg.Points(6), -vg.Points(4), top.Min.Y-c.Min.Y, -(c.Max.Y - top.Max.Y))
	bar.Draw(bc)
}

// colorBar is a narrow plot with the colour scale; the axis is linear in
// the colour value v = w^gamma and its ticks are labelled with the weight
// w, as many of 0, 0.001, 0.01, … 1 as fit one above another in height.
func colorBar(gamma float64, height vg.Length) *gplot.Plot {
	const n = 256
	img := image.NewNRGBA(image.Rect(0, 0, 1, n))
	for r := range n {
		img.SetNRGBA(0, r, heatColor(1-(float64(r)+0.5)/n))
	}
	p := gplot.New()
	p.Add(plotter.NewImage(img, 0, 0, 1, 1))
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.HideX()
	p.Y.Label.Text = "attention weight"
	p.Y.Label.TextStyle.Font.Size = vg.Points(9.5)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	gap := 0.04
	if height > 0 {
		gap = max(gap, float64(1.2*p.Y.Tick.Label.Font.Size/height))
	}
	var ticks gplot.ConstantTicks
	last := math.Inf(-1)
	for _, w := range []float64{0, 0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1} {
		v := math.Pow(w, gamma)
		if v-last < gap || (w < 1 && 1-v < gap) { // too close to the previous label, or to 1
			continue
		}
		ticks = append(ticks, gplot.Tick{Value: v, Label: trimNum(w)})
		last = v
	}
	p.Y.Tick.Marker = ticks
	return p
}

// render draws a figure of the given size and writes it atomically to
// path in the format of its extension.
func render(path string, w, h vg.Length, dpi int, fn func(draw.Canvas)) (err error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	cw := plot.NewCanvas(ext, w, h, dpi)
	if cw == nil {
		return fmt.Errorf("attnmap: %s: unsupported format %q (want .png, .svg or .pdf)", path, ext)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("attnmap: rendering %s failed: %v", path, r)
		}
	}()
	fn(draw.New(cw))
	var buf bytes.Buffer
	if _, err := cw.WriteTo(&buf); err != nil {
		return err
	}
	return fsutil.WriteBytes(path, true, buf.Bytes())
}
