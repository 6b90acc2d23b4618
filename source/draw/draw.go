// Package draw draws context trees (source.Tree) as SVG and PNG images
// with the gonum vg canvas, laid out like the paper's Fig. 1. It is kept
// out of package source so that the model of a tree depends on nothing
// graphical; the Graphviz DOT writer, being text, stays in source
// (source.Tree.WriteDOT), and both label leaves with source.LeafLabel.
package draw

import (
	"fmt"
	"image/color"
	"io"
	"slices"
	"sync"

	"github.com/vomc/vomc/source"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

const (
	// MaxLeaves is the largest number of leaves WriteSVG and WritePNG
	// draw (source.Tree.WriteDOT has no limit).
	MaxLeaves = 2048
	// maxPNGPixels bounds the larger side of a PNG; the resolution is
	// lowered from 96 dpi to stay within it.
	maxPNGPixels = 8192
)

var (
	fontOnce  sync.Once
	fontCache *font.Cache
)

// labelFace returns the Liberation Sans face used in drawings.
func labelFace(size vg.Length) font.Face {
	fontOnce.Do(func() { fontCache = font.NewCache(liberation.Collection()) })
	return fontCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
}

// drawNode is a node of the drawing layout.
type drawNode struct {
	x, y   vg.Length
	parent int // index of the parent, −1 for the root
	sym    byte
	label  string // leaves only
}

// treeLayout places the root at the left and the leaves in a column per
// depth, one row per leaf in depth-first order (first leaf at the top).
type treeLayout struct {
	nodes []drawNode
	w, h  vg.Length
	face  font.Face
}

const (
	drawMargin = vg.Length(14)
	drawLevel  = vg.Length(56)
	drawRow    = vg.Length(16)
	drawFont   = vg.Length(9)
	drawDot    = vg.Length(2.5)
)

func layout(t *source.Tree) (*treeLayout, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if n := t.NumLeaves(); n > MaxLeaves {
		return nil, fmt.Errorf("source: tree has %d leaves, more than the %d that can be drawn as an image; write it as Graphviz DOT (a .dot output) instead", n, MaxLeaves)
	}
	l := &treeLayout{face: labelFace(drawFont)}
	depth := t.Depth()
	leaves := t.NumLeaves()
	l.h = 2*drawMargin + vg.Length(leaves-1)*drawRow + drawFont
	top := l.h - drawMargin - drawFont/2
	row := 0
	maxLabel := vg.Length(0)
	var path []byte
	var walk func(n *source.Node, parent int, sym byte) vg.Length
	walk = func(n *source.Node, parent int, sym byte) vg.Length {
		me := len(l.nodes)
		l.nodes = append(l.nodes, drawNode{x: drawMargin + vg.Length(len(path))*drawLevel, parent: parent, sym: sym})
		if n.Children == nil {
			y := top - vg.Length(row)*drawRow
			row++
			suffix := slices.Clone(path)
			slices.Reverse(suffix) // time order, oldest symbol first
			label := source.LeafLabel(suffix, n.P, t.A)
			l.nodes[me].y, l.nodes[me].label = y, label
			maxLabel = max(maxLabel, l.face.Width(label))
			return y
		}
		var first, last vg.Length
		for q, c := range n.Children {
			path = append(path, byte(q))
			y := walk(c, me, byte(q))
			path = path[:len(path)-1]
			if q == 0 {
				first = y
			}
			last = y
		}
		l.nodes[me].y = (first + last) / 2
		return l.nodes[me].y
	}
	walk(t.Root, -1, 0)
	l.w = 2*drawMargin + vg.Length(depth)*drawLevel + 2*drawDot + 4 + maxLabel
	return l, nil
}

// draw paints the layout: edges with their symbol near the child, a dot
// per internal node, a ring per leaf and the leaf labels.
func (l *treeLayout) draw(c vg.Canvas, A int) {
	c.SetColor(color.Black)
	c.SetLineWidth(0.7)
	ext := l.face.Extents()
	for _, n := range l.nodes {
		if n.parent < 0 {
			continue
		}
		p := l.nodes[n.parent]
		var path vg.Path
		path.Move(vg.Point{X: p.x, Y: p.y})
		path.Line(vg.Point{X: n.x, Y: n.y})
		c.Stroke(path)
	}
	for _, n := range l.nodes {
		if n.parent < 0 {
			continue
		}
		p := l.nodes[n.parent]
		s := source.SymbolName(n.sym, A)
		// The symbol sits 3/4 of the way to the child, where sibling edges
		// are far enough apart for their labels not to overlap.
		mx, my := p.x+(n.x-p.x)*3/4, p.y+(n.y-p.y)*3/4
		w := l.face.Width(s)
		// White box behind the symbol so that it reads over the edge.
		c.Push()
		c.SetColor(color.White)
		c.Fill(vg.Rectangle{Min: vg.Point{X: mx - w/2 - 1, Y: my - ext.Descent}, Max: vg.Point{X: mx + w/2 + 1, Y: my + ext.Ascent}}.Path())
		c.Pop()
		c.SetColor(color.RGBA{R: 0x1f, G: 0x4e, B: 0x9a, A: 0xff})
		c.FillString(l.face, vg.Point{X: mx - w/2, Y: my - ext.Ascent/3}, s)
		c.SetColor(color.Black)
	}
	for _, n := range l.nodes {
		var circle vg.Path
		circle.Move(vg.Point{X: n.x + drawDot, Y: n.y})
		circle.Arc(vg.Point{X: n.x, Y: n.y}, drawDot, 0, 2*3.141592653589793)
		circle.Close()
		if n.label == "" {
			c.Fill(circle)
			continue
		}
		c.Push()
		c.SetColor(color.White)
		c.Fill(circle)
		c.Pop()
		c.Stroke(circle)
		c.FillString(l.face, vg.Point{X: n.x + drawDot + 4, Y: n.y - ext.Ascent/3}, n.label)
	}
}

// WriteSVG draws the tree as in source.Tree.WriteDOT (root on the left, edges labelled
// with symbols, leaves with LeafLabel) to an SVG document, using the gonum
// vg canvas (sizes in points, 1 pt = 1/72 inch). Trees with more than
// MaxLeaves leaves are refused.
func WriteSVG(w io.Writer, t *source.Tree) error {
	l, err := layout(t)
	if err != nil {
		return err
	}
	c := vgsvg.New(l.w, l.h)
	l.draw(c, t.A)
	_, err = c.WriteTo(w)
	return err
}

// WritePNG draws the tree like WriteSVG to a PNG image at 96 dpi, or less
// when that would make a side longer than 8192 pixels.
func WritePNG(w io.Writer, t *source.Tree) error {
	l, err := layout(t)
	if err != nil {
		return err
	}
	dpi := vgimg.DefaultDPI
	side := max(l.w, l.h) / vg.Inch
	if px := int(float64(side) * float64(dpi)); px > maxPNGPixels {
		dpi = int(maxPNGPixels / float64(side))
		if dpi < 8 {
			return fmt.Errorf("source: tree too large for a PNG (%.0f × %.0f pt)", float64(l.w), float64(l.h))
		}
	}
	c := vgimg.NewWith(vgimg.UseWH(l.w, l.h), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	l.draw(c, t.A)
	_, err = vgimg.PngCanvas{Canvas: c}.WriteTo(w)
	return err
}
