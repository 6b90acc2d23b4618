package reproduce

import (
	"math"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/transformer"
)

// results builds an eval.Result of methods with the given second-half
// excesses over CTW (half-width h each).
func results(h float64, ms ...any) *eval.Result {
	iv := func(m, h float64) eval.Interval { return eval.Interval{Mean: m, Lo: m - h, Hi: m + h} }
	res := &eval.Result{Windows: 1000, N: 512}
	for i := 0; i < len(ms); i += 2 {
		ex := ms[i+1].(float64)
		res.Methods = append(res.Methods, eval.MethodResult{Name: ms[i].(string), ExcessSecondHalf: iv(ex, h), SecondHalf: iv(0.7+ex, h),
			ExcessWindow: iv(ex, h), Window: iv(0.7+ex, h)})
	}
	return res
}

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

// TestFig3Verdicts: the depth-5 run's numbers (TF(4,4) worse than the best
// fixed order) make Fig. 3's claim fail, with the check that says why;
// transformers that beat every fixed order make it hold; overlapping
// intervals make a check inconclusive.
func TestFig3Verdicts(t *testing.T) {
	cfg, _ := Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4", "4,4,4,4"}
	depth5 := results(0.006, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=2)", 0.073, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.076, "TF(4,4,4,4)", 0.023)
	f := findFig3(cfg, &merged{Res: depth5})
	if f.Verdict != "fails" || f.Agrees || strings.Contains(f.Found, "agrees with the paper") {
		t.Errorf("depth 5: verdict %q, agrees %v: %s", f.Verdict, f.Agrees, f.Found)
	}
	for claim, want := range map[string]string{
		"TF(4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4)":     "fails",
		"TF(4,4,4,4) tracks CTW better than the best fixed-order estimator, Markov(k=4)": "inconclusive",
		"The one-layer transformer is better than the unigram estimator":                 "holds",
		"only slightly":                         "holds",
		"KN is worse than TF(4,4,4,4)":          "holds",
		"KN is worse than TF(4,4).":             "holds",
		"TF(4,4,4,4) is not worse than TF(4,4)": "holds",
	} {
		if got := verdictOf(t, f, claim); got != want {
			t.Errorf("check %q: %s, want %s", claim, got, want)
		}
	}
	good := results(0.002, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.015, "TF(4,4,4,4)", 0.010)
	if f := findFig3(cfg, &merged{Res: good}); f.Verdict != "holds" || !f.Agrees {
		t.Errorf("transformers beating every fixed order: %q; %+v", f.Verdict, f.Checks)
	}
	// a one-layer model far better than unigram fails "only slightly"
	much := results(0.002, "CTW", 0.0, "Unigram", 0.283, "TF(4)", 0.05, "TF(4,4)", 0.015)
	cfg.Fig3Models = []string{"4", "4,4"}
	if got := verdictOf(t, findFig3(cfg, &merged{Res: much}), "only slightly"); got != "fails" {
		t.Errorf("one layer at 0.05 vs unigram 0.283: %s", got)
	}
}

// TestFig4Verdicts checks Fig. 4's checks: every variant worse than the
// full model, TF(1,1) vs TF(1,1,1) w/o FF, the training curve as a caveat
// (a variant whose loss still falls fast enough to close its gap makes
// the claim inconclusive, not failed; a slow fall against a large gap
// does not), the ×2 model beside its base, and no reference at all.
func TestFig4Verdicts(t *testing.T) {
	cfg, _ := Preset("depth5")
	res := results(0.005, "CTW", 0.0, "TF(4,4,4,4)", 0.02, "TF(4,4) attn-only", 0.25, "TF(4,4,4,4) attn-only", 0.23,
		"TF(1,1)", 0.18, "TF(1,1,1) w/o FF", 0.04, "TF(4,4) attn-only ×2 steps", 0.20)
	var flat, slow, falling []transformer.LogEntry
	for s := 50; s <= 6000; s += 50 {
		noise := 0.006 * math.Sin(float64(s)) // the batch noise of a real run: |drop| < 0.005 is not shown
		flat = append(flat, transformer.LogEntry{Step: s, TrainLoss: 0.9 + noise})
		slow = append(slow, transformer.LogEntry{Step: s, TrainLoss: 1 - 2e-5*float64(s) + noise})       // 0.03 per quarter
		falling = append(falling, transformer.LogEntry{Step: s, TrainLoss: 2 - 2e-4*float64(s) + noise}) // 0.3 per quarter
	}
	mg := &merged{Res: res, Logs: map[string][]transformer.LogEntry{"TF(4,4,4,4) attn-only": flat}}
	f := findFig4(cfg, mg)
	for claim, want := range map[string]string{
		"TF(4,4) attn-only is worse than the full":          "holds",
		"TF(4,4) attn-only ×2 steps is worse than the full": "holds",
		"TF(1,1) is the worse of the two":                   "holds",
		"TF(4,4,4,4) attn-only's training loss, falling at its rate of the last quarter, would not close its gap": "holds",
	} {
		if got := verdictOf(t, f, claim); got != want {
			t.Errorf("check %q: %s, want %s", claim, got, want)
		}
	}
	if f.Verdict != "holds" || !strings.Contains(f.Found, "TF(4,4) attn-only ×2 steps (0.200 ± 0.005) is clearly better than TF(4,4) attn-only") {
		t.Errorf("verdict %q: %s", f.Verdict, f.Found)
	}
	if c := convergenceOf(flat); c.Verdict() == holds {
		t.Errorf("noisy flat curve shown settled at ±%g: %s (the test's noise is too small)", ConvergenceTolerance, c)
	}
	// falling 0.03 per quarter against a gap of 0.21 ± 0.01: not an artefact
	mg.Logs["TF(4,4,4,4) attn-only"] = slow
	if f := findFig4(cfg, mg); f.Verdict != "holds" || verdictOf(t, f, "would not close") != "holds" {
		t.Errorf("falling slowly: verdict %q, %+v", f.Verdict, f.Checks)
	}
	// falling 0.3 per quarter: the caveat fails, the claim is inconclusive
	mg.Logs["TF(4,4,4,4) attn-only"] = falling
	if f := findFig4(cfg, mg); f.Verdict != "inconclusive" || verdictOf(t, f, "would not close") != "fails" {
		t.Errorf("still falling: verdict %q", f.Verdict)
	}
	// a variant within noise of the full model: inconclusive; clearly
	// better than it: the claim fails
	res.Methods[2].ExcessSecondHalf = eval.Interval{Mean: 0.02, Lo: 0.015, Hi: 0.025}
	if f := findFig4(cfg, &merged{Res: res}); f.Verdict != "inconclusive" {
		t.Errorf("a variant as good as the full model: %q", f.Verdict)
	}
	res.Methods[2].ExcessSecondHalf = eval.Interval{Mean: 0.005, Lo: 0.003, Hi: 0.007}
	if f := findFig4(cfg, &merged{Res: res}); f.Verdict != "fails" {
		t.Errorf("a variant better than the full model: %q", f.Verdict)
	}
	// no full reference: inconclusive, not failed
	cfg.Fig3Models = []string{"4-sin"}
	if f := findFig4(cfg, &merged{Res: res}); f.Verdict != "inconclusive" {
		t.Errorf("no reference: %q", f.Verdict)
	}
}

// TestNotWorse: "not worse" is a non-inferiority test at
// NonInferiorityMargin on the interval of the difference (unpaired from
// the two intervals, or paired across windows); an undefined interval
// decides nothing.
func TestNotWorse(t *testing.T) {
	iv := func(m, h float64) eval.Interval { return eval.Interval{Mean: m, Lo: m - h, Hi: m + h} }
	nan := eval.Interval{Mean: 0.5, Lo: math.NaN(), Hi: math.NaN()}
	for _, tc := range []struct {
		a, b eval.Interval
		want verdict
	}{
		{iv(0.02, 0.005), iv(0.03, 0.005), holds},      // difference in [−0.02, 0]
		{iv(0.032, 0.001), iv(0.03, 0.001), holds},     // [0, 0.004]: worse, but within the margin
		{iv(0.033, 0.005), iv(0.03, 0.005), undecided}, // [−0.007, 0.013]
		{iv(0.05, 0.005), iv(0.03, 0.005), fails},      // [0.01, 0.03]
		{nan, iv(0.02, 0.005), undecided},
		{iv(0.5, 0.1), nan, undecided},
	} {
		a, b := &eval.MethodResult{Name: "a", ExcessSecondHalf: tc.a}, &eval.MethodResult{Name: "b", ExcessSecondHalf: tc.b}
		if v, _ := notWorse(a, b); v != tc.want {
			t.Errorf("%+v vs %+v: %s, want %s", tc.a, tc.b, v, tc.want)
		}
	}
	// paired across 1000 windows: worse by a clear but negligible 0.001
	// holds; by a clear 0.008, fails; by 0.005 ± 0.007, inconclusive
	for _, tc := range []struct {
		shift, noise float64
		want         verdict
	}{{0.001, 0.001, holds}, {0.008, 0.001, fails}, {0.005, 0.1, undecided}} {
		a := &eval.MethodResult{Name: "a", ExcessSecondHalf: iv(0.03, 0.01)}
		b := &eval.MethodResult{Name: "b", ExcessSecondHalf: iv(0.03, 0.01)}
		for j := range 1000 {
			x := 0.7 + 0.3*math.Sin(float64(j))
			a.SecondHalfWindows = append(a.SecondHalfWindows, x+tc.shift+tc.noise*math.Cos(float64(7*j)))
			b.SecondHalfWindows = append(b.SecondHalfWindows, x)
		}
		if v, text := notWorse(a, b); v != tc.want || !strings.Contains(text, "paired difference") {
			t.Errorf("paired, a worse by %g (noise %g): %s (%s), want %s", tc.shift, tc.noise, v, text, tc.want)
		}
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
	cfg, _ := Preset("depth5")
	m, err := ParseModel("4,4-ff-ln-x2")
	if err != nil || m.Budget != 2 || m.Label() != "TF(4,4) attn-only ×2 steps" || m.Slug() != "h4-4-noff-noln-x2" {
		t.Fatalf("%+v %q %q %v", m, m.Label(), m.Slug(), err)
	}
	if got := m.TrainConfig(cfg).MaxSteps; got != 2*cfg.MaxSteps {
		t.Errorf("max steps %d, want %d", got, 2*cfg.MaxSteps)
	}
	base, _ := ParseModel("4,4-ff-ln")
	if base.TrainConfig(cfg) != cfg.TrainConfig() {
		t.Error("a model without -xK trains with the study's configuration")
	}
	for _, bad := range []string{"4-x1", "4-x", "4-y2", "4-x101", "4-x-2"} {
		if _, err := ParseModel(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestAcrossReplicates decides Fig. 3's checks on each training seed: a
// check that holds for seed 0 but fails for the two others fails; one that
// holds for all holds.
func TestAcrossReplicates(t *testing.T) {
	cfg, _ := Preset("depth5")
	cfg.Fig3Models = []string{"4", "4,4"}
	cfg.Seeds = 3
	res := results(0.004, "CTW", 0.0, "Unigram", 0.283, "KN(D=5)", 0.099, "Markov(k=4)", 0.031,
		"TF(4)", 0.233, "TF(4,4)", 0.020,
		"TF(4) [seed 1]", 0.234, "TF(4,4) [seed 1]", 0.060,
		"TF(4) [seed 2]", 0.236, "TF(4,4) [seed 2]", 0.070)
	f := acrossReplicates(cfg, &merged{Res: res}, findFig3)
	if got := verdictOf(t, f, "TF(4,4) tracks CTW better than the best fixed-order"); got != "fails" {
		t.Errorf("beats Markov(4) with seed 0 only: %s", got)
	}
	if got := verdictOf(t, f, "KN is worse than TF(4,4)"); got != "holds" {
		t.Errorf("KN worse for every seed: %s", got)
	}
	for _, c := range f.Checks {
		if !strings.Contains(c.Numbers, "by seed: ") {
			t.Errorf("check %q without per-seed verdicts: %s", c.Claim, c.Numbers)
		}
	}
	if f.Verdict != "fails" || !strings.Contains(f.Summary, "3 training seeds") {
		t.Errorf("verdict %q, summary %q", f.Verdict, f.Summary)
	}
	// replicates 1 and 2 of TF(4) missing: the checks that need it are
	// decided on seed 0 alone, the others on all three, and the summary
	// says so
	var part []eval.MethodResult
	for _, m := range res.Methods {
		if !strings.HasPrefix(m.Name, "TF(4) [seed") {
			part = append(part, m)
		}
	}
	pres := *res
	pres.Methods = part
	f = acrossReplicates(cfg, &merged{Res: &pres}, findFig3)
	if got := verdictOf(t, f, "TF(4,4) tracks CTW better than the best fixed-order"); got != "fails" {
		t.Errorf("TF(4) missing on seeds 1–2: TF(4,4)'s check %s, want fails (seeds 1 and 2 vote)", got)
	}
	for _, c := range f.Checks {
		if strings.Contains(c.Claim, "one-layer") && !strings.Contains(c.Numbers, "by seed: holds, no result, no result") {
			t.Errorf("check %q: %s", c.Claim, c.Numbers)
		}
	}
	if !strings.Contains(f.Summary, "on fewer seeds") {
		t.Errorf("summary does not say some checks had fewer seeds: %q", f.Summary)
	}
	// with seed 0 alone the same check holds
	cfg.Seeds = 1
	if got := verdictOf(t, acrossReplicates(cfg, &merged{Res: res}, findFig3), "TF(4,4) tracks CTW better"); got != "holds" {
		t.Errorf("seed 0 alone: %s", got)
	}
}

// TestWorsePaired: with per-window losses the paired interval decides,
// also where the two intervals across windows overlap.
func TestWorsePaired(t *testing.T) {
	iv := func(m, h float64) eval.Interval { return eval.Interval{Mean: m, Lo: m - h, Hi: m + h} }
	n := 200
	a := &eval.MethodResult{Name: "a", ExcessSecondHalf: iv(0.052, 0.01)}
	b := &eval.MethodResult{Name: "b", ExcessSecondHalf: iv(0.050, 0.01)}
	if v, _ := worse(a, b); v != undecided {
		t.Fatalf("overlapping intervals, no per-window values: %s", v)
	}
	for j := range n {
		x := 0.7 + 0.3*math.Sin(float64(j)) // large spread across windows
		a.SecondHalfWindows = append(a.SecondHalfWindows, x+0.002+0.0005*math.Cos(float64(3*j)))
		b.SecondHalfWindows = append(b.SecondHalfWindows, x)
	}
	v, text := worse(a, b)
	if v != holds || !strings.Contains(text, "paired difference +0.0020") {
		t.Errorf("a consistently 0.002 above b: %s (%s)", v, text)
	}
	if v, _ := worse(b, a); v != fails {
		t.Errorf("b against a: %s", v)
	}
	if r := relation(a, b); r != "clearly worse than" {
		t.Errorf("relation %q", r)
	}
	if v, _ := worse(a, a); v != undecided {
		t.Errorf("a against itself: %s", v)
	}
}
