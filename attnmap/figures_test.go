package attnmap

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/plot/plottest"
)

// testMaps returns L layers of H causal T×T maps (rows sum to 1).
func testMaps(L, H, T int, seed uint64) [][][]float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	maps := make([][][]float32, L)
	for l := range maps {
		maps[l] = make([][]float32, H)
		for h := range maps[l] {
			a := make([]float32, T*T)
			for i := range T {
				s := float32(0)
				for j := 0; j <= i; j++ {
					a[i*T+j] = rng.Float32()
					s += a[i*T+j]
				}
				for j := 0; j <= i; j++ {
					a[i*T+j] /= s
				}
			}
			maps[l][h] = a
		}
	}
	return maps
}

// testLabels are labels as long as ScoreHeads writes: the longest kinds
// (unlabelled with the best hypothesis, p-values in exponent notation).
func testLabels(L, H int) [][]string {
	kinds := []Score{
		{Kind: Relative, D: 1, Mass: 0.97, Chance: 0.02, PAdj: 5.8e-17},
		{Kind: Relative, D: 2, Mass: 0.92, Chance: 0.02, PAdj: 0.0012},
		{Kind: SuffixMatch, K: 3, Offset: 1, Mass: 0.73, Chance: 0.15, PAdj: 0.0025},
		{Kind: SuffixMatch, K: 3, Offset: 0, Mass: 0.27, Chance: 0.18, PAdj: 2.1e-05},
	}
	lab := make([][]string, L)
	for l := range lab {
		lab[l] = make([]string, H)
		for h := range lab[l] {
			s := kinds[(l*H+h)%len(kinds)]
			lab[l][h] = s.String()
			if (l+h)%3 == 2 {
				s.Mass, s.PAdj = 0.08, 0.41
				lab[l][h] = "unlabelled (best: " + s.String() + ")"
			}
		}
	}
	return lab
}

// TestHeatmapsText renders the heatmap grid at the sizes vomc draws it
// (1 to 8 heads, 1 to 4 layers, short and long windows, with and without
// labels) and checks that no text overlaps other text or a heatmap, or
// leaves the figure, and that the position axes are labelled with round
// numbers only.
func TestHeatmapsText(t *testing.T) {
	for _, tc := range []struct {
		L, H, T int
		labels  bool
		title   string
	}{
		{1, 1, 16, true, "Attention maps of TF(1) on test window 0 (N=16)"},
		{2, 2, 64, true, "Attention maps of TF(2,2) on test window 0 (N=64)"},
		{2, 4, 256, true, "Attention maps of TF(4,4) on test window 0 (N=256)"},
		{2, 4, 512, true, "Attention maps of TF(4,4) on test window 0 (N=512)"},
		{4, 4, 100, false, ""},
		{1, 8, 128, true, "Attention maps of TF(8) on test window 0 (N=128)"},
	} {
		name := fmt.Sprintf("%dx%d T=%d", tc.L, tc.H, tc.T)
		opts := Options{Title: tc.title}
		if tc.labels {
			opts.Labels = testLabels(tc.L, tc.H)
		}
		f, err := heatmapFigure(testMaps(tc.L, tc.H, tc.T, 1), opts)
		if err != nil {
			t.Fatal(err)
		}
		boxes := plottest.Check(t, name, f.w, f.h, f.draw)
		if dir := writeFigures(t); dir != "" {
			if err := Heatmaps(filepath.Join(dir, fmt.Sprintf("heatmaps_%dx%d_T%d.png", tc.L, tc.H, tc.T)), testMaps(tc.L, tc.H, tc.T, 1), opts); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range plottest.Texts(boxes) {
			if v, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(s, ".") && (v >= 1 || strings.HasSuffix(s, "0")) {
				t.Errorf("%s: a position tick labelled %q", name, s)
			}
		}
		if tc.labels && len(plottest.Find(boxes, "layer 1 head 1")) != 1 {
			t.Errorf("%s: no panel title 'layer 1 head 1' in %q", name, plottest.Texts(boxes))
		}
	}
}

// writeFigures reports the directory to write the test figures to for a
// look (VOMC_FIGURE_DIR), or "" to write none.
func writeFigures(t *testing.T) string {
	dir := os.Getenv("VOMC_FIGURE_DIR")
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSuffixAndProfileText renders the suffix-match and profile figures as
// the study draws them and checks their text (plottest.Check) and that the
// position axes are labelled with round numbers only.
func TestSuffixAndProfileText(t *testing.T) {
	dir := writeFigures(t)
	for _, T := range []int{64, 256, 512} {
		rng := rand.New(rand.NewPCG(uint64(T), 5))
		x := make([]byte, T)
		for i := range x {
			x[i] = byte(rng.IntN(3))
		}
		att := testMaps(1, 1, T, 2)[0][0]
		qs := []int{1, T / 2, T - 1}
		f, err := suffixFigure(x, att, T, qs, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("suffix T=%d", T)
		boxes := plottest.Check(t, name, f.w, f.h, f.draw)
		checkIntLabels(t, name, boxes)
		if dir != "" {
			if err := SuffixMatchFigure(filepath.Join(dir, fmt.Sprintf("suffix_T%d.png", T)), x, att, T, qs, 3, 1); err != nil {
				t.Fatal(err)
			}
		}

		xs := [][]byte{x, x}
		maps := testMaps(2, 4, T, 3)
		p, err := PositionProfile(xs, func(int) ([][][]float32, error) { return maps, nil }, 3)
		if err != nil {
			t.Fatal(err)
		}
		var scores []HeadScore
		for l := 1; l <= 2; l++ {
			for h := 1; h <= 4; h++ {
				best := Score{Kind: Relative, D: h}
				if l == 2 {
					best = Score{Kind: SuffixMatch, K: h % 4, Offset: h % 2}
				}
				scores = append(scores, HeadScore{Layer: l, Head: h, Labelled: true, Best: best})
			}
		}
		title := fmt.Sprintf("TF(L=2,H=[4,4],E=64,N=%d): attention on each head's label positions by query position (200 windows)", T)
		pf, err := profileFigure(p, scores, max(1, T/50), title)
		if err != nil {
			t.Fatal(err)
		}
		name = fmt.Sprintf("profile T=%d", T)
		boxes = plottest.Check(t, name, pf.w, pf.h, pf.draw)
		checkIntLabels(t, name, boxes)
		// one line per head drawn, each in a colour of its own
		drawn := 0
		for _, ls := range p.labelledSeries(scores) {
			if len(smoothNaN(ls.series, max(1, T/50))) >= 2 {
				drawn++
			}
		}
		if es := plottest.CheckLegend(t, name, pf.w, pf.h, pf.draw, true); len(es) != drawn || drawn < 2 {
			t.Errorf("%s: %d legend entries, want one per head drawn (%d)", name, len(es), drawn)
		}
		if dir != "" {
			if err := ProfileFigure(filepath.Join(dir, fmt.Sprintf("profile_T%d.png", T)), p, scores, max(1, T/50), title); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkIntLabels checks that the tick labels of positions (the integers
// among the strings drawn) are multiples of 1, 2 or 5 × 10^k with no
// decimals (the masses and weights on the other axis are below 10).
func checkIntLabels(t *testing.T, name string, boxes []plottest.Box) {
	t.Helper()
	var ints []int
	for _, s := range plottest.Texts(boxes) {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			ints = append(ints, v)
		} else if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 10 && strings.Contains(s, ".") {
			t.Errorf("%s: position label %q with decimals", name, s)
		}
	}
	if len(ints) == 0 {
		t.Errorf("%s: no position labels", name)
		return
	}
	step := ints[0]
	for _, v := range ints {
		step = gcd(step, v)
	}
	m := step
	for m%10 == 0 {
		m /= 10
	}
	if m != 1 && m != 2 && m != 5 {
		t.Errorf("%s: position labels %v on a step of %d", name, ints, step)
	}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
