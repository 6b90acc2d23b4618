package plot_test

import (
	"math"
	"slices"
	"strconv"
	"testing"

	gplot "gonum.org/v1/plot"

	"github.com/vomc/vomc/plot"
)

// labels returns the labels of the labelled ticks of tk over [lo, hi].
func labels(tk gplot.Ticker, lo, hi float64) []string {
	var out []string
	for _, t := range tk.Ticks(lo, hi) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// TestCompactTicks checks the tick labels of RoundTicks and of
// CompactTicks around gonum's default ticker over tiny, small, unit,
// large and negative ranges: scientific notation for |values| below 1e-4
// or from 1e6 on, otherwise the fewest decimals, the same on every label;
// every label reads back as its tick's value (to a thousandth of the
// gap between ticks) and adjacent labels differ.
func TestCompactTicks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ticker gplot.Ticker
		lo, hi float64
		want   []string // nil: only the general checks
	}{
		{"construct excess", plot.RoundTicks{}, -2.6e-15, 2.1e-15, []string{"-2e-15", "-1e-15", "0", "1e-15", "2e-15"}},
		{"1e-15", plot.RoundTicks{}, 0, 1e-15, []string{"0", "2e-16", "4e-16", "6e-16", "8e-16", "1e-15"}},
		{"negative tiny", plot.RoundTicks{}, -5e-15, -1e-15, []string{"-5e-15", "-4e-15", "-3e-15", "-2e-15", "-1e-15"}},
		{"half steps tiny", plot.RoundTicks{Max: 4}, 0, 1.5e-12, []string{"0", "5e-13", "1e-12", "1.5e-12"}},
		{"0.001-0.03", plot.RoundTicks{}, 0.001, 0.03, []string{"0.005", "0.010", "0.015", "0.020", "0.025", "0.030"}},
		{"0-1", plot.RoundTicks{}, 0, 1, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{"1-1e6", plot.RoundTicks{}, 1, 1e6, []string{"2e5", "4e5", "6e5", "8e5", "1e6"}},
		{"negative 1e6", plot.RoundTicks{}, -1e6, 0, []string{"-1e6", "-8e5", "-6e5", "-4e5", "-2e5", "0"}},
		{"negative span", plot.RoundTicks{}, -3, -0.2, []string{"-3.0", "-2.5", "-2.0", "-1.5", "-1.0", "-0.5"}},
		{"across zero", plot.RoundTicks{}, -0.06, 0.27, []string{"-0.05", "0.00", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{"positions", plot.RoundTicks{}, 0, 512, []string{"0", "100", "200", "300", "400", "500"}},
		{"1e-4 plain", plot.RoundTicks{}, 2e-5, 1e-4, []string{"0.00002", "0.00004", "0.00006", "0.00008", "0.00010"}},
		{"large, fine steps", plot.RoundTicks{Max: 4}, 1e6, 1e6 + 3, []string{"1000000", "1000001", "1000002", "1000003"}},
		{"60000 plain", plot.RoundTicks{}, 0, 60000, []string{"0", "10000", "20000", "30000", "40000", "50000", "60000"}},
		{"one value", plot.RoundTicks{}, 3, 3, []string{"3"}},
		{"default tiny", plot.CompactTicks{Ticker: gplot.DefaultTicks{}}, 0, 2e-15, nil},
		{"default 0-1", plot.CompactTicks{Ticker: gplot.DefaultTicks{}}, 0, 1, []string{"0.0", "0.5", "1.0"}},
		{"default huge", plot.CompactTicks{Ticker: gplot.DefaultTicks{}}, -3e9, 7e9, nil},
		{"default negative", plot.CompactTicks{Ticker: gplot.DefaultTicks{}}, -0.034, -0.001, nil},
		{"nil ticker", plot.CompactTicks{}, 0, 1e-15, []string{"0", "2e-16", "4e-16", "6e-16", "8e-16", "1e-15"}},
		{"quarters", plot.CompactTicks{Ticker: gplot.ConstantTicks{{Value: 0.25, Label: "a"}, {Value: 0.5}, {Value: 0.5, Label: "b"}, {Value: 0.75, Label: "c"}}}, 0, 1, []string{"0.25", "0.50", "0.75"}},
	} {
		ticks := tc.ticker.Ticks(tc.lo, tc.hi)
		got := labels(tc.ticker, tc.lo, tc.hi)
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("%s [%g, %g]: labels %q, want %q", tc.name, tc.lo, tc.hi, got, tc.want)
		}
		var vals []float64
		for _, tk := range ticks {
			if tk.Label != "" {
				vals = append(vals, tk.Value)
			}
		}
		gap := math.Inf(1)
		for i := 1; i < len(vals); i++ {
			gap = min(gap, math.Abs(vals[i]-vals[i-1]))
		}
		maxAbs := 0.0
		for _, v := range vals {
			maxAbs = max(maxAbs, math.Abs(v))
		}
		for i, s := range got {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Errorf("%s: label %q is not a number", tc.name, s)
				continue
			}
			if len(vals) > 1 && math.Abs(v-vals[i]) > gap/1000 {
				t.Errorf("%s: label %q of tick %g", tc.name, s, vals[i])
			}
			if i > 0 && s == got[i-1] {
				t.Errorf("%s: adjacent labels %q", tc.name, s)
			}
			if len(s) > 9 {
				t.Errorf("%s: label %q is long", tc.name, s)
			}
			sci := slices.Contains([]byte(s), 'e')
			if want := maxAbs >= 1e6 || (maxAbs > 0 && maxAbs < 1e-4); sci != want && s != "0" && tc.name != "large, fine steps" {
				t.Errorf("%s: label %q (largest |value| %g): scientific %v, want %v", tc.name, s, maxAbs, sci, want)
			}
		}
	}
}

// TestTickLabels checks TickLabels on values that are not on a ticker's
// grid: a lone value, float noise, unordered values and non-finite ones.
func TestTickLabels(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want []string
	}{
		{[]float64{0.123}, []string{"0.123"}},
		{[]float64{0}, []string{"0"}},
		{[]float64{0.1 + 0.2, 0.6, 0.9}, []string{"0.3", "0.6", "0.9"}},
		{[]float64{3e-15, 1e-15, 2e-15}, []string{"3e-15", "1e-15", "2e-15"}},
		{[]float64{1.25e7, 2.5e7}, []string{"1.25e7", "2.5e7"}},
		{[]float64{-0.0, 1}, []string{"0", "1"}},
		{[]float64{math.NaN(), 1, 2}, []string{"NaN", "1", "2"}},
		{nil, []string{}},
	} {
		if got := plot.TickLabels(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("TickLabels(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
