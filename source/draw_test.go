package source

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"
)

func TestWriteDOT(t *testing.T) {
	tr, err := PaperPrior(3).Sample(RNG(8, 0))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tr.WriteDOT(&buf); err != nil {
		t.Fatal(err)
	}
	dot := buf.String()
	if !strings.HasPrefix(dot, "digraph context_tree {") || !strings.HasSuffix(dot, "}\n") {
		t.Errorf("not a DOT digraph:\n%s", dot)
	}
	for _, l := range tr.Leaves() {
		label := LeafLabel(l.Suffix, l.P, tr.A)
		if !strings.Contains(dot, "label=\""+label+"\"") {
			t.Errorf("DOT lacks leaf %q", label)
		}
	}
	if got, want := strings.Count(dot, "->"), countNodes(tr.Root)-1; got != want {
		t.Errorf("%d edges, want %d", got, want)
	}
	if err := (&Tree{A: 2}).WriteDOT(&buf); err == nil {
		t.Error("invalid tree drawn")
	}
}

func countNodes(n *Node) int {
	c := 1
	for _, k := range n.Children {
		c += countNodes(k)
	}
	return c
}

func TestLeafLabel(t *testing.T) {
	if s := LeafLabel([]byte{1, 0}, []float64{0.2, 0.301, 0.499}, 3); s != "(1,0): 0.20 0.30 0.50" {
		t.Error(s)
	}
	p := make([]float64, 20)
	p[0] = 1
	if s := LeafLabel(nil, p, 20); !strings.HasSuffix(s, " …") || strings.Count(s, " ") != 17 {
		t.Error(s)
	}
}

func TestWritePNG(t *testing.T) {
	for _, tr := range []*Tree{fig1(t), mustSample(t, PaperPrior(4), 1), mustSample(t, Prior{A: 2, Depths: []int{0}, Lambda: 0.5, Alpha: []float64{1}}, 2)} {
		var buf bytes.Buffer
		if err := tr.WritePNG(&buf); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		// At least ~10 px per leaf row and a column per level.
		minH := 10 * tr.NumLeaves()
		minW := 60*tr.Depth() + 100
		if b.Dx() < minW || b.Dy() < minH || b.Dx() > maxPNGPixels || b.Dy() > maxPNGPixels {
			t.Errorf("PNG is %d×%d for %d leaves, depth %d", b.Dx(), b.Dy(), tr.NumLeaves(), tr.Depth())
		}
	}
}

func TestWriteSVG(t *testing.T) {
	tr := fig1(t)
	var buf bytes.Buffer
	if err := tr.WriteSVG(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	dec := xml.NewDecoder(strings.NewReader(svg))
	sawSVG := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse as XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			sawSVG = true
		}
	}
	if !sawSVG {
		t.Error("no <svg> element")
	}
	// Text is XML-escaped, so look for the escaped form of a leaf label.
	if !strings.Contains(svg, "(2,0): 0.50 0.25 0.25") {
		t.Error("SVG lacks the label of leaf (2,0)")
	}
}

func TestDrawTooLarge(t *testing.T) {
	tr := mustSample(t, Prior{A: 2, Depths: []int{12}, Lambda: 1e-9, Alpha: []float64{1}}, 0)
	if tr.NumLeaves() <= MaxDrawLeaves {
		t.Skip("tree unexpectedly small")
	}
	if err := tr.WritePNG(io.Discard); err == nil || !strings.Contains(err.Error(), "Graphviz DOT (a .dot output)") {
		t.Errorf("WritePNG: %v", err)
	}
	if err := tr.WriteSVG(io.Discard); err == nil {
		t.Error("WriteSVG drew a huge tree")
	}
	if err := tr.WriteDOT(io.Discard); err != nil {
		t.Error(err)
	}
}

func mustSample(t testing.TB, p Prior, stream uint64) *Tree {
	t.Helper()
	tr, err := p.Sample(RNG(2024, stream))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
