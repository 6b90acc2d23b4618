package plot_test

import (
	"fmt"
	"image/color"
	"testing"

	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/plot/plottest"
)

// TestMethodStyleDistinct: the palette has 16 distinct colours, none
// black or white; the first 16 methods differ in colour, the first 64 in
// (colour, dash pattern), and no two of the first 1000 are drawn alike;
// the reference is solid black.
func TestMethodStyleDistinct(t *testing.T) {
	pal := plot.Palette()
	if len(pal) < 16 {
		t.Fatalf("%d colours in the palette, want ≥ 16", len(pal))
	}
	seenColour := map[color.NRGBA]bool{}
	for _, c := range pal {
		if seenColour[c] || c == (color.NRGBA{0, 0, 0, 0xFF}) || c == (color.NRGBA{0xFF, 0xFF, 0xFF, 0xFF}) || c.A != 0xFF {
			t.Errorf("palette colour %v repeats, is black or white, or is translucent", c)
		}
		seenColour[c] = true
	}
	seen := map[string]int{}
	colours := map[string]bool{}
	for k := range 1000 {
		s := plot.MethodStyle(k, false)
		key := fmt.Sprint(s.Color, s.Dashes)
		if j, ok := seen[key]; ok {
			t.Fatalf("methods %d and %d are drawn alike (%s)", j, k, key)
		}
		seen[key] = k
		if k < len(pal) {
			if s.Color != pal[k] {
				t.Errorf("method %d has colour %v, want the palette's %v", k, s.Color, pal[k])
			}
			colours[fmt.Sprint(s.Color)] = true
		}
	}
	if len(colours) != len(pal) {
		t.Errorf("the first %d methods have %d colours", len(pal), len(colours))
	}
	ref := plot.MethodStyle(0, true)
	if r, g, b, _ := ref.Color.RGBA(); r|g|b != 0 || ref.Dashes != nil {
		t.Fatal("reference is not solid black")
	}
	// Dash patterns are all different.
	pats := map[string]int{}
	for j := range 40 {
		key := fmt.Sprint(plot.DashPattern(j))
		if i, ok := pats[key]; ok {
			t.Fatalf("dash patterns %d and %d are the same: %s", i, j, key)
		}
		pats[key] = j
	}
}

// TestLossFigureLegend draws the loss figure with the study's Fig. 3
// methods (the reference, KN, five Markov models and six transformers:
// 13 curves) and with a reference and 16 other methods and checks with
// plottest.CheckLegend that every legend entry has a colour of its own;
// with 40 methods, more than the palette has colours, that no two are
// drawn alike. (With the nine colours plot had before, Fig. 3 drew KN and
// TF(4,4,4,4) in one blue and Markov(k=1) and TF(4,4) sin in one
// vermillion, which the first check reports.)
func TestLossFigureLegend(t *testing.T) {
	fig3 := []string{"CTW(D=5,λ=0.15,α=0.5)", "KN(D=5,δ=0.8662)", "Markov(k=1,α=0.5)", "Markov(k=2,α=0.5)", "Markov(k=3,α=0.5)", "Markov(k=4,α=0.5)", "Markov(k=5,α=0.5)", "TF(4)", "TF(4,4)", "TF(4,4,4)", "TF(4,4,4,4)", "TF(4,4) sin", "TF(8,8)"}
	many := func(n int) []string {
		names := []string{"CTW"}
		for k := range n {
			names = append(names, fmt.Sprintf("method %d", k+1))
		}
		return names
	}
	for _, tc := range []struct {
		name     string
		names    []string
		distinct bool
		opts     plot.Options
	}{
		{"fig3", fig3, true, plot.Options{Excess: true, Smooth: 5}},
		{"fig3 no bands", fig3, true, plot.Options{NoBands: true}},
		{"17 curves", many(16), true, plot.Options{}},
		{"41 curves", many(40), false, plot.Options{NoBands: true}},
	} {
		fig, err := plot.LossVsPosition(studyResult(tc.names, 128, 50, 1), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		h := 6 * plot.Inch
		if len(tc.names) > 20 {
			h = 10 * plot.Inch // room for the legend
		}
		entries := plottest.CheckLegend(t, tc.name, 9*plot.Inch, h, fig.Draw, tc.distinct)
		if len(entries) != len(tc.names) {
			t.Errorf("%s: %d legend entries found, want %d", tc.name, len(entries), len(tc.names))
		}
	}
}
