package dynamics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		w, h, fn, err := figure("Training dynamics: "+tc.name, testPoints(tc.last), tc.em)
		if err != nil {
			t.Fatal(err)
		}
		boxes := plottest.Check(t, tc.name, w, h, fn)
		text := strings.Join(plottest.Texts(boxes), " ")
		for _, e := range tc.em {
			if name := "L" + string(rune('0'+e.Layer)) + "H" + string(rune('0'+e.Head)); !strings.Contains(text, name) {
				t.Errorf("%s: %s not labelled", tc.name, name)
			}
		}
		if dir := os.Getenv("VOMC_FIGURE_DIR"); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := Figure(filepath.Join(dir, "dynamics_"+tc.name+".png"), "Training dynamics: "+tc.name, testPoints(tc.last), tc.em); err != nil {
				t.Fatal(err)
			}
		}
	}
}
