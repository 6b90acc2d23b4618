package draw

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/vomc/vomc/source"
)

// fig1 is the tree of the paper's Fig. 1.
func fig1(t testing.TB) *source.Tree {
	t.Helper()
	tr, err := source.FromLeaves(3, 2, []source.Leaf{
		{Suffix: []byte{1}, P: []float64{0.2, 0.3, 0.5}},
		{Suffix: []byte{2}, P: []float64{0.1, 0.1, 0.8}},
		{Suffix: []byte{0, 0}, P: []float64{0.6, 0.2, 0.2}},
		{Suffix: []byte{1, 0}, P: []float64{0.3, 0.3, 0.4}},
		{Suffix: []byte{2, 0}, P: []float64{0.5, 0.25, 0.25}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func mustSample(t testing.TB, p source.Prior, stream uint64) *source.Tree {
	t.Helper()
	tr, err := p.Sample(source.RNG(2024, stream))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestWritePNG(t *testing.T) {
	for _, tr := range []*source.Tree{fig1(t), mustSample(t, source.PaperPrior(4), 1), mustSample(t, source.Prior{A: 2, Depths: []int{0}, Lambda: 0.5, Alpha: []float64{1}}, 2)} {
		var buf bytes.Buffer
		if err := WritePNG(&buf, tr); err != nil {
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
	if err := WriteSVG(&buf, tr); err != nil {
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
	tr := mustSample(t, source.Prior{A: 2, Depths: []int{12}, Lambda: 1e-9, Alpha: []float64{1}}, 0)
	if tr.NumLeaves() <= MaxLeaves {
		t.Skip("tree unexpectedly small")
	}
	if err := WritePNG(io.Discard, tr); err == nil || !strings.Contains(err.Error(), "Graphviz DOT (a .dot output)") {
		t.Errorf("WritePNG: %v", err)
	}
	if err := WriteSVG(io.Discard, tr); err == nil {
		t.Error("WriteSVG drew a huge tree")
	}
	if err := tr.WriteDOT(io.Discard); err != nil {
		t.Error(err)
	}
}
