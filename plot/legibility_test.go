package plot_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/plot/plottest"
)

// studyResult is a hand-made result shaped like the study's: the loss of
// every method falls from log 3 towards its own level with noise, the
// first method is the reference.
func studyResult(names []string, N, windows int, seed uint64) *eval.Result {
	rng := rand.New(rand.NewPCG(seed, 2))
	res := &eval.Result{Windows: windows, N: N, AlphabetSize: 3, Confidence: 0.95, Reference: 0}
	for k, name := range names {
		m := eval.MethodResult{Name: name, Position: make([]eval.Interval, N), Excess: make([]eval.Interval, N)}
		level := 0.65 + 0.04*float64(k)
		for i := range N {
			ex := 0.04 * float64(k) * (1 + 0.3*rng.NormFloat64())
			mean := level + (math.Log(3)-level)*math.Exp(-float64(i)/20) + 0.03*rng.NormFloat64()
			h := 0.02 + 0.3/float64(i+3)
			if k == 0 {
				ex = 0
			}
			m.Position[i] = eval.Interval{Mean: mean, SD: 0.3, Lo: mean - h, Hi: mean + h}
			m.Excess[i] = eval.Interval{Mean: ex, Lo: ex - h/2, Hi: ex + h/2}
		}
		res.Methods = append(res.Methods, m)
	}
	return res
}

// TestLossFigureText draws the loss figure as the study does (9 × 6
// inches, the study's titles and method names, up to 10 methods, with and
// without the excess panel, replicates, a log position axis, the legend
// inside) and checks that no text overlaps other text or leaves the
// figure, that every tick label of the position axis is a multiple of a
// round step (1, 2 or 5 × 10^k) and that the long titles are all there.
// With VOMC_FIGURE_DIR set it also writes the figures there as PNG.
func TestLossFigureText(t *testing.T) {
	fig10 := []string{"CTW(D=3,λ=0.15,α=0.5)", "PPM(D=3,A)", "PPM(D=3,A,norm)", "PPM(D=3,A,excl)", "TF(4)", "TF(4,4)", "TF(4,4,4)", "TF(4,4,4,4)", "TF(4,4) sin"}
	fig3 := []string{"CTW(D=5,λ=0.15,α=0.5)", "KN(D=5,δ=0.8662)", "Markov(k=1,α=0.5)", "Markov(k=2,α=0.5)", "Markov(k=3,α=0.5)", "Markov(k=4,α=0.5)", "Markov(k=5,α=0.5)", "TF(4)", "TF(4,4)", "TF(4,4)#2", "TF(4,4,4,4)"}
	for _, tc := range []struct {
		name    string
		names   []string
		N       int
		opts    plot.Options
		w, h    plot.Length
		allText []string
	}{
		{"fig10", fig10, 256, plot.Options{Excess: true, Smooth: 2,
			Title: "Fig. 10: PPM (method A; as is, normalised, with exclusion) vs transformers (A=3, D=3, N=256, 1000 test windows)"}, 9 * plot.Inch, 6 * plot.Inch, nil},
		{"fig8", fig10[:6], 64, plot.Options{Excess: true,
			Title: "Fig. 8: normal (TF 0-2) vs synthetic (TF 2-0) two-layer transformers (A=3, D=2, N=64, 200 test windows)"}, 9 * plot.Inch, 6 * plot.Inch, nil},
		{"fig3 replicates", fig3, 512, plot.Options{Excess: true, Smooth: 5, Replicates: map[string]string{"TF(4,4)#2": "TF(4,4)"},
			Title: "Fig. 3: transformers vs KN vs CTW (A=3, D=1,2,3,4,5, N=512, 1000 test windows)"}, 9 * plot.Inch, 6 * plot.Inch, nil},
		{"construct", fig10[:2], 1000, plot.Options{Title: "(D+2)=5-layer constructed transformer vs CTW (50 windows)"}, 9 * plot.Inch, 6 * plot.Inch, nil},
		{"logx bits", fig10[:4], 300, plot.Options{Excess: true, LogX: true, Bits: true}, 7 * plot.Inch, 5 * plot.Inch, nil},
		{"inside", fig10[:4], 1536, plot.Options{LegendInside: true, Smooth: 25}, 7 * plot.Inch, 5 * plot.Inch, nil},
		{"small", fig10[:3], 64, plot.Options{Excess: true}, 5 * plot.Inch, 3.5 * plot.Inch, nil},
	} {
		fig, err := plot.LossVsPosition(studyResult(tc.names, tc.N, 100, 1), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		boxes := plottest.Check(t, tc.name, tc.w, tc.h, fig.Draw)
		text := strings.Join(plottest.Texts(boxes), " ")
		if tc.opts.Title != "" && !strings.Contains(strings.Join(strings.Fields(text), " "), tc.opts.Title) {
			t.Errorf("%s: the title %q is not drawn whole in %q", tc.name, tc.opts.Title, text)
		}
		if !tc.opts.LogX {
			checkRoundLabels(t, tc.name, boxes, 10)
		}
		if dir := os.Getenv("VOMC_FIGURE_DIR"); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := fig.Save(filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".png"), tc.w, tc.h); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkRoundLabels checks that the integer tick labels of at least
// minInts are multiples of one round step, and that there are that many
// (the position axis).
func checkRoundLabels(t *testing.T, name string, boxes []plottest.Box, minInt int) {
	t.Helper()
	var ints []int
	for _, s := range plottest.Texts(boxes) {
		if v, err := strconv.Atoi(s); err == nil && v >= minInt {
			ints = append(ints, v)
		}
	}
	slices.Sort(ints)
	ints = slices.Compact(ints)
	if len(ints) < 2 {
		t.Errorf("%s: fewer than 2 position labels ≥ %d: %v", name, minInt, ints)
		return
	}
	step := ints[1] - ints[0]
	if !isRound(float64(step)) {
		t.Errorf("%s: position labels %v: step %d is not 1, 2 or 5 × 10^k", name, ints, step)
	}
	for _, v := range ints {
		if v%step != 0 {
			t.Errorf("%s: position labels %v: %d is not a multiple of %d", name, ints, v, step)
		}
	}
}

// isRound reports whether v is 1, 2 or 5 × 10^k.
func isRound(v float64) bool {
	m := v / math.Pow10(int(math.Floor(math.Log10(v)+1e-6)))
	return math.Abs(m-1) < 1e-6 || math.Abs(m-2) < 1e-6 || math.Abs(m-5) < 1e-6
}

// TestRoundTicks checks RoundTicks on the ranges of the study's axes: the
// labelled ticks are consecutive multiples of a 1, 2 or 5 × 10^k step,
// 3 to 7 of them, written with one number of decimals, and 0 is "0".
func TestRoundTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{0, 256, []string{"0", "50", "100", "150", "200", "250"}},
		{0, 512, []string{"0", "100", "200", "300", "400", "500"}},
		{0, 64, []string{"0", "10", "20", "30", "40", "50", "60"}},
		{0.62, 1.31, []string{"0.7", "0.8", "0.9", "1.0", "1.1", "1.2", "1.3"}},
		{-0.06, 0.27, []string{"-0.05", "0.00", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{0.81, 1.04, []string{"0.85", "0.90", "0.95", "1.00"}},
		{-0.5, 15.5, []string{"0", "5", "10", "15"}},
		{0, 60000, []string{"0", "10000", "20000", "30000", "40000", "50000", "60000"}},
		{3, 3, []string{"3"}},
	} {
		var got []string
		for _, tk := range (plot.RoundTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
			if tk.Value < tc.lo-1e-9 || tk.Value > tc.hi+1e-9 {
				t.Errorf("[%v, %v]: tick %v outside the range", tc.lo, tc.hi, tk.Value)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[%v, %v]: labels %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
	// Random ranges: 3..7 labels on consecutive multiples of a round step.
	rng := rand.New(rand.NewPCG(3, 3))
	for range 2000 {
		lo := (rng.Float64() - 0.3) * math.Pow10(rng.IntN(8)-3)
		hi := lo + rng.Float64()*math.Pow10(rng.IntN(8)-3)
		var vals []float64
		for _, tk := range (plot.RoundTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				vals = append(vals, tk.Value)
			}
		}
		if hi <= lo {
			continue
		}
		if len(vals) < 3 || len(vals) > 7 {
			t.Fatalf("[%v, %v]: %d labels", lo, hi, len(vals))
		}
		step := vals[1] - vals[0]
		if !isRound(step) {
			t.Fatalf("[%v, %v]: step %v", lo, hi, step)
		}
	}
}

// TestLogTicks checks the labels of LogTicks over the study's log axes.
func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []string
	}{
		{1, 5000, []string{"1", "10", "100", "1000"}},
		{1, 300, []string{"1", "2", "5", "10", "20", "50", "100", "200"}},
		{0.03, 0.4, []string{"0.03", "0.05", "0.1", "0.2", "0.3"}},
		{0.55, 0.95, []string{"0.6", "0.7", "0.8", "0.9"}},
		{0.02, 0.9, []string{"0.02", "0.05", "0.1", "0.2", "0.5"}},
		{1e-17, 1, []string{"1e-15", "1e-12", "1e-9", "1e-6", "0.001", "1"}},
	} {
		var got []string
		for _, tk := range (plot.LogTicks{}).Ticks(tc.lo, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("[%v, %v]: labels %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestWrapFit checks Wrap and FitTitle.
func TestWrapFit(t *testing.T) {
	p := gplot.New()
	sty := p.Title.TextStyle
	s := "previous-token d=1, mass 0.97 vs chance 0.02, p_adj 5.8e-17"
	w := sty.Width("mass 0.97 vs chance 0.02, p_adj 5.8e-17") + 1
	if got, want := plot.Wrap(s, sty, w), "previous-token d=1,\nmass 0.97 vs chance 0.02, p_adj 5.8e-17"; got != want {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
	if got := plot.Wrap(s, sty, 1000); got != s {
		t.Errorf("Wrap (wide) = %q", got)
	}
	// A long clause is broken at spaces, but not inside a short
	// parenthesis.
	s = "unlabelled (best: suffix-match k=1 (offset 1), mass 0.46 vs chance 0.46, p_adj 1)"
	w = sty.Width("unlabelled (best: suffix-match k=1 (offset") + 1
	if got, want := plot.Wrap(s, sty, w), "unlabelled (best: suffix-match k=1\n(offset 1), mass 0.46 vs chance 0.46,\np_adj 1)"; got != want {
		t.Errorf("Wrap = %q, want %q", got, want)
	}
	p.Title.Text = "Fig. 3: transformers vs KN vs CTW (A=3, D=3, N=256, 1000 test windows)"
	restore := plot.FitTitle(p, sty.Width("Fig. 3: transformers vs KN vs CTW")+2)
	if got, want := p.Title.Text, "Fig. 3: transformers vs KN vs CTW\n(A=3, D=3, N=256, 1000 test windows)"; got != want {
		t.Errorf("FitTitle = %q, want %q", got, want)
	}
	restore()
	if !strings.HasPrefix(p.Title.Text, "Fig. 3") || strings.Contains(p.Title.Text, "\n") {
		t.Errorf("restore: %q", p.Title.Text)
	}
	// DrawLegendRight: the legend is beside the data, not over it.
	p.Add(gplotLine(t))
	p.Legend.Add("a long legend entry", gplotLine(t))
	plottest.Check(t, "legend right", 4*plot.Inch, 3*plot.Inch, func(c draw.Canvas) { plot.DrawLegendRight(p, c) })
}

func gplotLine(t *testing.T) *plotter.Line {
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
