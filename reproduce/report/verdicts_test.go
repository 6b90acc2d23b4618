package report

import (
	"math"
	rand "math/rand/v2"
	"strings"
	"testing"

	"github.com/vomc/vomc/attnmap"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
)

// testWindows is the number of test windows of the constructed results.
const testWindows = 1000

// resultsOf builds an eval.Result with per-window losses on testWindows
// windows: every method's loss over a half of window w is a difficulty
// shared by all methods (so comparisons are paired), plus the method's
// excess (the numbers given, for both halves), plus independent noise
// whose SD makes an excess interval about ±h wide. The first method is the
// reference. Intervals and excesses are computed from the per-window
// values as eval computes them.
func resultsOf(h float64, ms ...any) *eval.Result {
	res := &eval.Result{Windows: testWindows, N: 512, Confidence: 0.95, SecondHalfStart: 257}
	sigma := h * math.Sqrt(testWindows) / (1.96 * math.Sqrt2)
	for i := 0; i < len(ms); i += 2 {
		ex := ms[i+1].(float64)
		rng := rand.New(rand.NewPCG(uint64(i), 77))
		m := eval.MethodResult{Name: ms[i].(string)}
		for w := range testWindows {
			base := 0.7 + 0.2*math.Sin(float64(w))
			m.SecondHalfWindows = append(m.SecondHalfWindows, base+ex+sigma*rng.NormFloat64())
			m.FirstHalfWindows = append(m.FirstHalfWindows, base+0.05+ex+sigma*rng.NormFloat64())
		}
		res.Methods = append(res.Methods, m)
	}
	recompute(res)
	return res
}

// recompute sets every method's intervals from its per-window values.
func recompute(res *eval.Result) {
	ref := &res.Methods[res.Reference]
	for i := range res.Methods {
		m := &res.Methods[i]
		m.SecondHalf = eval.MeanInterval(m.SecondHalfWindows, 0.95)
		whole := make([]float64, len(m.SecondHalfWindows))
		for w := range whole {
			whole[w] = (m.FirstHalfWindows[w] + m.SecondHalfWindows[w]) / 2
		}
		m.Window = eval.MeanInterval(whole, 0.95)
		d, _ := eval.PairedSecondHalf(m, ref, 0.95)
		m.ExcessSecondHalf, m.ExcessWindow = d, d
	}
}

// setFirst sets a method's first-half excess (shifting its first-half
// per-window losses).
func setFirst(res *eval.Result, name string, ex float64) {
	m, ref := res.Method(name), res.Ref()
	d, _ := eval.PairedFirstHalf(m, ref, 0.95)
	for w := range m.FirstHalfWindows {
		m.FirstHalfWindows[w] += ex - d.Mean
	}
	recompute(res)
}

// shift moves a method's loss (both halves) by delta.
func shift(res *eval.Result, name string, delta float64) {
	m := res.Method(name)
	for w := range m.SecondHalfWindows {
		m.SecondHalfWindows[w] += delta
		m.FirstHalfWindows[w] += delta
	}
	recompute(res)
}

// mergedOf is a merged result whose validation results are the test
// resultsOf themselves (selections as on the test windows).
func mergedOf(res *eval.Result) *results.Merged { return &results.Merged{Res: res, Val: res} }

// verdictOf returns the verdict of the check whose claim contains s.
func verdictOf(t *testing.T, f Finding, s string) string {
	t.Helper()
	for _, c := range f.Checks {
		if strings.Contains(c.Claim, s) {
			return c.Verdict
		}
	}
	t.Fatalf("no check %q among %+v", s, f.Checks)
	return ""
}

// fig3Good are numbers under which every part of Fig. 3's claim holds:
// transformers of two and four layers beat every fixed order in both
// halves, KN's gap is larger late.
func fig3Good() *eval.Result {
	res := resultsOf(0.002, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.015, "TF(4,4,4,4)", 0.012)
	setFirst(res, "KN(D=5)", 0.05)
	return res
}

// TestFig3Verdicts: the depth-5 run's numbers (TF(4,4) worse than the best
// fixed order) make Fig. 3's claim fail, with the check that says why;
// transformers that beat every fixed order make it hold; and every check
// is made to fail, one at a time, by changing one number.
func TestFig3Verdicts(t *testing.T) {
	cfg, _ := study.Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4", "4,4,4,4"}
	cfg.Seeds = 1
	depth5 := resultsOf(0.006, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=2)", 0.073, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.076, "TF(4,4,4,4)", 0.026)
	f := findFig3(cfg, mergedOf(depth5))
	if f.Verdict != "fails" || f.Agrees {
		t.Errorf("depth 5: verdict %q, agrees %v: %s", f.Verdict, f.Agrees, f.Found)
	}
	for claim, want := range map[string]string{
		"TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the second half":     "fails",
		"TF(4,4,4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the second half": "inconclusive",
		"The one-layer transformer is better than the unigram estimator":                                       "holds",
		"only slightly":                         "holds",
		"KN is worse than TF(4,4,4,4)":          "holds",
		"KN is worse than TF(4,4).":             "holds",
		"TF(4,4,4,4) is not worse than TF(4,4)": "holds",
		"larger late in the window":             "inconclusive", // no difference, but noisy
	} {
		if got := verdictOf(t, f, claim); got != want {
			t.Errorf("check %q: %s, want %s", claim, got, want)
		}
	}
	good := findFig3(cfg, mergedOf(fig3Good()))
	if good.Verdict != "holds" || !good.Agrees {
		t.Fatalf("transformers beating every fixed order: %q; %+v", good.Verdict, good.Checks)
	}
	// each check made to fail by one change (and holding in good)
	for _, tc := range []struct {
		claim  string
		change func(*eval.Result)
	}{
		{"The one-layer transformer is better than the unigram", func(r *eval.Result) { shift(r, "TF(4)", 0.30-0.233) }},
		{"only slightly", func(r *eval.Result) { shift(r, "TF(4)", 0.05-0.233) }},
		{"The one-layer transformer is worse than TF(4,4).", func(r *eval.Result) { shift(r, "TF(4)", 0.015-0.233) }},
		{"TF(4,4,4,4) is not worse than TF(4,4)", func(r *eval.Result) { shift(r, "TF(4,4,4,4)", 0.03-0.012) }},
		{"KN is worse than TF(4,4).", func(r *eval.Result) { shift(r, "KN(D=5)", 0.015-0.099) }},
		{"larger late in the window", func(r *eval.Result) { setFirst(r, "KN(D=5)", 0.099) }},
		{"TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the second half", func(r *eval.Result) { shift(r, "TF(4,4)", 0.05-0.015) }},
		{"TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the first half", func(r *eval.Result) { setFirst(r, "TF(4,4)", 0.06) }},
	} {
		if got := verdictOf(t, good, tc.claim); got != "holds" {
			t.Errorf("%q in the good numbers: %s", tc.claim, got)
		}
		res := fig3Good()
		tc.change(res)
		f := findFig3(cfg, mergedOf(res))
		if got := verdictOf(t, f, tc.claim); got != "fails" {
			t.Errorf("%q after its change: %s, want fails", tc.claim, got)
		}
		if f.Verdict != "fails" {
			t.Errorf("%q failing: the claim's verdict is %q", tc.claim, f.Verdict)
		}
	}
	// a 0.004-nat difference (within the margin) cannot make "worse" hold
	res := fig3Good()
	shift(res, "TF(4)", 0.015+0.004-0.233) // TF(4) 0.004 above TF(4,4)
	if got := verdictOf(t, findFig3(cfg, mergedOf(res)), "The one-layer transformer is worse than TF(4,4)."); got == "holds" {
		t.Errorf("a difference of 0.004 < margin %g decided 'worse'", Margin)
	}
}

// TestSelectionOnValidation: the best fixed order and the best transformer
// are those of the validation windows, not of the test windows.
func TestSelectionOnValidation(t *testing.T) {
	cfg, _ := study.Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4", "4,4,4,4"}
	cfg.Seeds = 1
	test := fig3Good()
	val := resultsOf(0.002, "CTW", 0.0, "Markov(k=3)", 0.02, "Markov(k=4)", 0.05, "TF(4)", 0.2, "TF(4,4)", 0.01, "TF(4,4,4,4)", 0.03)
	test.Methods = append(test.Methods, resultsOf(0.002, "CTW", 0.0, "Markov(k=3)", 0.04).Methods[1])
	recompute(test)
	mg := &results.Merged{Res: test, Val: val}
	if b := results.SelectedFixedOrder(mg); b == nil || b.Name != "Markov(k=3)" {
		t.Errorf("best fixed order %v, want Markov(k=3) (best on validation, not on test)", b)
	}
	if b := selectedTransformer(cfg, mg); b == nil || b.Name != "TF(4,4)" {
		t.Errorf("best transformer %v, want TF(4,4)", b)
	}
	if selectedTransformer(cfg, &results.Merged{Res: test}) != nil {
		t.Error("a best transformer without validation results")
	}
}

// TestHolm checks the adjustment and that it changes a verdict: a check
// with p = 0.02 holds alone at Alpha = 0.025 but not among three.
func TestHolm(t *testing.T) {
	got := eval.Holm([]float64{0.01, 0.04, 0.03, 0.5})
	want := []float64{0.04, 0.09, 0.09, 0.5}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("holm %v, want %v", got, want)
		}
	}
	one := Finding{Claim: "c"}
	one.test("a", test{OK: true, PHold: 0.02, PFail: 0.98})
	one.settle()
	three := Finding{Claim: "c"}
	three.test("a", test{OK: true, PHold: 0.02, PFail: 0.98})
	three.test("b", test{OK: true, PHold: 0.3, PFail: 0.7})
	three.test("c", test{OK: true, PHold: 0.4, PFail: 0.6})
	three.settle()
	if one.Checks[0].Verdict != "holds" || three.Checks[0].Verdict != "inconclusive" {
		t.Errorf("p = 0.02 alone: %s; among three: %s", one.Checks[0].Verdict, three.Checks[0].Verdict)
	}
}

// TestComparisons checks worse, notWorse and equivalent on paired
// numbers: one margin for all three, complementary verdicts for worse and
// notWorse, and undefined comparisons inconclusive.
func TestComparisons(t *testing.T) {
	for _, tc := range []struct {
		diff  float64
		worse verdict
		equiv verdict
	}{
		{0.020, holds, fails},
		{0.003, fails, holds},
		{-0.003, fails, holds},
		{0.005, undecided, undecided},
		{-0.020, fails, fails},
	} {
		res := resultsOf(0.001, "CTW", 0.0, "a", 0.03+tc.diff, "b", 0.03)
		a, b := res.Method("a"), res.Method("b")
		if v := worse(a, b).verdict(); v != tc.worse {
			t.Errorf("difference %+.3f: worse %s, want %s", tc.diff, v, tc.worse)
		}
		nw := notWorse(a, b).verdict()
		if (tc.worse == holds && nw != fails) || (tc.worse == fails && nw != holds) || (tc.worse == undecided && nw != undecided) {
			t.Errorf("difference %+.3f: notWorse %s is not worse's complement (%s)", tc.diff, nw, tc.worse)
		}
		if v := equivalent(a, b, Margin).verdict(); v != tc.equiv {
			t.Errorf("difference %+.3f: equivalent %s, want %s", tc.diff, v, tc.equiv)
		}
	}
	// no per-window values and no SD: nothing to decide
	a, b := &eval.MethodResult{Name: "a"}, &eval.MethodResult{Name: "b"}
	if v := worse(a, b).verdict(); v != undecided {
		t.Errorf("undefined: %s", v)
	}
	if r := relation(resultsOf(0.001, "CTW", 0.0, "a", 0.05).Method("a"), resultsOf(0.001, "CTW", 0.0, "b", 0.01).Method("b")); r == "" {
		t.Error("no relation")
	}
}

// TestFig4Verdicts checks Fig. 4's checks, each made to hold and to fail:
// every variant worse than the full model, TF(1,1) vs TF(1,1,1) w/o FF, the
// longer-trained copy still worse, and the caveat that its gain is small
// against its remaining gap (failing: the claim is inconclusive).
func TestFig4Verdicts(t *testing.T) {
	cfg, _ := study.Preset("depth5")
	cfg.Seeds = 1
	mk := func() *eval.Result {
		return resultsOf(0.004, "CTW", 0.0, "TF(4,4,4,4)", 0.02, "TF(4,4) attn-only", 0.25, "TF(4,4,4,4) attn-only", 0.23,
			"TF(1,1)", 0.18, "TF(1,1,1) w/o FF", 0.04, "TF(4,4) attn-only ×2 steps", 0.245)
	}
	f := findFig4(cfg, mergedOf(mk()))
	for claim, want := range map[string]string{
		"TF(4,4) attn-only is worse than the full":                 "holds",
		"TF(1,1) is the worse of the two":                          "holds",
		"Trained 2 times longer, TF(4,4) attn-only is still worse": "holds",
		"TF(4,4) attn-only's gap is not closing with budget":       "holds",
	} {
		if got := verdictOf(t, f, claim); got != want {
			t.Errorf("check %q: %s, want %s", claim, got, want)
		}
	}
	if f.Verdict != "holds" || !strings.Contains(f.Found, "Whether the gaps of TF(4,4,4,4) attn-only, TF(1,1), TF(1,1,1) w/o FF are training-budget artefacts was not tested") {
		t.Errorf("verdict %q: %s", f.Verdict, f.Found)
	}
	for _, tc := range []struct {
		claim, verdict string
		change         func(*eval.Result)
	}{
		{"TF(4,4) attn-only is worse than the full", "fails", func(r *eval.Result) { shift(r, "TF(4,4) attn-only", 0.0-0.25) }},
		{"TF(1,1) is the worse of the two", "fails", func(r *eval.Result) { shift(r, "TF(1,1)", 0.03-0.18) }},
		{"Trained 2 times longer, TF(4,4) attn-only is still worse", "fails", func(r *eval.Result) { shift(r, "TF(4,4) attn-only ×2 steps", 0.0-0.245) }},
		{"TF(4,4) attn-only's gap is not closing with budget", "inconclusive", func(r *eval.Result) { shift(r, "TF(4,4) attn-only ×2 steps", 0.15-0.245) }},
	} {
		res := mk()
		tc.change(res)
		f := findFig4(cfg, mergedOf(res))
		if got := verdictOf(t, f, tc.claim); got != "fails" {
			t.Errorf("%q after its change: %s, want fails", tc.claim, got)
		}
		if f.Verdict != tc.verdict {
			t.Errorf("%q failing: claim %q, want %q", tc.claim, f.Verdict, tc.verdict)
		}
	}
	// no full reference: inconclusive, not failed
	cfg.Fig3Models = []string{"4-sin"}
	if f := findFig4(cfg, mergedOf(mk())); f.Verdict != "inconclusive" {
		t.Errorf("no reference: %q", f.Verdict)
	}
	_ = transformer.LogEntry{}
}

// TestFig5Verdicts: a model with a layer-1 offset head and a layer-2
// suffix head of k = 3 that beats the best fixed order holds; a bigram
// model (its "suffix" head matches k = 1) fails; a one-layer model fails.
func TestFig5Verdicts(t *testing.T) {
	cfg, _ := study.Preset("small")
	cfg.Seeds = 1
	head := func(layer, h int, kind attnmap.Kind, d, k int) attnmap.HeadScore {
		return attnmap.HeadScore{Layer: layer, Head: h, Labelled: true, Best: attnmap.Score{Kind: kind, D: d, K: k, PAdj: 1e-6}}
	}
	res := resultsOf(0.002, "CTW", 0.0, "Markov(k=3)", 0.04, "TF(4,4)", 0.02, "TF(1,1)", 0.3)
	good := results.Fig5Info{Model: "TF(4,4)", Scores: []attnmap.HeadScore{head(1, 1, attnmap.Relative, 1, 0), head(2, 1, attnmap.SuffixMatch, 0, 3)}}
	f := Finding{Claim: "c"}
	cfg.HeatmapModel = "4,4"
	fig5Checks(&f, good, cfg, mergedOf(res))
	if f.Verdict != "holds" {
		t.Errorf("offset and k=3 suffix heads in TF(4,4): %s %+v", f.Verdict, f.Checks)
	}
	bigram := results.Fig5Info{Model: "TF(1,1)", Scores: []attnmap.HeadScore{head(1, 1, attnmap.Relative, 1, 0), head(2, 1, attnmap.SuffixMatch, 0, 1)}}
	f = Finding{Claim: "c"}
	cfg.Fig3Models = append(cfg.Fig3Models, "1,1")
	cfg.HeatmapModel = "1,1"
	fig5Checks(&f, bigram, cfg, mergedOf(res))
	if f.Verdict != "fails" || verdictOf(t, f, "length-k suffix (k ≥ 2)") != "fails" || verdictOf(t, f, "tracks CTW better") != "fails" {
		t.Errorf("a bigram model: %s %+v", f.Verdict, f.Checks)
	}
	f = Finding{Claim: "c"}
	cfg.HeatmapModel = "4"
	fig5Checks(&f, good, cfg, mergedOf(res))
	if verdictOf(t, f, "two or more layers") != "fails" {
		t.Errorf("one layer: %+v", f.Checks)
	}
	f = Finding{Claim: "c"}
	cfg.HeatmapModel = "4,4"
	fig5Checks(&f, results.Fig5Info{Model: "TF(4,4)", Scores: []attnmap.HeadScore{head(2, 1, attnmap.SuffixMatch, 0, 3)}}, cfg, mergedOf(res))
	if verdictOf(t, f, "layer-1 head attends a fixed") != "fails" {
		t.Errorf("no offset head: %+v", f.Checks)
	}
}

// TestAcrossReplicates decides Fig. 3's checks on each training seed: a
// check that holds for seed 0 but fails for the two others fails; one that
// holds for all holds; the numbers say in how many seeds.
func TestAcrossReplicates(t *testing.T) {
	cfg, _ := study.Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4"}
	cfg.Seeds = 3
	res := resultsOf(0.004, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.012,
		"TF(4) [seed 1]", 0.234, "TF(4,4) [seed 1]", 0.060,
		"TF(4) [seed 2]", 0.236, "TF(4,4) [seed 2]", 0.070)
	f := acrossReplicates(cfg, mergedOf(res), findFig3)
	if got := verdictOf(t, f, "TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the second half"); got != "fails" {
		t.Errorf("beats Markov(4) with seed 0 only: %s", got)
	}
	if got := verdictOf(t, f, "KN is worse than TF(4,4)"); got != "holds" {
		t.Errorf("KN worse for every seed: %s", got)
	}
	for _, c := range f.Checks {
		if !strings.Contains(c.Numbers, "by seed: ") || !strings.Contains(c.Numbers, " of 3 seeds") {
			t.Errorf("check %q without per-seed verdicts: %s", c.Claim, c.Numbers)
		}
	}
	if f.Verdict != "fails" || !strings.Contains(f.Summary, "3 training seeds") {
		t.Errorf("verdict %q, summary %q", f.Verdict, f.Summary)
	}
	// replicates 1 and 2 of TF(4) missing: the checks that need it are
	// decided on seed 0 alone, and the summary says so
	var part []eval.MethodResult
	for _, m := range res.Methods {
		if !strings.HasPrefix(m.Name, "TF(4) [seed") {
			part = append(part, m)
		}
	}
	pres := *res
	pres.Methods = part
	f = acrossReplicates(cfg, mergedOf(&pres), findFig3)
	for _, c := range f.Checks {
		if strings.Contains(c.Claim, "one-layer") && !strings.Contains(c.Numbers, "by seed: holds, no result, no result") {
			t.Errorf("check %q: %s", c.Claim, c.Numbers)
		}
	}
	if !strings.Contains(f.Summary, "on fewer seeds") {
		t.Errorf("summary does not say some checks had fewer seeds: %q", f.Summary)
	}
	cfg.Seeds = 1
	if got := verdictOf(t, acrossReplicates(cfg, mergedOf(res), findFig3), "TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4), over the second half"); got != "holds" {
		t.Errorf("seed 0 alone: %s", got)
	}
}

// TestWithin checks the equivalence rule of within.
func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   verdict
	}{
		{-0.004, 0.004, holds}, {0.001, 0.005, holds}, {0.002, 0.006, undecided}, {-0.01, 0.01, undecided},
		{0.0051, 0.02, fails}, {-0.02, -0.006, fails}, {math.NaN(), math.NaN(), undecided},
	} {
		if v := within(tc.lo, tc.hi, 0.005); v != tc.want {
			t.Errorf("[%g, %g]: %s, want %s", tc.lo, tc.hi, v, tc.want)
		}
	}
}

// TestConvergence fits the last quarter of synthetic training logs.
func TestConvergence(t *testing.T) {
	log := func(f func(s float64) float64, every int) []transformer.LogEntry {
		var h []transformer.LogEntry
		for s := every; s <= 4000; s += every {
			h = append(h, transformer.LogEntry{Step: s, TrainLoss: f(float64(s))})
		}
		return h
	}
	noise := func(s float64) float64 { return 0.002 * math.Sin(s*12.9898) }
	for _, tc := range []struct {
		name string
		h    []transformer.LogEntry
		want verdict
		drop float64 // expected Drop (±0.002)
	}{
		{"flat", log(func(s float64) float64 { return 0.8 + noise(s) }, 50), holds, 0},
		{"falling 0.02 per 1000 steps", log(func(s float64) float64 { return 1 - 2e-5*s + noise(s) }, 50), fails, 0.02},
		{"rising 0.02 per 1000 steps", log(func(s float64) float64 { return 1 + 2e-5*s + noise(s) }, 50), fails, -0.02},
		{"falling slowly", log(func(s float64) float64 { return 1 - 1e-6*s + noise(s) }, 50), holds, 0.001},
		{"too few points", log(func(s float64) float64 { return 1 }, 1000), undecided, 0},
	} {
		c := convergenceOf(tc.h)
		if c.Verdict() != tc.want || math.Abs(c.Drop-tc.drop) > 0.002 {
			t.Errorf("%s: %s (drop %.4f ± %.4f, %d points); want %s, drop %.3f", tc.name, c, c.Drop, c.DropCI, c.Points, tc.want, tc.drop)
		}
	}
	// a noisy, slightly falling curve: the interval straddles the tolerance
	wide := log(func(s float64) float64 { return 1 - 1.5e-6*4*s/1 + 0.05*math.Sin(s*7.77) }, 200)
	if c := convergenceOf(wide); c.Verdict() != undecided {
		t.Errorf("noisy: %s", c)
	}
}

// TestModelBudget checks the -xK suffix.
func TestModelBudget(t *testing.T) {
	cfg, _ := study.Preset("depth5")
	m, err := study.ParseModel("4,4-ff-ln-x2")
	if err != nil || m.Budget != 2 || m.Label() != "TF(4,4) attn-only ×2 steps" || m.Slug() != "h4-4-noff-noln-x2" {
		t.Fatalf("%+v %q %q %v", m, m.Label(), m.Slug(), err)
	}
	if got := m.TrainConfig(cfg).MaxSteps; got != 2*cfg.MaxSteps {
		t.Errorf("max steps %d, want %d", got, 2*cfg.MaxSteps)
	}
	base, _ := study.ParseModel("4,4-ff-ln")
	if base.TrainConfig(cfg) != cfg.TrainConfig() {
		t.Error("a model without -xK trains with the study's configuration")
	}
	for _, bad := range []string{"4-x1", "4-x", "4-y2", "4-x101", "4-x-2"} {
		if _, err := study.ParseModel(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestReviewFindings: the report's relation words and missing selections
// (an adversarial review of 2026-11-27): equal or slightly worse models are
// not called "clearly better"; without validation results the checks that
// need a selection are inconclusive, so a claim cannot pass by losing them.
func TestReviewFindings(t *testing.T) {
	res := resultsOf(0.002, "CTW", 0.0, "a", 0.030, "b", 0.030, "c", 0.033, "d", 0.060)
	a, b, c, d := res.Method("a"), res.Method("b"), res.Method("c"), res.Method("d")
	for _, tc := range []struct {
		x, y *eval.MethodResult
		not  string
	}{{a, a, "clearly"}, {a, b, "clearly"}, {c, a, "clearly better"}} {
		if r := relation(tc.x, tc.y); strings.Contains(r, tc.not) {
			t.Errorf("relation(%s, %s) = %q", tc.x.Name, tc.y.Name, r)
		}
	}
	if r := relation(d, a); r != "clearly worse than" {
		t.Errorf("relation(d, a) = %q", r)
	}
	if r := relation(a, d); r != "clearly better than" {
		t.Errorf("relation(a, d) = %q", r)
	}
	// Fig. 3: both transformers worse than Markov(4); with validation
	// results the claim fails, without them it must not hold
	cfg, _ := study.Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4", "4,4,4,4"}
	cfg.Seeds = 1
	worseThanMarkov := resultsOf(0.002, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.041, "TF(4,4,4,4)", 0.040)
	setFirst(worseThanMarkov, "KN(D=5)", 0.05)
	if f := findFig3(cfg, mergedOf(worseThanMarkov)); f.Verdict != "fails" {
		t.Errorf("with validation results: %s", f.Verdict)
	}
	f := findFig3(cfg, &results.Merged{Res: worseThanMarkov})
	if f.Verdict == "holds" || verdictOf(t, f, "TF(4,4) tracks CTW better than the best fixed-order estimator over the whole window") != "inconclusive" {
		t.Errorf("without validation results: %s %+v", f.Verdict, f.Checks)
	}
}
