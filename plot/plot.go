// Package plot draws vomc's evaluation figures with gonum.org/v1/plot: the
// in-context loss of every method against the position in the context
// window, as in Fig. 3 of the paper, with shaded confidence bands and an
// optional stacked panel of the excess loss over the reference method.
//
// Figures are saved by file extension (.png, .svg, .pdf) with Save, which
// writes atomically (temporary file in the same directory, then rename).
package plot

import (
	"github.com/vomc/vomc/internal/fsutil"

	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/vomc/vomc/eval"
)

// Length is a figure dimension in PostScript points (1/72 inch); it is
// gonum's vg.Length, re-exported so callers need not import vg.
type Length = vg.Length

// Units for Save's width and height.
const (
	Inch       Length = vg.Inch
	Centimeter Length = vg.Centimeter
	Point      Length = 1
)

// DefaultDPI is the PNG resolution used when Options.DPI is 0: a 6×4 inch
// figure becomes 900×600 pixels.
const DefaultDPI = 150

// Options controls LossVsPosition. The zero value gives a loss-only figure
// in nats with 95% bands (as computed by eval), linear axes and no
// smoothing.
type Options struct {
	// Title is the figure title; empty means
	// "In-context loss vs position (n windows)".
	Title string
	// Bits plots losses in bits per symbol instead of nats.
	Bits bool
	// Smooth is the width, in positions, of a centred moving average
	// applied to every curve and band (≤ 1: none). Near the ends of the
	// window the average is taken over the largest symmetric neighbourhood
	// that fits, so position 1 is never smoothed. The band drawn is then the
	// moving average of the per-position bounds: a visual guide, slightly
	// wider than a confidence interval of the smoothed mean would be.
	Smooth int
	// LogX uses a logarithmic position axis (positions start at 1).
	LogX bool
	// Excess adds a second panel, stacked below and sharing the position
	// axis, with every non-reference method's excess loss over the
	// reference (paired bands) and a zero line.
	Excess bool
	// Methods selects and orders the methods drawn, by exact name; nil
	// draws all in the result's order. The excess panel never draws the
	// reference against itself.
	Methods []string
	// NoBands omits the shaded confidence bands.
	NoBands bool
	// YMin and YMax fix the loss axis range when YMax > YMin; otherwise the
	// range is automatic. ExcessYMin/ExcessYMax do the same for the excess
	// panel. Values are in the plotted unit (nats or bits).
	YMin, YMax             float64
	ExcessYMin, ExcessYMax float64
	// ExcessAll keeps the excess panel's range over every method; by
	// default (Focus) it shows the methods that matter (FocusExcess).
	// ExcessLog draws the excess on a logarithmic axis (logExcess).
	ExcessAll, ExcessLog bool
	// LegendInside draws the legend in the top-right corner of the loss
	// panel instead of in a column to the right of the plot (the default,
	// which never covers any curve). With an automatic loss range the axis
	// is then extended upwards to leave room for the legend.
	LegendInside bool
	// DPI is the PNG resolution (0 means DefaultDPI).
	DPI int
	// Replicates maps a method's name to the name of the method it
	// replicates (e.g. another training seed of the same model). A
	// replicate whose parent is drawn gets the parent's colour as a thin
	// solid line without a band or legend entry, so that the spread across
	// replicates shows without crowding the legend; the legend then has
	// one entry explaining the thin lines. A replicate whose parent is not
	// drawn is drawn as an ordinary method.
	Replicates map[string]string
}

// Figure is a rendered-on-demand figure returned by LossVsPosition. Its
// plots may be adjusted (fonts, ranges, …) before saving.
type Figure struct {
	// Loss is the loss-vs-position panel.
	Loss *gplot.Plot
	// Excess is the excess-over-reference panel, or nil.
	Excess *gplot.Plot
	// Legend lists the methods with their line styles.
	Legend gplot.Legend

	legendInside bool
	dpi          int
	// headroom: when the legend is inside and the loss range is automatic,
	// Draw raises the top of the loss axis above lossYMax so the legend sits
	// above the data.
	headroom bool
	lossYMax float64
}

// LossVsPosition builds the loss-vs-position figure of res (see Options).
// It returns an error for a nil or inconsistent result, an unknown method
// name in opts.Methods, or a non-finite mean.
func LossVsPosition(res *eval.Result, opts Options) (*Figure, error) {
	sel, err := selectMethods(res, opts)
	if err != nil {
		return nil, err
	}
	unit := "nats"
	scale := 1.0
	if opts.Bits {
		unit, scale = "bits", 1/math.Ln2
	}
	xmax := float64(max(res.N, 2))
	f := newLossFigure(res, opts, unit, xmax)
	styles, thin := methodStyles(res, sel, opts.Replicates)
	var c curves
	for s, k := range sel {
		if err := f.addMethod(&c, res, k, styles[s], thin[s], scale, opts); err != nil {
			return nil, err
		}
	}
	if slices.Contains(thin, true) {
		key, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: 2, Y: 0}})
		if err != nil {
			return nil, err
		}
		key.LineStyle = draw.LineStyle{Color: color.NRGBA{0x7F, 0x7F, 0x7F, 0xFF}, Width: vg.Points(0.6)}
		f.Legend.Add("thin: replicates (other seeds)", key)
	}
	f.Loss.Add(c.lossBands...)
	f.Loss.Add(c.lossLines...)
	if opts.YMax > opts.YMin {
		f.Loss.Y.Min, f.Loss.Y.Max = opts.YMin, opts.YMax
	} else if opts.LegendInside {
		f.headroom, f.lossYMax = true, f.Loss.Y.Max
	}
	if f.Excess != nil && opts.ExcessLog {
		logExcess(f.Excess, c.exBands, c.exLines)
	} else if f.Excess != nil {
		zero, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 0}, {X: xmax, Y: 0}})
		if err != nil {
			return nil, err
		}
		zero.LineStyle = draw.LineStyle{Color: color.NRGBA{0, 0, 0, 0xFF}, Width: vg.Points(1)}
		f.Excess.Add(zero)
		f.Excess.Add(c.exBands...)
		f.Excess.Add(c.exLines...)
		if opts.ExcessYMax > opts.ExcessYMin {
			f.Excess.Y.Min, f.Excess.Y.Max = opts.ExcessYMin, opts.ExcessYMax
		}
	}
	return f, nil
}

// selectMethods checks res and opts and returns the indices in res.Methods
// of the methods to draw: all in order when opts.Methods is nil, else
// those named, in the order named, each once. Every selected method must
// have N positions.
func selectMethods(res *eval.Result, opts Options) ([]int, error) {
	if res == nil {
		return nil, errors.New("plot: nil result")
	}
	if res.N <= 0 || len(res.Methods) == 0 || res.Reference < 0 || res.Reference >= len(res.Methods) {
		return nil, fmt.Errorf("plot: malformed result (N=%d, %d methods, reference %d)", res.N, len(res.Methods), res.Reference)
	}
	if opts.Smooth < 0 {
		return nil, fmt.Errorf("plot: negative smoothing width %d", opts.Smooth)
	}
	if opts.DPI < 0 {
		return nil, fmt.Errorf("plot: negative DPI %d", opts.DPI)
	}
	sel := make([]int, 0, len(res.Methods))
	if opts.Methods == nil {
		for k := range res.Methods {
			sel = append(sel, k)
		}
	} else {
		seen := map[int]bool{}
		for _, name := range opts.Methods {
			ks, err := MatchMethods(res, name)
			if err != nil {
				return nil, err
			}
			for _, k := range ks {
				if !seen[k] {
					seen[k] = true
					sel = append(sel, k)
				}
			}
		}
		if len(sel) == 0 {
			return nil, errors.New("plot: no methods selected")
		}
	}
	for _, k := range sel {
		m := res.Methods[k]
		if len(m.Position) != res.N || len(m.Excess) != res.N {
			return nil, fmt.Errorf("plot: method %q has %d positions, want %d", m.Name, len(m.Position), res.N)
		}
	}
	return sel, nil
}

// newLossFigure returns the figure's empty panels (the loss panel with its
// title, and the excess panel when opts.Excess, which then carries the
// position axis's labels) and legend, losses in unit, positions up to
// xmax.
func newLossFigure(res *eval.Result, opts Options, unit string, xmax float64) *Figure {
	f := &Figure{legendInside: opts.LegendInside, dpi: opts.DPI}
	if f.dpi == 0 {
		f.dpi = DefaultDPI
	}
	f.Loss = positionPanel(fmt.Sprintf("loss (%s/symbol)", unit), xmax, opts.LogX)
	title := opts.Title
	if title == "" {
		title = fmt.Sprintf("In-context loss vs position (%d windows)", res.Windows)
	}
	f.Loss.Title.Text = title
	f.Legend = gplot.NewLegend()
	f.Legend.Top = true
	f.Legend.Left = !opts.LegendInside
	f.Legend.ThumbnailWidth = vg.Points(28)
	f.Legend.TextStyle.Font.Size = vg.Points(10)
	f.Legend.Padding = vg.Points(2)
	if opts.Excess {
		f.Excess = positionPanel(fmt.Sprintf("excess (%s)", unit), xmax, opts.LogX)
		f.Excess.Title.Text = fmt.Sprintf("excess loss over %s (paired)", res.Methods[res.Reference].Name)
		f.Excess.Title.TextStyle.Font.Size = vg.Points(10)
		f.Loss.X.Label.Text = ""
		f.Loss.X.Tick.Marker = unlabelled{f.Loss.X.Tick.Marker}
	}
	return f
}

// positionPanel returns an empty panel with the position in the context
// window on x (0..xmax, or 1..xmax on a log scale), ylabel on y, round
// ticks and a light grid.
func positionPanel(ylabel string, xmax float64, logX bool) *gplot.Plot {
	p := gplot.New()
	// A linear position axis starts at 0 so that its ticks fall on round
	// numbers from the origin (0, 50, 100, …); a logarithmic one at the
	// first position.
	p.X.Min, p.X.Max = 0, xmax
	p.X.Tick.Marker = RoundTicks{}
	p.Y.Tick.Marker = RoundTicks{}
	p.Y.Label.Text = ylabel
	p.X.Label.Text = "position in context window"
	if logX {
		p.X.Min = 1
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = LogTicks{}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{0xE0}
	grid.Horizontal.Color = color.Gray{0xE0}
	p.Add(grid)
	return p
}

// methodStyles returns the style of each selected method sel[s] and
// whether it is drawn thin: the reference black, the others in the
// palette's order of selection, and a replicate of a drawn method (see
// Options.Replicates) as a thin line of its parent's colour.
func methodStyles(res *eval.Result, sel []int, replicates map[string]string) (styles []Style, thin []bool) {
	styles = make([]Style, len(sel))
	styleOf := map[string]Style{}
	thin = make([]bool, len(sel))
	drawn := map[string]bool{}
	for _, k := range sel {
		drawn[res.Methods[k].Name] = true
	}
	other := 0
	for s, k := range sel {
		name := res.Methods[k].Name
		if p, ok := replicates[name]; ok && drawn[p] && p != name && k != res.Reference {
			// A parent that is itself drawn thin has no colour of its own
			// to lend: such a chain is drawn as ordinary methods.
			if pp, ok := replicates[p]; !ok || !drawn[pp] || pp == p {
				thin[s] = true
				continue
			}
		}
		if k == res.Reference {
			styles[s] = MethodStyle(0, true)
		} else {
			styles[s] = MethodStyle(other, false)
			other++
		}
		styleOf[name] = styles[s]
	}
	for s, k := range sel {
		if thin[s] {
			p := styleOf[replicates[res.Methods[k].Name]]
			styles[s] = Style{Color: p.Color, Width: vg.Points(0.6)}
		}
	}
	return styles, thin
}

// curves collects the bands and lines of the two panels, each drawn
// bands first so that no band covers a line.
type curves struct {
	lossBands, lossLines, exBands, exLines []gplot.Plotter
}

// addMethod adds method k's loss curve (and, with an excess panel and k
// not the reference, its excess curve) to c in style sty, and its legend
// entry unless it is a thin replicate, which has no band either.
func (f *Figure) addMethod(c *curves, res *eval.Result, k int, sty Style, thin bool, scale float64, opts Options) error {
	m := res.Methods[k]
	band, line, err := series(m.Position, scale, opts.Smooth, sty)
	if err != nil {
		return fmt.Errorf("plot: method %q: %w", m.Name, err)
	}
	if thin {
		band = nil
	}
	if band != nil && !opts.NoBands {
		c.lossBands = append(c.lossBands, band)
	}
	c.lossLines = append(c.lossLines, line)
	switch {
	case thin:
	case band != nil && !opts.NoBands:
		f.Legend.Add(m.Name, band, line)
	default:
		f.Legend.Add(m.Name, line)
	}
	if f.Excess != nil && k != res.Reference {
		band, line, err := series(m.Excess, scale, opts.Smooth, sty)
		if err != nil {
			return fmt.Errorf("plot: method %q excess: %w", m.Name, err)
		}
		if band != nil && !opts.NoBands && !thin {
			c.exBands = append(c.exBands, band)
		}
		c.exLines = append(c.exLines, line)
	}
	return nil
}

// series turns per-position intervals into a band polygon (nil when the
// bounds are undefined, e.g. a single window) and a mean line.
func series(ivs []eval.Interval, scale float64, smooth int, sty Style) (*plotter.Polygon, *plotter.Line, error) {
	n := len(ivs)
	mean := make([]float64, n)
	lo := make([]float64, n)
	hi := make([]float64, n)
	bands := true
	for i, iv := range ivs {
		mean[i], lo[i], hi[i] = iv.Mean*scale, iv.Lo*scale, iv.Hi*scale
		if math.IsNaN(mean[i]) || math.IsInf(mean[i], 0) {
			return nil, nil, fmt.Errorf("non-finite mean %v at position %d", iv.Mean, i+1)
		}
		if math.IsNaN(lo[i]) || math.IsNaN(hi[i]) || math.IsInf(lo[i], 0) || math.IsInf(hi[i], 0) {
			bands = false
		}
	}
	mean = MovingAverage(mean, smooth)
	xy := make(plotter.XYs, n)
	for i := range xy {
		xy[i] = plotter.XY{X: float64(i + 1), Y: mean[i]}
	}
	line, err := plotter.NewLine(xy)
	if err != nil {
		return nil, nil, err
	}
	width := sty.Width
	if width == 0 {
		width = vg.Points(1.4)
	}
	line.LineStyle = draw.LineStyle{Color: sty.Color, Width: width, Dashes: sty.Dashes}
	if !bands {
		return nil, line, nil
	}
	lo, hi = MovingAverage(lo, smooth), MovingAverage(hi, smooth)
	ring := make(plotter.XYs, 0, 2*n)
	for i := range n {
		ring = append(ring, plotter.XY{X: float64(i + 1), Y: hi[i]})
	}
	for i := n - 1; i >= 0; i-- {
		ring = append(ring, plotter.XY{X: float64(i + 1), Y: lo[i]})
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil, nil, err
	}
	r, g, b, _ := sty.Color.RGBA()
	poly.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 0x38}
	poly.LineStyle.Width = 0
	return poly, line, nil
}

// MovingAverage returns the centred moving average of v with window width
// w: element i is the mean of v[i−h..i+h] with h = min(⌊w/2⌋, i, len−1−i),
// so the window shrinks symmetrically at the ends and the first and last
// elements are unchanged. w ≤ 1 returns a copy of v.
func MovingAverage(v []float64, w int) []float64 {
	out := make([]float64, len(v))
	if w <= 1 {
		copy(out, v)
		return out
	}
	prefix := make([]float64, len(v)+1)
	for i, x := range v {
		prefix[i+1] = prefix[i] + x
	}
	half := w / 2
	for i := range v {
		h := min(half, i, len(v)-1-i)
		out[i] = (prefix[i+h+1] - prefix[i-h]) / float64(2*h+1)
	}
	return out
}

// Draw draws the figure onto c: the legend column on the right (unless
// LegendInside), the loss panel on top and, if present, the excess panel
// below it (taking 35% of the height), with their data areas aligned.
func (f *Figure) Draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	area := c
	pad := vg.Points(8)
	var legendArea draw.Canvas
	outside := !f.legendInside
	if outside {
		r := f.Legend.Rectangle(c)
		lw := r.Max.X - r.Min.X
		legendArea = draw.Crop(c, c.Max.X-c.Min.X-lw-pad, -pad, 0, 0)
		area = draw.Crop(c, 0, -(lw + 2*pad), 0, 0)
	}
	area = draw.Crop(area, pad/2, -pad/2, pad/2, -pad/2)
	// Titles too wide for the panels are broken onto two lines (or
	// shrunk) rather than run off the figure.
	defer FitTitle(f.Loss, area.Max.X-area.Min.X)()
	if f.Excess != nil {
		defer FitTitle(f.Excess, area.Max.X-area.Min.X)()
	}

	top := area
	var bottom draw.Canvas
	if f.Excess != nil {
		H := area.Max.Y - area.Min.Y
		split := func(hb vg.Length) (draw.Canvas, draw.Canvas) {
			return draw.Crop(area, 0, 0, hb+pad, 0), draw.Crop(area, 0, 0, 0, -(H - hb))
		}
		// Size the panels so that the loss data area is twice as tall as
		// the excess data area, whatever the fonts and axes take.
		top, bottom = split(0.35 * H)
		height := func(c draw.Canvas) vg.Length { return c.Max.Y - c.Min.Y }
		oT := height(top) - height(f.Loss.DataCanvas(top))
		oB := height(bottom) - height(f.Excess.DataCanvas(bottom))
		if dB := (H - pad - oT - oB) / 3; dB > 0 {
			top, bottom = split(oB + dB)
		}
		fitLabel(f.Excess, bottom)
	}
	fitLabel(f.Loss, top)
	if f.Excess != nil {
		// Align the data areas horizontally.
		dt, db := f.Loss.DataCanvas(top), f.Excess.DataCanvas(bottom)
		left := max(dt.Min.X-top.Min.X, db.Min.X-bottom.Min.X)
		right := max(top.Max.X-dt.Max.X, bottom.Max.X-db.Max.X)
		top = draw.Crop(top, left-(dt.Min.X-top.Min.X), -(right - (top.Max.X - dt.Max.X)), 0, 0)
		bottom = draw.Crop(bottom, left-(db.Min.X-bottom.Min.X), -(right - (bottom.Max.X - db.Max.X)), 0, 0)
	}
	if outside {
		f.Loss.Legend = gplot.NewLegend() // no legend inside
	} else {
		f.Loss.Legend = f.Legend
		if f.headroom {
			// Extend the axis so that the top lh of the data area is free.
			f.Loss.Y.Max = f.lossYMax
			dc := f.Loss.DataCanvas(top)
			H := dc.Max.Y - dc.Min.Y
			r := f.Legend.Rectangle(dc)
			lh := r.Max.Y - r.Min.Y + pad
			if span := f.lossYMax - f.Loss.Y.Min; lh < 0.6*H && span > 0 {
				f.Loss.Y.Max = f.lossYMax + span*float64(lh/(H-lh))
			}
		}
	}
	f.Loss.Draw(top)
	if f.Excess != nil {
		f.Excess.Draw(bottom)
	}
	if outside {
		dt := f.Loss.DataCanvas(top)
		f.Legend.Draw(draw.Crop(legendArea, 0, 0, dt.Min.Y-legendArea.Min.Y, -(legendArea.Max.Y - dt.Max.Y)))
	}
}

// unlabelled wraps a Ticker and blanks its labels: the loss panel shares
// its position axis with the excess panel below, which carries the labels.
type unlabelled struct{ gplot.Ticker }

func (u unlabelled) Ticks(min, max float64) []gplot.Tick {
	ts := u.Ticker.Ticks(min, max)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// fitLabel shrinks the font of p's y-axis label (down to 6 pt, then drops
// the label) so that, rotated, it fits in 90% of the height of c; gonum
// would otherwise produce an inverted data area.
func fitLabel(p *gplot.Plot, c draw.Canvas) {
	if p.Y.Label.Text == "" {
		return
	}
	avail := 0.9 * (c.Max.Y - c.Min.Y)
	if p.Title.Text != "" {
		avail -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y
	}
	sty := &p.Y.Label.TextStyle
	w := sty.Rectangle(p.Y.Label.Text).Size().X
	if w <= avail {
		return
	}
	size := sty.Font.Size * avail / w
	if size < vg.Points(6) {
		p.Y.Label.Text = ""
		return
	}
	sty.Font.Size = size
}

// Render writes the figure in the given format ("png", "svg" or "pdf")
// with the given size (in points; use Inch or Centimeter).
// PNG is rendered at the figure's DPI, so its pixel size is
// round(width/Inch·DPI) × round(height/Inch·DPI).
func (f *Figure) Render(w io.Writer, format string, width, height Length) (err error) {
	if f == nil || f.Loss == nil {
		return errors.New("plot: nil figure")
	}
	if !(width > 0 && height > 0) || math.IsInf(float64(width), 0) || math.IsInf(float64(height), 0) {
		return fmt.Errorf("plot: invalid size %v × %v", width, height)
	}
	cw := NewCanvas(format, width, height, f.dpi)
	if cw == nil {
		return fmt.Errorf("plot: unsupported format %q (want png, svg or pdf)", format)
	}
	// gonum/plot panics on some degenerate inputs; report them as errors.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: rendering failed: %v", r)
		}
	}()
	f.Draw(draw.New(cw))
	_, err = cw.WriteTo(w)
	return err
}

// NewCanvas returns an empty canvas of the given size for the format
// "png" (at dpi dots per inch), "svg" or "pdf", in any case, or nil for
// any other format; draw on it with draw.New and write it with WriteTo.
// Every figure file of vomc is made on one of these.
func NewCanvas(format string, width, height Length, dpi int) vg.CanvasWriterTo {
	switch strings.ToLower(format) {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi))}
	case "svg":
		return vgsvg.New(width, height)
	case "pdf":
		return vgpdf.New(width, height)
	}
	return nil
}

// Save renders the figure to path, choosing the format from the extension
// (.png, .svg or .pdf, case-insensitive), and writes it atomically: the
// image goes to a temporary file in the same directory which is then
// renamed over path, so readers never see a partial file.
func (f *Figure) Save(path string, width, height Length) error {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var buf bytes.Buffer
	if err := f.Render(&buf, ext, width, height); err != nil {
		return err
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// SavePlot renders the gonum plot p at w × h in the format given by
// format ("png", "svg" or "pdf") and writes it to path atomically
// (fsutil.WriteFile: an existing path is an error unless force).
func SavePlot(p *gplot.Plot, w, h vg.Length, format, path string, force bool) error {
	wt, err := p.WriterTo(w, h, format)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(path, force, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}

// WriteFileAtomic writes data to path atomically (see fsutil.WriteAtomic).
func WriteFileAtomic(path string, data []byte) error {
	if err := fsutil.WriteAtomic(path, true, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}); err != nil {
		return fmt.Errorf("plot: writing %s: %w", path, err)
	}
	return nil
}
