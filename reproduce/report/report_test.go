package report

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
)

// TestSpikes: one outlying window gives a spike carried by ≈ 1 window; a
// shift of many windows gives many; a flat curve none.
func TestSpikes(t *testing.T) {
	t.Parallel()
	const n, N = 1000, 60
	mk := func(spikeMean, spikeSD float64) *eval.MethodResult {
		m := &eval.MethodResult{Excess: make([]eval.Interval, N)}
		for i := range m.Excess {
			mean, sd := 0.02, 0.1
			if i == 30 {
				mean, sd = spikeMean, spikeSD
			}
			h := 1.96 * sd / math.Sqrt(n)
			m.Excess[i] = eval.Interval{Mean: mean, SD: sd, Lo: mean - h, Hi: mean + h}
		}
		return m
	}
	if s := spikes(mk(0.02, 0.1), n, 0.03); len(s) != 0 {
		t.Errorf("flat curve: %+v", s)
	}
	// one window with excess 100 nats: mean +0.1, SD ≈ 100/√n = 3.16 — the
	// interval is too wide to count as a spike at all
	if s := spikes(mk(0.12, 3.16), n, 0.03); len(s) != 0 {
		t.Errorf("one outlier flagged: %+v", s)
	}
	// 100 windows with excess 1.3: mean +0.13, SD ≈ 0.39
	s := spikes(mk(0.15, 0.39), n, 0.03)
	if len(s) != 1 || s[0].Pos != 31 || s[0].Windows < 50 || s[0].Windows > 150 {
		t.Errorf("systematic spike: %+v", s)
	}
}

// TestMarkovSentenceAndOptimality checks the fixed-order comparison of
// Fig. 3 and the reasons CTW is not exactly Bayes-optimal.
func TestMarkovSentenceAndOptimality(t *testing.T) {
	res := resultsOf(0.003, "CTW", 0.0, "Markov(k=1)", 0.2, "Markov(k=3)", 0.03, "TF(4,4)", 0.01, "TF(4)", 0.25)
	cfg, _ := study.Preset("small")
	cfg.Fig3Models = []string{"4", "4,4"}
	cfg.Seeds = 1
	s := markovSentence(cfg, mergedOf(res))
	if !strings.Contains(s, "The best fixed order, Markov(k=3), is clearly worse than the best transformer, TF(4,4)") || strings.Contains(s, "evaluated for k ≤") {
		t.Errorf("markov sentence %q", s)
	}
	d5 := cfg
	d5.Depths = []int{5}
	if s := markovSentence(d5, mergedOf(res)); !strings.Contains(s, "evaluated for k ≤ 3 only, below the prior's depth 5") {
		t.Errorf("orders below the depth not named: %q", s)
	}
	shift(res, "Markov(k=3)", 0.012-0.03)
	if s := markovSentence(cfg, mergedOf(res)); !strings.Contains(s, "within noise of") {
		t.Errorf("within the margin: %q", s)
	}
	if s := markovSentence(cfg, &results.Merged{Res: res}); !strings.Contains(s, "No validation results") {
		t.Errorf("no validation results: %q", s)
	}
	if s := markovSentence(cfg, mergedOf(&eval.Result{Methods: res.Methods[:1]})); s != "" {
		t.Errorf("no Markov methods: %q", s)
	}

	if !cfg.CTWOptimal() {
		t.Error("one depth with Dirichlet leaves: CTW is Bayes-optimal")
	}
	dd, _ := study.Preset("depth5")
	why := dd.NotOptimal()
	if dd.CTWOptimal() || len(why) != 2 || !strings.Contains(why[0], `"mixed"`) || !strings.Contains(why[1], "mixture of π_D") {
		t.Errorf("depth5: optimal %v, reasons %q", dd.CTWOptimal(), why)
	}
	dd.Leaves = ""
	if dd.CTWOptimal() {
		t.Error("mixed depths with Dirichlet leaves: CTW is not exactly Bayes-optimal")
	}
}

// TestFig3Sinusoidal checks that a sinusoidal-position model is compared
// with its learned counterpart and kept out of the layer comparison.
func TestFig3Sinusoidal(t *testing.T) {
	cfg, _ := study.Preset("tiny")
	cfg.Fig3Models = []string{"2", "2,2", "2,2-sin"}
	res := resultsOf(0.005, "CTW", 0.0, "Unigram", 0.25, "TF(2)", 0.24, "TF(2,2)", 0.08, "TF(2,2) sin", 0.02)
	for i := range res.Methods {
		for range 64 {
			res.Methods[i].Excess = append(res.Methods[i].Excess, res.Methods[i].ExcessSecondHalf)
		}
	}
	f := findFig3(cfg, mergedOf(res))
	if !strings.Contains(f.Found, "With fixed sinusoidal instead of learned positions, TF(2,2) sin is 0.02") || !strings.Contains(f.Found, "above CTW, clearly better than TF(2,2)") {
		t.Errorf("no sinusoidal comparison: %q", f.Found)
	}
	if strings.Contains(f.Found, "TF(2,2) sin (2 layers)") {
		t.Errorf("the sinusoidal model is in the layer comparison: %q", f.Found)
	}
}

// TestBestTransformerConsistent: the Fig. 3 section's comparison of the
// best fixed order with the best transformer and the Fig. 10 section name
// the same best transformer, chosen on the validation windows from every
// Fig. 3 model (sinusoidal positions included).
func TestBestTransformerConsistent(t *testing.T) {
	fig3Best := regexp.MustCompile(`the best transformer, (.+?) \((\d\.\d{3}) ± \d\.\d{3}; both chosen`)
	fig10Best := regexp.MustCompile(`The best transformer \((.+?), chosen on validation windows\) is`)
	cases := []struct {
		name   string
		models []string
		excess map[string]float64
		want   string
	}{
		{"sinusoidal best", []string{"4", "4,4", "4,4-sin"}, map[string]float64{"TF(4)": 0.233, "TF(4,4)": 0.023, "TF(4,4) sin": 0.020}, "TF(4,4) sin"},
		{"learned best", []string{"4", "4,4", "4,4-sin"}, map[string]float64{"TF(4)": 0.233, "TF(4,4)": 0.015, "TF(4,4) sin": 0.020}, "TF(4,4)"},
		{"sinusoidal listed first", []string{"4,4-sin", "4", "4,4"}, map[string]float64{"TF(4)": 0.233, "TF(4,4)": 0.076, "TF(4,4) sin": 0.020}, "TF(4,4) sin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := study.Preset("depth5")
			cfg.Fig3Models = tc.models
			cfg.Seeds = 1
			ex := map[string]float64{"CTW": 0, "Unigram": 0.28, "KN": 0.099, "PPM(D=5,A)": 0.21, "Markov(k=1)": 0.15, "Markov(k=4)": 0.031}
			for k, v := range tc.excess {
				ex[k] = v
			}
			var ms []any
			for _, n := range []string{"CTW", "Unigram", "KN", "PPM(D=5,A)", "Markov(k=1)", "Markov(k=4)", "TF(4)", "TF(4,4)", "TF(4,4) sin"} {
				ms = append(ms, n, ex[n])
			}
			res := resultsOf(0.002, ms...)
			for i := range res.Methods {
				for range 64 {
					res.Methods[i].Excess = append(res.Methods[i].Excess, res.Methods[i].ExcessSecondHalf)
				}
			}
			f3, f10 := findFig3(cfg, mergedOf(res)), findFig10(cfg, mergedOf(res))
			m3, m10 := fig3Best.FindStringSubmatch(f3.Found), fig10Best.FindStringSubmatch(f10.Found)
			if m3 == nil || m10 == nil {
				t.Fatalf("no best transformer named:\nFig. 3: %q\nFig. 10: %q", f3.Found, f10.Found)
			}
			if m3[1] != tc.want || m10[1] != tc.want {
				t.Errorf("best transformer: Fig. 3 %q, Fig. 10 %q, want %q", m3[1], m10[1], tc.want)
			}
			if got := fmt.Sprintf("%.3f", res.Method(tc.want).ExcessSecondHalf.Mean); m3[2] != got {
				t.Errorf("Fig. 3's best transformer at %s, want %s", m3[2], got)
			}
		})
	}
}

// TestGapSentence checks the verdicts on "TF 2-0 ≈ TF 2-0 w/ all counts".
func TestGapSentence(t *testing.T) {
	f := func(x float64) jsonfloat.Float { return jsonfloat.Float(x) }
	iv := func(m, h float64) results.JSONInterval {
		return results.JSONInterval{Mean: f(m), Lo: f(m - h), Hi: f(m + h)}
	}
	cases := []struct {
		gap  results.JSONInterval
		want string
	}{
		{iv(0.003, 0.004), "inconclusive (the interval reaches across ±0.005"},
		{iv(0.0, 0.03), "inconclusive"},
		{iv(0.003, 0.001), "holds (the interval lies within ±0.005 nats)"},
		{iv(-0.004, 0.0005), "holds"},
		{iv(0.0044, 0.0041), "inconclusive"}, // excludes 0, but its point is within the tolerance
		{iv(0.0065, 0.001), "does not hold (the interval lies beyond ±0.005"},
		{iv(-0.012, 0.003), "does not hold"},
		{iv(0.02, 0.006), "does not hold"},
		{results.JSONInterval{Mean: f(0.01), SD: f(math.NaN()), Lo: f(math.NaN()), Hi: f(math.NaN())}, "cannot be decided"}, // one window
	}
	for _, c := range cases {
		s := gapSentence([]results.SynthGap{{Encoding: "log", SecondHalf: c.gap, Window: c.gap}})
		if !strings.Contains(s, "log encoding: ") || !strings.Contains(s, c.want) {
			t.Errorf("gap %v ± : %q, want %q", c.gap.Mean, s, c.want)
		}
	}
	multi := gapSentence([]results.SynthGap{
		{Encoding: "paper", Replicate: 0, SecondHalf: iv(0.02, 0.005), Window: iv(0.02, 0.005)},
		{Encoding: "paper", Replicate: 1, SecondHalf: iv(0.001, 0.004), Window: iv(0.001, 0.004)},
		{Encoding: "paper", Replicate: 2, SecondHalf: iv(0.03, 0.005), Window: iv(0.03, 0.005)},
		{Encoding: "linear", Replicate: 0, SecondHalf: iv(0.002, 0.001), Window: iv(0.002, 0.001)},
	})
	for _, want := range []string{"paper encoding: seed 0 +0.0200 ± 0.0050, seed 1 +0.0010 ± 0.0040, seed 2 +0.0300 ± 0.0050; it holds in 1 of 3 seeds and fails in 2; across seeds +0.0170 ±",
		"linear encoding: +0.0020 ± 0.0010 (window +0.0020), holds"} {
		if !strings.Contains(multi, want) {
			t.Errorf("gap sentence %q lacks %q", multi, want)
		}
	}
	if gapSentence(nil) != "" {
		t.Error("no gaps should give no sentence")
	}
}

// TestFig8VerdictEncodings checks that the Fig. 8 finding is decided under
// the first configured encoding (also when it is not the paper's), each
// check on every seed (the paired gaps where there are some) and combined
// across seeds; differences within noise do not make "removing counts
// degrades" hold.
func TestFig8VerdictEncodings(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := study.Preset("tiny")
	cfg.SynthEncodings = []string{synth.Linear}
	cfg.SynthSeeds, cfg.Seeds = 2, 2
	iv := func(m, h float64) eval.Interval { return eval.Interval{Mean: m, Lo: m - h, Hi: m + h} }
	build := func(ex map[string]float64, h float64) *eval.Result {
		res := &eval.Result{Windows: 100, N: 8, Reference: 0}
		res.Methods = append(res.Methods, eval.MethodResult{Name: "CTW", ExcessSecondHalf: iv(0, h)})
		for _, name := range []string{"TF 2-0 [linear]", "TF 2-0 w/ all counts [linear]", "TF 2-0 total counts only [linear]", "TF 2-0 w/o counts", "TF(2,2)"} {
			for _, suf := range []string{"", " [seed 1]"} { // seed 1 as seed 0
				res.Methods = append(res.Methods, eval.MethodResult{Name: name + suf, ExcessSecondHalf: iv(ex[name], h)})
			}
		}
		return res
	}
	clear := map[string]float64{"TF 2-0 [linear]": 0.012, "TF 2-0 w/ all counts [linear]": 0.010,
		"TF 2-0 total counts only [linear]": 0.04, "TF 2-0 w/o counts": 0.05, "TF(2,2)": 0.013}
	match := "almost match"
	for _, tc := range []struct {
		name    string
		res     *eval.Result
		gaps    []results.SynthGap
		checks  map[string]string // claim substring → verdict
		verdict string
	}{
		{"gap fails on both seeds", build(clear, 0.001), []results.SynthGap{gap("linear", 0, 0.02, 0.003), gap("linear", 1, 0.02, 0.003)},
			map[string]string{match: "fails", "total counts only [linear] is worse": "holds", "w/o counts is worse": "holds", "TF 0-2 (TF(2,2))": "holds"}, "fails"},
		{"gap fails on one seed of two", build(clear, 0.001), []results.SynthGap{gap("linear", 0, 0.02, 0.003), gap("linear", 1, 0.001, 0.002)},
			map[string]string{match: "inconclusive"}, "inconclusive"},
		{"every check holds; the paper-encoding gap is not the finding's", build(clear, 0.001),
			[]results.SynthGap{gap("linear", 0, 0.001, 0.002), gap("linear", 1, 0.001, 0.002), gap("paper", 0, 0.03, 0.003)},
			map[string]string{match: "holds"}, "holds"},
		{"no gaps: the unpaired difference decides", build(clear, 0.001), nil, map[string]string{match: "holds"}, "holds"},
		{"everything within noise", build(map[string]float64{"TF 2-0 [linear]": 0.0300, "TF 2-0 w/ all counts [linear]": 0.0302,
			"TF 2-0 total counts only [linear]": 0.0301, "TF 2-0 w/o counts": 0.0303, "TF(2,2)": 0.03}, 0.004), nil,
			map[string]string{"total counts only [linear] is worse": "inconclusive", "w/o counts is worse": "inconclusive", match: "inconclusive"}, "inconclusive"},
	} {
		if err := results.WriteJSON(dir, results.GapsFile, tc.gaps); err != nil {
			t.Fatal(err)
		}
		f, _, _ := fig8Section(cfg, &results.Merged{Res: tc.res}, map[string]*pipeline.Done{results.StageSynth: {Dir: dir}})
		if f.Verdict != tc.verdict || f.Agrees != (tc.verdict == "holds") || !strings.HasPrefix(f.Found, "Under the linear encoding: ") || strings.Contains(f.Found, "agrees with the paper") {
			t.Errorf("%s: verdict %q (want %q), found %q, checks %+v", tc.name, f.Verdict, tc.verdict, f.Found, f.Checks)
		}
		for claim, want := range tc.checks {
			if got := verdictOf(t, f, claim); got != want {
				t.Errorf("%s: check %q %s, want %s", tc.name, claim, got, want)
			}
		}
		for _, c := range f.Checks {
			if !strings.Contains(c.Numbers, "by seed: ") {
				t.Errorf("%s: check %q without per-seed verdicts: %s", tc.name, c.Claim, c.Numbers)
			}
		}
	}
	// seed 1 lacks "total counts only": its check is decided on seed 0
	res := build(clear, 0.001)
	var kept []eval.MethodResult
	for _, m := range res.Methods {
		if m.Name != "TF 2-0 total counts only [linear] [seed 1]" {
			kept = append(kept, m)
		}
	}
	res.Methods = kept
	f, _, _ := fig8Section(cfg, &results.Merged{Res: res}, map[string]*pipeline.Done{results.StageSynth: {Dir: dir}})
	for _, c := range f.Checks {
		want := "by seed: holds, holds"
		if strings.Contains(c.Claim, "total counts only") {
			want = "by seed: holds, no result"
		}
		if c.Verdict != "holds" || !strings.Contains(c.Numbers, want) {
			t.Errorf("total counts only missing on seed 1: %+v, want %q", c, want)
		}
	}
}

func gap(enc string, r int, m, h float64) results.SynthGap {
	return results.SynthGap{Encoding: enc, Replicate: r, SecondHalf: results.ToJSONInterval(eval.Interval{Mean: m, Lo: m - h, Hi: m + h}),
		Window: results.ToJSONInterval(eval.Interval{Mean: m, Lo: m - h, Hi: m + h})}
}
