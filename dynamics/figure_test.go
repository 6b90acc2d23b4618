package dynamics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/vomc/vomc/plot/plottest"
)

// testPoints are snapshots at steps 0, 1, 2, 4, … last with divergences
// from the study's references (falling, then the unigram's rising again).
func testPoints(last int) []Point {
	refs := []string{"Unigram(α=0.5)", "Markov(k=1,α=0.5)", "Markov(k=2,α=0.5)", "Markov(k=3,α=0.5)", "KN(D=3,δ=0.8148)", "CTW(D=3,λ=0.15,α=0.5)"}
	var pts []Point
	for s := 0; ; s = max(1, 2*s) {
		s = min(s, last)
		pt := Point{Step: s}
		pt.Excess.Mean = 0.3*(1-0.9*math.Log1p(float64(s))/math.Log1p(float64(last))) - 0.01 // ≤ 0 at the end: not drawn there
		for r, name := range refs {
			t := math.Log1p(float64(s)) / math.Log1p(float64(last))
			v := (0.25 + 0.05*float64(r)) * (1 - 0.8*t)
			if r == 0 {
				v = 0.2 * (1 - 0.9*t + 1.5*t*t)
			}
			pt.KL = append(pt.KL, Divergence{Reference: name, Window: Stat{Mean: v}})
		}
		pts = append(pts, pt)
		if s == last {
			return pts
		}
	}
}

// TestFigureText renders the dynamics figure with emergence marks at one
// step (several heads), at neighbouring steps, at the first and at the
// last step, and checks its text with plottest (no label overlaps another,
// the title, the legend or the ticks; none leaves the figure) and that
// every head is named.
func TestFigureText(t *testing.T) {
	for _, tc := range []struct {
		name string
		last int
		em   []Emergence
	}{
		{"tf44", 4096, []Emergence{{Layer: 1, Head: 1, Step: 1300}, {Layer: 1, Head: 4, Step: 1700}, {Layer: 1, Head: 3, Step: 2200},
			{Layer: 2, Head: 1, Step: 2200}, {Layer: 2, Head: 2, Step: 2200}, {Layer: 2, Head: 4, Step: 2200}, {Layer: 2, Head: 3, Step: 3000}}},
		{"tiny", 600, []Emergence{{Layer: 1, Head: 1, Step: 600}, {Layer: 2, Head: 1, Step: 600}, {Layer: 2, Head: 2, Step: 600}}},
		{"edges", 1000, []Emergence{{Layer: 1, Head: 1, Step: 1}, {Layer: 1, Head: 2, Step: 2}, {Layer: 3, Head: 8, Step: 1000}, {Layer: 3, Head: 7, Step: 900}, {Layer: 3, Head: 6, Step: 800}}},
		{"none", 100, nil},
	} {
		w, h, fn, _, err := figure("Training dynamics: "+tc.name, "CTW", testPoints(tc.last), tc.em, true)
		if err != nil {
			t.Fatal(err)
		}
		boxes := plottest.Check(t, tc.name, w, h, fn)
		text := strings.Join(plottest.Texts(boxes), " ")
		if !strings.Contains(text, "excess loss over CTW") {
			t.Errorf("%s: no excess-loss line in the legend", tc.name)
		}
		for _, e := range tc.em {
			if name := "L" + string(rune('0'+e.Layer)) + "H" + string(rune('0'+e.Head)); !strings.Contains(text, name) {
				t.Errorf("%s: %s not labelled", tc.name, name)
			}
		}
		if dir := os.Getenv("VOMC_FIGURE_DIR"); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Figure(filepath.Join(dir, "dynamics_"+tc.name+".png"), "Training dynamics: "+tc.name, "CTW", testPoints(tc.last), tc.em); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestPanelsText: the grid of panels (five models in two columns, so the
// last row is half full) keeps every panel's text apart and inside the
// figure, and names every panel and every head; panels with the same lines
// share one legend above the grid (each entry once), panels with different
// references keep their own.
func TestPanelsText(t *testing.T) {
	var ps []Panel
	for i, last := range []int{4096, 600, 1000, 100, 6000} {
		ps = append(ps, Panel{Title: "Training dynamics: model " + string(rune('A'+i)), Excess: "CTW", Points: testPoints(last),
			Emergences: []Emergence{{Layer: 1, Head: 1, Step: last / 3}, {Layer: 2, Head: i + 1, Step: last / 2}}})
	}
	w, h, fn, err := panelsFigure(ps, 2)
	if err != nil {
		t.Fatal(err)
	}
	band := h - 3*4.6*vg.Inch
	if math.Abs(float64(w-14*vg.Inch)) > 1e-9 || band <= 0 || band > vg.Inch {
		t.Errorf("size %v × %v, want 2 × 3 panels of 7 × 4.6 in and a legend band under an inch", w, h)
	}
	boxes := plottest.Check(t, "panels", w, h, fn)
	text := strings.Join(plottest.Texts(boxes), " ")
	for i, p := range ps {
		if !strings.Contains(text, p.Title) || !strings.Contains(text, "L2H"+string(rune('1'+i))) {
			t.Errorf("panel %q or its head L2H%d missing", p.Title, i+1)
		}
	}
	for _, e := range append(refNames(ps[0]), "excess loss over CTW") {
		n := 0
		for _, b := range boxes {
			if b.Text == e {
				n++
				if b.Min.Y < h-band {
					t.Errorf("legend entry %q at y = %v, below the band (from %v)", e, b.Min.Y, h-band)
				}
			}
		}
		if n != 1 {
			t.Errorf("legend entry %q drawn %d times, want once", e, n)
		}
	}
	// A panel with other references: every panel keeps its own legend.
	other := ps[4]
	other.Points = testPoints(6000)
	for i := range other.Points {
		other.Points[i].KL = other.Points[i].KL[1:]
	}
	mixed := append(ps[:4:4], other)
	w, h, fn, err = panelsFigure(mixed, 2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(h-3*4.6*vg.Inch)) > 1e-9 {
		t.Errorf("different references: height %v, want the grid's alone", h)
	}
	n := 0
	for _, b := range plottest.Check(t, "mixed", w, h, fn) {
		if b.Text == "Markov(k=1,α=0.5)" {
			n++
		}
	}
	if n != len(mixed) {
		t.Errorf("different references: Markov(1) in %d legends, want %d", n, len(mixed))
	}
	if _, _, _, err := panelsFigure(nil, 2); err == nil {
		t.Error("no panels: no error")
	}
	if err := Panels(filepath.Join(t.TempDir(), "p.jpg"), ps, 2); err == nil {
		t.Error(".jpg: no error")
	}
	if dir := os.Getenv("VOMC_FIGURE_DIR"); dir != "" {
		if err := Panels(filepath.Join(dir, "dynamics_panels.png"), ps, 2); err != nil {
			t.Fatal(err)
		}
	}
}

// refNames are the references of a panel's first point.
func refNames(p Panel) []string {
	var out []string
	for _, d := range p.Points[0].KL {
		out = append(out, d.Reference)
	}
	return out
}
