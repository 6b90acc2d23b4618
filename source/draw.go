package source

import (
	"bufio"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

const (
	// MaxDrawLeaves is the largest number of leaves WriteSVG and WritePNG
	// draw (WriteDOT has no limit).
	MaxDrawLeaves = 2048
	// maxLabelProbs is how many probabilities a leaf label shows before "…".
	maxLabelProbs = 16
	// maxPNGPixels bounds the larger side of a PNG; the resolution is
	// lowered from 96 dpi to stay within it.
	maxPNGPixels = 8192
)

// LeafLabel is the text that drawings attach to a leaf: its suffix in time
// order and p_s rounded to 2 decimals, e.g. "(1,0): 0.20 0.30 0.50". For
// A > 16 only the first 16 probabilities are shown, followed by "…".
func LeafLabel(suffix []byte, p []float64, A int) string {
	var b strings.Builder
	b.WriteString(FormatSuffix(suffix, A))
	b.WriteString(":")
	for a, v := range p {
		if a == maxLabelProbs {
			b.WriteString(" …")
			break
		}
		b.WriteByte(' ')
		b.WriteString(strconv.FormatFloat(v, 'f', 2, 64))
	}
	return b.String()
}

// WriteDOT writes the tree in Graphviz DOT, laid out like the paper's
// Fig. 1: the root "()" on the left, each edge labelled with the symbol q
// that extends the context into the past, and each leaf a box labelled by
// LeafLabel. Render with e.g. `dot -Tsvg`.
func (t *Tree) WriteDOT(w io.Writer) error {
	if err := t.Validate(); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph context_tree {\n")
	fmt.Fprintf(bw, "  // context tree, alphabet size A = %d, maximum depth D = %d, %d leaves\n", t.A, t.D, t.NumLeaves())
	fmt.Fprintf(bw, "  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=10, arrowhead=none];\n")
	id := 0
	var path []byte
	var walk func(n *Node) int
	walk = func(n *Node) int {
		me := id
		id++
		if n.Children == nil {
			fmt.Fprintf(bw, "  n%d [shape=box, label=%q];\n", me, LeafLabel(reversed(path), n.P, t.A))
			return me
		}
		fmt.Fprintf(bw, "  n%d [shape=circle, label=\"\", width=0.12, style=filled, fillcolor=black, xlabel=%q];\n", me, formatPath(path, t.A))
		for q, c := range n.Children {
			path = append(path, byte(q))
			child := walk(c)
			path = path[:len(path)-1]
			fmt.Fprintf(bw, "  n%d -> n%d [label=%q];\n", me, child, SymbolName(byte(q), t.A))
		}
		return me
	}
	walk(t.Root)
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

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

func (t *Tree) layout() (*treeLayout, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if n := t.NumLeaves(); n > MaxDrawLeaves {
		return nil, fmt.Errorf("source: tree has %d leaves, more than the %d that can be drawn as an image; write it as Graphviz DOT (a .dot output) instead", n, MaxDrawLeaves)
	}
	l := &treeLayout{face: labelFace(drawFont)}
	depth := t.Depth()
	leaves := t.NumLeaves()
	l.h = 2*drawMargin + vg.Length(leaves-1)*drawRow + drawFont
	top := l.h - drawMargin - drawFont/2
	row := 0
	maxLabel := vg.Length(0)
	var path []byte
	var walk func(n *Node, parent int, sym byte) vg.Length
	walk = func(n *Node, parent int, sym byte) vg.Length {
		me := len(l.nodes)
		l.nodes = append(l.nodes, drawNode{x: drawMargin + vg.Length(len(path))*drawLevel, parent: parent, sym: sym})
		if n.Children == nil {
			y := top - vg.Length(row)*drawRow
			row++
			label := LeafLabel(reversed(path), n.P, t.A)
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
		s := SymbolName(n.sym, A)
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

// WriteSVG draws the tree as in WriteDOT (root on the left, edges labelled
// with symbols, leaves with LeafLabel) to an SVG document, using the gonum
// vg canvas (sizes in points, 1 pt = 1/72 inch). Trees with more than
// MaxDrawLeaves leaves are refused.
func (t *Tree) WriteSVG(w io.Writer) error {
	l, err := t.layout()
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
func (t *Tree) WritePNG(w io.Writer) error {
	l, err := t.layout()
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
