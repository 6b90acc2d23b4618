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

func mustSample(t testing.TB, p source.Prior, stream uint64) *source.Tree {
	t.Helper()
	tr, err := p.Sample(source.RNG(2024, stream))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestWritePNG(t *testing.T) {
	for _, tr := range []*source.Tree{mustSample(t, source.PaperPrior(2), 3), mustSample(t, source.PaperPrior(4), 1), mustSample(t, source.Prior{A: 2, Depths: []int{0}, Lambda: 0.5, Alpha: []float64{1}}, 2)} {
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
	tr := mustSample(t, source.PaperPrior(3), 5)
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
	// Leaf labels need no XML escaping: digits, "(", ",", ")", ":", " ".
	for _, l := range tr.Leaves() {
		if label := source.LeafLabel(l.Suffix, l.P, tr.A); !strings.Contains(svg, label) {
			t.Errorf("SVG lacks the label %q", label)
		}
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
