// Package plottest checks that a figure is legible: it renders a drawing
// through a recording canvas, computes the box of every string drawn (from
// the font's advance widths and size, through the canvas transforms, so
// rotated axis labels are boxed where they land) and of every image, and
// reports strings that overlap one another, overlap an image, or leave the
// canvas (Check). The canvas also records every stroke and fill with its
// colour, width and dash pattern (RecordOps), from which CheckLegend finds
// the legend entries and reports two drawn alike, or sharing a colour.
//
// A string's box spans its advance width horizontally and, vertically,
// from 0.2 em below its baseline to 0.75 em above it: the extent of
// digits, capitals, parentheses and descenders, so that the lines of a
// multi-line text (1 em apart) do not count as overlapping while two
// strings drawn over each other do.
package plottest

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Box is a string (Image false) or an image (Image true) drawn on the
// canvas, with its axis-aligned bounding box in canvas coordinates (points,
// origin at the bottom left).
type Box struct {
	Text     string
	Size     vg.Length // font size of a string
	Min, Max vg.Point
	Image    bool
}

func (b Box) String() string {
	what := fmt.Sprintf("%q (%.1fpt)", b.Text, float64(b.Size))
	if b.Image {
		what = "image"
	}
	return fmt.Sprintf("%s at (%.1f,%.1f)-(%.1f,%.1f)", what, float64(b.Min.X), float64(b.Min.Y), float64(b.Max.X), float64(b.Max.Y))
}

// affine is the transform (x, y) ↦ (a·x + c·y + e, b·x + d·y + f).
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) mul(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(p vg.Point) vg.Point {
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.c*y + m.e), Y: vg.Length(m.b*x + m.d*y + m.f)}
}

// box maps the rectangle r and returns the bounding box of its image.
func (m affine) box(r vg.Rectangle) (vg.Point, vg.Point) {
	lo := vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}
	hi := vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}
	for _, p := range []vg.Point{r.Min, r.Max, {X: r.Min.X, Y: r.Max.Y}, {X: r.Max.X, Y: r.Min.Y}} {
		q := m.apply(p)
		lo.X, lo.Y = min(lo.X, q.X), min(lo.Y, q.Y)
		hi.X, hi.Y = max(hi.X, q.X), max(hi.Y, q.Y)
	}
	return lo, hi
}

// state is the graphics state that Push saves and Pop restores.
type state struct {
	m      affine
	color  color.NRGBA
	width  vg.Length
	dashes []vg.Length
}

// canvas is a vg.CanvasSizer that records the boxes of strings and images
// and the marks (strokes and fills) with their styles, in drawing order.
type canvas struct {
	w, h vg.Length
	state
	stack []state
	ops   []Op
}

func (c *canvas) Size() (vg.Length, vg.Length) { return c.w, c.h }
func (c *canvas) SetLineWidth(w vg.Length)     { c.width = w }
func (c *canvas) SetLineDash(d []vg.Length, _ vg.Length) {
	c.dashes = append([]vg.Length(nil), d...)
}
func (c *canvas) SetColor(col color.Color) {
	if col == nil {
		col = color.Black
	}
	c.color = color.NRGBAModel.Convert(col).(color.NRGBA)
}
func (c *canvas) Stroke(p vg.Path) { c.mark(p, false) }
func (c *canvas) Fill(p vg.Path)   { c.mark(p, true) }
func (c *canvas) Push()            { c.stack = append(c.stack, c.state) }

// mark records the path p stroked or filled in the current style, unless
// it is invisible (a stroke of width 0, as vg's canvases skip, or a fully
// transparent colour).
func (c *canvas) mark(p vg.Path, fill bool) {
	if (!fill && c.width <= 0) || c.color.A == 0 {
		return
	}
	lo := vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}
	hi := vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}
	n := 0
	add := func(r vg.Rectangle) {
		a, b := c.m.box(r)
		lo.X, lo.Y = min(lo.X, a.X), min(lo.Y, a.Y)
		hi.X, hi.Y = max(hi.X, b.X), max(hi.Y, b.Y)
		n++
	}
	for _, cp := range p {
		switch cp.Type {
		case vg.MoveComp, vg.LineComp:
			add(vg.Rectangle{Min: cp.Pos, Max: cp.Pos})
		case vg.CurveComp:
			add(vg.Rectangle{Min: cp.Pos, Max: cp.Pos})
			for _, q := range cp.Control {
				add(vg.Rectangle{Min: q, Max: q})
			}
		case vg.ArcComp:
			r := cp.Radius
			add(vg.Rectangle{Min: vg.Point{X: cp.Pos.X - r, Y: cp.Pos.Y - r}, Max: vg.Point{X: cp.Pos.X + r, Y: cp.Pos.Y + r}})
		}
	}
	if n == 0 {
		return
	}
	var dashes []vg.Length
	if len(c.dashes) > 0 {
		dashes = c.dashes
	}
	m := Mark{Fill: fill, Color: c.color, Dashes: dashes, Min: lo, Max: hi, Points: n}
	if !fill {
		m.Width = c.width
	}
	c.ops = append(c.ops, Op{Mark: &m})
}

func (c *canvas) Translate(p vg.Point) {
	c.m = c.m.mul(affine{a: 1, d: 1, e: float64(p.X), f: float64(p.Y)})
}
func (c *canvas) Scale(x, y float64) { c.m = c.m.mul(affine{a: x, d: y}) }
func (c *canvas) Rotate(r float64) {
	s, co := math.Sincos(r)
	c.m = c.m.mul(affine{a: co, b: s, c: -s, d: co})
}

func (c *canvas) Pop() {
	if n := len(c.stack); n > 0 {
		c.state, c.stack = c.stack[n-1], c.stack[:n-1]
	}
}

func (c *canvas) FillString(f font.Face, pt vg.Point, text string) {
	if strings.TrimSpace(text) == "" || f.Font.Size <= 0 {
		return
	}
	size := f.Font.Size
	r := vg.Rectangle{
		Min: vg.Point{X: pt.X, Y: pt.Y - 0.2*size},
		Max: vg.Point{X: pt.X + f.Width(text), Y: pt.Y + 0.75*size},
	}
	lo, hi := c.m.box(r)
	c.ops = append(c.ops, Op{Box: &Box{Text: text, Size: size, Min: lo, Max: hi}})
}

func (c *canvas) DrawImage(r vg.Rectangle, _ image.Image) {
	lo, hi := c.m.box(r)
	c.ops = append(c.ops, Op{Box: &Box{Image: true, Min: lo, Max: hi}})
}

// Record draws fn on a w × h recording canvas and returns the boxes of
// the strings and images drawn, in drawing order. A panic in fn is
// returned as an error.
func Record(w, h vg.Length, fn func(draw.Canvas)) (boxes []Box, err error) {
	ops, err := RecordOps(w, h, fn)
	for _, op := range ops {
		if op.Box != nil {
			boxes = append(boxes, *op.Box)
		}
	}
	return boxes, err
}

// RecordOps draws fn on a w × h recording canvas and returns everything
// drawn, in drawing order: the boxes of strings and images and the marks
// (strokes and fills) with their styles. A panic in fn is returned as an
// error, with what was drawn before it.
func RecordOps(w, h vg.Length, fn func(draw.Canvas)) (ops []Op, err error) {
	c := &canvas{w: w, h: h, state: state{m: affine{a: 1, d: 1}, color: color.NRGBA{A: 0xFF}, width: 1}}
	defer func() {
		if r := recover(); r != nil {
			ops, err = c.ops, fmt.Errorf("plottest: drawing panicked: %v", r)
		}
	}()
	fn(draw.New(c))
	return c.ops, nil
}

// tol is how far (in points) boxes may overlap or leave the canvas before
// it counts: less than a pixel at 150 dpi.
const tol = 0.5

func overlap(a, b Box) bool {
	return min(a.Max.X, b.Max.X)-max(a.Min.X, b.Min.X) > tol && min(a.Max.Y, b.Max.Y)-max(a.Min.Y, b.Min.Y) > tol
}

// Problems lists the strings among boxes that leave the w × h canvas,
// overlap another string, or overlap an image.
func Problems(w, h vg.Length, boxes []Box) []string {
	var out []string
	for i, a := range boxes {
		if a.Image {
			continue
		}
		if a.Min.X < -tol || a.Min.Y < -tol || a.Max.X > w+tol || a.Max.Y > h+tol {
			out = append(out, fmt.Sprintf("%v leaves the %.0f×%.0f canvas", a, float64(w), float64(h)))
		}
		for j, b := range boxes {
			if j == i || (!b.Image && j < i) || !overlap(a, b) {
				continue
			}
			out = append(out, fmt.Sprintf("%v overlaps %v", a, b))
		}
	}
	return out
}

// Check renders fn on a w × h canvas (Record) and reports every problem
// (Problems) of the figure called name as a test error; it returns the
// boxes for further checks.
func Check(t testing.TB, name string, w, h vg.Length, fn func(draw.Canvas)) []Box {
	t.Helper()
	boxes, err := Record(w, h, fn)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return boxes
	}
	if len(boxes) == 0 {
		t.Errorf("%s: no text drawn", name)
	}
	for _, p := range Problems(w, h, boxes) {
		t.Errorf("%s: %s", name, p)
	}
	return boxes
}

// Texts returns the strings among boxes, in drawing order.
func Texts(boxes []Box) []string {
	var out []string
	for _, b := range boxes {
		if !b.Image {
			out = append(out, b.Text)
		}
	}
	return out
}

// Find returns the boxes of the strings equal to text.
func Find(boxes []Box, text string) []Box {
	var out []Box
	for _, b := range boxes {
		if !b.Image && b.Text == text {
			out = append(out, b)
		}
	}
	return out
}
