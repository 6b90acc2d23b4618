package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"gonum.org/v1/gonum/stat"
)

// ladderResults are constructed results of the ladder's models: TF(4,4)
// at ×1/×2/×4 (two seeds, the same excess for both), TF(4,4,4) ×4 and
// Markov(4), second-half excesses over the reference as given.
func ladderResults(x1, x2, x4, deep, markov4 float64) *results.Merged {
	res := resultsOf(0.003, "Bayes(D=1..5)", 0.0, "CTW(D=5)", 0.01, "Markov(k=4,α=0.5)", markov4,
		"TF(4,4)", x1, "TF(4,4) [seed 1]", x1,
		"TF(4,4) ×2 steps", x2, "TF(4,4) ×2 steps [seed 1]", x2,
		"TF(4,4) ×4 steps", x4, "TF(4,4) ×4 steps [seed 1]", x4,
		"TF(4,4,4) ×4 steps", deep)
	return mergedOf(res)
}

// holding is a profile whose layer-1 head 2 keeps w on the previous key
// at every query.
func holding(w float64) results.LadderProfile {
	prev := make([][]float64, 4)
	for h := range prev {
		prev[h] = make([]float64, 512)
		for q := 1; q < 512; q++ {
			prev[h][q] = 0.1
			if h == 1 {
				prev[h][q] = w
			}
		}
	}
	return results.LadderProfile{Prev: prev}
}

func ladderProfiles(w float64) map[string]results.LadderProfile {
	return map[string]results.LadderProfile{"TF(4,4) ×4 steps": holding(w), "TF(4,4) ×4 steps [seed 1]": holding(w)}
}

// TestLadderRule applies the committed rule to constructed numbers: each
// of its three outcomes, and each criterion failing on its own.
func TestLadderRule(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	for _, tc := range []struct {
		name     string
		mg       *results.Merged
		profiles map[string]results.LadderProfile
		want     string
		extra    string
	}{
		{"artefact", ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), ladderProfiles(0.95), "budget artefact", ""},
		{"B fails", ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), ladderProfiles(0.5), "inconclusive", "what keeps the verdict inconclusive is that (B) does not hold"},
		{"C fails", ladderResults(0.08, 0.05, 0.02, 0.04, 0.04), ladderProfiles(0.95), "inconclusive", "what keeps the verdict inconclusive is that (C) does not hold"},
		{"B and C fail", ladderResults(0.08, 0.05, 0.02, 0.04, 0.04), ladderProfiles(0.5), "inconclusive", "that (B) and (C) do not hold"},
		{"A fails", ladderResults(0.08, 0.06, 0.04, 0.041, 0.04), ladderProfiles(0.95), "inconclusive", ""},
		{"not an artefact", ladderResults(0.081, 0.0805, 0.08, 0.09, 0.04), ladderProfiles(0.95), "not a budget artefact", ""},
		{"still improving", ladderResults(0.12, 0.09, 0.06, 0.07, 0.04), ladderProfiles(0.95), "inconclusive", "reaches"},
		{"B fails, the loss extrapolated", ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), ladderProfiles(0.5), "inconclusive", "reaches"},
		{"B undecided (no profiles)", ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), nil, "inconclusive", "that (B) does not hold"},
		{"flat but D's gain too large", ladderResults(0.09, 0.09, 0.08, 0.09, 0.04), ladderProfiles(0.95), "inconclusive", ""},
	} {
		v := findLadder(cfg, tc.mg, tc.profiles)
		if v.Verdict != tc.want {
			t.Errorf("%s: verdict %q, want %q; criteria %+v", tc.name, v.Verdict, tc.want, v.Criteria)
		}
		if tc.extra != "" && !strings.Contains(v.Extrapolation, tc.extra) {
			t.Errorf("%s: extrapolation %q, want it to contain %q", tc.name, v.Extrapolation, tc.extra)
		}
	}
	// (A) failing: the extrapolation is the decision, without the note
	if v := findLadder(cfg, ladderResults(0.12, 0.09, 0.06, 0.07, 0.04), ladderProfiles(0.95)); strings.Contains(v.Extrapolation, "already below") {
		t.Errorf("the (A)-holds note with (A) failing: %q", v.Extrapolation)
	}
	// no profile: (B) cannot hold
	if v := findLadder(cfg, ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), nil); v.Verdict == "budget artefact" {
		t.Error("a budget artefact without attention profiles")
	}
	// the extrapolated budget: excess 0.12, 0.09, 0.06 at ×1, ×2, ×4 falls
	// as T^−0.5 (roughly); 0.04 is reached near ×9
	v := findLadder(cfg, ladderResults(0.12, 0.085, 0.06, 0.07, 0.04), ladderProfiles(0.95))
	if !strings.Contains(v.Extrapolation, "× the 1× budget") {
		t.Errorf("extrapolation %q", v.Extrapolation)
	}
	// no improvement at all: no budget predicted
	v = findLadder(cfg, ladderResults(0.06, 0.06, 0.061, 0.07, 0.04), ladderProfiles(0.95))
	if !strings.Contains(v.Extrapolation, "does not fall with the budget") && v.Verdict != "not a budget artefact" {
		t.Errorf("flat: %q %q", v.Verdict, v.Extrapolation)
	}
}

// ladderSeeds are constructed results whose two TF(4,4) seeds differ:
// x[b][s] is the second-half excess at budget ×2^b of seed s. A negative
// value leaves that result out.
func ladderSeeds(x [3][2]float64, deep, markov4 float64) *results.Merged {
	ms := []any{"Bayes(D=1..5)", 0.0, "CTW(D=5)", 0.01, "Markov(k=4,α=0.5)", markov4}
	for b, label := range []string{"TF(4,4)", "TF(4,4) ×2 steps", "TF(4,4) ×4 steps"} {
		for s, l := range []string{label, label + " [seed 1]"} {
			if x[b][s] >= 0 {
				ms = append(ms, l, x[b][s])
			}
		}
	}
	if deep >= 0 {
		ms = append(ms, "TF(4,4,4) ×4 steps", deep)
	}
	return mergedOf(resultsOf(0.003, ms...))
}

// criterion returns the verdict of the criterion whose claim starts with
// prefix, e.g. "(D) seed 0".
func criterion(t *testing.T, v LadderVerdict, prefix string) Check {
	t.Helper()
	for _, c := range v.Criteria {
		if strings.HasPrefix(c.Claim, prefix) {
			return c
		}
	}
	t.Fatalf("no criterion %q among %+v", prefix, v.Criteria)
	return Check{}
}

// dip is a holding(0.95) profile whose good head drops to 0.5 at query q.
func dip(q int) results.LadderProfile {
	p := holding(0.95)
	p.Prev[1][q] = 0.5
	return p
}

// TestLadderRuleEdges makes each part of each criterion decide on its
// own: "in every seed", (D)'s interval, (C)'s margin, (B)'s window, the
// extrapolation's value and its no-budget branch, and missing results.
func TestLadderRuleEdges(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	good := ladderProfiles(0.95)
	// (A) must hold in every seed: seed 1 above Markov(4) at ×4.
	v := findLadder(cfg, ladderSeeds([3][2]float64{{0.08, 0.08}, {0.05, 0.05}, {0.02, 0.045}}, 0.015, 0.04), good)
	if v.Verdict == "budget artefact" || criterion(t, v, "(A) seed 0").Verdict != holds.String() || criterion(t, v, "(A) seed 1").Verdict != fails.String() {
		t.Errorf("one seed failing (A): %q, %+v", v.Verdict, v.Criteria)
	}
	// (D)'s interval alone: flat (×2 → ×4 gets worse), above Markov(4) by
	// +0.0013, but the interval reaches below 0.
	v = findLadder(cfg, ladderSeeds([3][2]float64{{0.05, 0.05}, {0.041, 0.041}, {0.043, 0.043}}, 0.05, 0.04), good)
	if c := criterion(t, v, "(D) seed 0"); c.Verdict != fails.String() || v.Verdict == "not a budget artefact" {
		t.Errorf("(D) with an interval reaching 0: %q, %+v", v.Verdict, c)
	}
	// (C)'s margin: an interval reaching above 0 but not above +0.005
	// holds (a rule of "upper end below 0" would fail it); one wholly
	// above +0.005 fails. (resultsOf's noise: half-widths ≈ 0.003.)
	for _, tc := range []struct {
		deep float64
		want string
	}{{0.0185, holds.String()}, {0.026, fails.String()}} {
		v = findLadder(cfg, ladderSeeds([3][2]float64{{0.08, 0.08}, {0.05, 0.05}, {0.02, 0.02}}, tc.deep, 0.04), good)
		if c := criterion(t, v, "(C) seed 0"); c.Verdict != tc.want {
			t.Errorf("(C) with TF(4,4,4) at %v against 0.02: %+v, want %s", tc.deep, c, tc.want)
		}
	}
	// (B)'s window is query positions 448–511.
	for _, tc := range []struct {
		q    int
		want string
	}{{447, holds.String()}, {448, fails.String()}, {511, fails.String()}} {
		ps := map[string]results.LadderProfile{"TF(4,4) ×4 steps": dip(tc.q), "TF(4,4) ×4 steps [seed 1]": holding(0.95)}
		v = findLadder(cfg, ladderSeeds([3][2]float64{{0.08, 0.08}, {0.05, 0.05}, {0.02, 0.02}}, 0.015, 0.04), ps)
		if c := criterion(t, v, "(B) seed 0"); c.Verdict != tc.want {
			t.Errorf("(B) with a dip at query %d: %+v, want %s", tc.q, c, tc.want)
		}
	}
	// The extrapolated budget, against an independent least-squares fit
	// to the constructed results' realised excesses.
	mg := ladderResults(0.12, 0.085, 0.06, 0.07, 0.04)
	v = findLadder(cfg, mg, good)
	var lx, ly []float64
	for b, label := range []string{"TF(4,4)", "TF(4,4) ×2 steps", "TF(4,4) ×4 steps"} {
		e := (mg.Res.Method(label).ExcessSecondHalf.Mean + mg.Res.Method(label+" [seed 1]").ExcessSecondHalf.Mean) / 2
		lx, ly = append(lx, float64(b)*math.Ln2), append(ly, math.Log(e))
	}
	alpha, beta := stat.LinearRegression(lx, ly, nil, false)
	target := mg.Res.Method("Markov(k=4,α=0.5)").ExcessSecondHalf.Mean
	want := fmt.Sprintf("%.3g× the 1× budget", math.Exp((math.Log(target)-alpha)/beta))
	if !strings.Contains(v.Extrapolation, want) || !strings.Contains(v.Extrapolation, "over Bayes") {
		t.Errorf("extrapolation %q, want %q and the reference named", v.Extrapolation, want)
	}
	// Rising with the budget (and (D) failing): no budget is predicted.
	v = findLadder(cfg, ladderResults(0.05, 0.07, 0.065, 0.07, 0.04), good)
	if !strings.Contains(v.Extrapolation, "does not fall with the budget") {
		t.Errorf("rising: %q %q", v.Verdict, v.Extrapolation)
	}
	// Missing results: said, never a silent "fails".
	v = findLadder(cfg, ladderSeeds([3][2]float64{{0.08, 0.08}, {-1, 0.05}, {0.02, 0.02}}, -1, 0.04), good)
	if c := criterion(t, v, "(C) seed 0"); c.Verdict != undecided.String() || !strings.Contains(c.Numbers, "no result") {
		t.Errorf("(C) without TF(4,4,4): %+v", c)
	}
	if c := criterion(t, v, "(D) seed 0"); c.Verdict != undecided.String() || !strings.Contains(c.Numbers, "no result") {
		t.Errorf("(D) without ×2 of seed 0: %+v", c)
	}
	if v.Verdict != "inconclusive" || !strings.Contains(v.Extrapolation, "(1 of 2 seeds)") {
		t.Errorf("missing results: %q, extrapolation %q", v.Verdict, v.Extrapolation)
	}
	// Markov(4) not above the reference: no extrapolation target.
	v = findLadder(cfg, ladderResults(0.08, 0.06, 0.04, 0.05, -0.005), good)
	if !strings.Contains(v.Extrapolation, "is not above 0") {
		t.Errorf("Markov(4) at the reference: %q", v.Extrapolation)
	}
}

// handOver is a profile whose previous-symbol job moves between layer-1
// heads: head 3 keeps 0.95 on key q−1 up to query cut−1, head 4 from cut
// on, and at the window's last query (no training target) no head does.
func handOver(cut int) results.LadderProfile {
	p := holding(0.1)
	for q := 1; q < 511; q++ {
		h := 2
		if q >= cut {
			h = 3
		}
		p.Prev[h][q] = 0.95
	}
	return p
}

// beside returns the post-hoc check whose claim starts with prefix.
func beside(t *testing.T, v LadderVerdict, prefix string) Check {
	t.Helper()
	for _, c := range v.Beside {
		if strings.HasPrefix(c.Claim, prefix) {
			return c
		}
	}
	t.Fatalf("no post-hoc check %q among %+v", prefix, v.Beside)
	return Check{}
}

// TestLadderBeside: the post-hoc analyses beside the verdict decide on
// their own numbers and never change the verdict. (B′) holds for heads
// that hand the previous symbol over along the window and for a last
// position that nobody attends from, where (B) fails; it fails for a dip
// in every head at one trained position. (C′) compares the deeper models
// at the other budgets; (E′) aims the extrapolation at CTW's level.
func TestLadderBeside(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	mg := ladderResults(0.08, 0.05, 0.02, 0.015, 0.04)
	allDip := handOver(480)
	for h := range allDip.Prev {
		allDip.Prev[h][470] = 0.5
	}
	for _, tc := range []struct {
		name        string
		p           results.LadderProfile
		b, bPrime   string
		numbers     string
		wantVerdict string
	}{
		{"one head, last position untrained", dip(511), fails.String(), holds.String(), "head 2 at 63 of the 63 positions; at position 511 (no training target) the best head has 0.5000", "inconclusive"},
		{"hand-over", handOver(480), fails.String(), holds.String(), "head 3 at 32 of the 63 positions, head 4 at 31; at position 511 (no training target) the best head has 0.1000", "inconclusive"},
		{"dip in every head", allDip, fails.String(), fails.String(), "least best-head weight 0.500", "inconclusive"},
		{"one head throughout", holding(0.95), holds.String(), holds.String(), "head 2 at 63 of the 63 positions", "budget artefact"},
	} {
		ps := map[string]results.LadderProfile{"TF(4,4) ×4 steps": tc.p, "TF(4,4) ×4 steps [seed 1]": tc.p}
		v := findLadder(cfg, mg, ps)
		if v.Verdict != tc.wantVerdict {
			t.Errorf("%s: verdict %q, want %q (the post-hoc analyses must not change it)", tc.name, v.Verdict, tc.wantVerdict)
		}
		if c := criterion(t, v, "(B) seed 0"); c.Verdict != tc.b {
			t.Errorf("%s: (B) %+v, want %s", tc.name, c, tc.b)
		}
		c := beside(t, v, "(B′) seed 0")
		if c.Verdict != tc.bPrime || !strings.Contains(c.Numbers, tc.numbers) {
			t.Errorf("%s: (B′) %+v, want %s with %q", tc.name, c, tc.bPrime, tc.numbers)
		}
	}
	if c := beside(t, findLadder(cfg, mg, nil), "(B′) seed 1"); c.Verdict != undecided.String() {
		t.Errorf("(B′) without a profile: %+v", c)
	}

	// (C′): TF(4,4,4) at ×1 worse than TF(4,4) ×1 by 0.03, at ×2 equal;
	// TF(4,4,4,4) at ×1 within the margin.
	res := resultsOf(0.003, "Bayes(D=1..5)", 0.0, "CTW(D=5)", 0.01, "Markov(k=4,α=0.5)", 0.04,
		"TF(4,4)", 0.08, "TF(4,4) [seed 1]", 0.08, "TF(4,4) ×2 steps", 0.05, "TF(4,4) ×2 steps [seed 1]", 0.05,
		"TF(4,4) ×4 steps", 0.02, "TF(4,4) ×4 steps [seed 1]", 0.02, "TF(4,4,4) ×4 steps", 0.015,
		"TF(4,4,4)", 0.11, "TF(4,4,4) ×2 steps", 0.05, "TF(4,4,4,4)", 0.079)
	v := findLadder(cfg, mergedOf(res), ladderProfiles(0.95))
	for _, tc := range []struct{ prefix, want string }{
		{"(C′) TF(4,4,4) is within 0.005 of TF(4,4) or", fails.String()},
		{"(C′) TF(4,4,4) is within 0.005 of TF(4,4) [seed 1]", fails.String()},
		{"(C′) TF(4,4,4) ×2 steps is within 0.005 of TF(4,4) ×2 steps or", holds.String()},
		{"(C′) TF(4,4,4,4) is within 0.005 of TF(4,4) [seed 1]", holds.String()},
	} {
		if c := beside(t, v, tc.prefix); c.Verdict != tc.want {
			t.Errorf("%+v, want %s", c, tc.want)
		}
	}
	for _, c := range v.Beside {
		if strings.Contains(c.Claim, "TF(4,4,4) ×4 steps") {
			t.Errorf("criterion (C) itself repeated beside the verdict: %+v", c)
		}
	}
	if v.Verdict != "budget artefact" {
		t.Errorf("verdict %q: a deeper model failing at ×1 is not part of the rule", v.Verdict)
	}

	// (E′): the same fit as the rule's extrapolation, aimed at CTW's 0.01:
	// 0.08, 0.05, 0.02 at ×1, ×2, ×4 fall as T^−1 (roughly), reaching
	// 0.01 near ×8; the rule's own extrapolation is not changed.
	c := beside(t, findLadder(cfg, mg, ladderProfiles(0.5)), "(E′)")
	if c.Verdict != "extrapolated" || !strings.Contains(c.Numbers, "it reaches CTW(D=5)'s") {
		t.Errorf("(E′) %+v", c)
	}
	var lx, ly []float64
	for b, label := range []string{"TF(4,4)", "TF(4,4) ×2 steps", "TF(4,4) ×4 steps"} {
		e := (mg.Res.Method(label).ExcessSecondHalf.Mean + mg.Res.Method(label+" [seed 1]").ExcessSecondHalf.Mean) / 2
		lx, ly = append(lx, float64(b)*math.Ln2), append(ly, math.Log(e))
	}
	alpha, beta := stat.LinearRegression(lx, ly, nil, false)
	target := mg.Res.Method("CTW(D=5)").ExcessSecondHalf.Mean
	if want := fmt.Sprintf("%.3g× the 1× budget", math.Exp((math.Log(target)-alpha)/beta)); !strings.Contains(c.Numbers, want) {
		t.Errorf("(E′) %q, want %q", c.Numbers, want)
	}
	// The fit's residuals beside the intervals' half-widths (0.003 here,
	// measured from the constructed windows): the log–log line through
	// 0.08, 0.05, 0.02 misses each by more.
	var rs []string
	outside := 0
	for b, label := range []string{"TF(4,4)", "TF(4,4) ×2 steps", "TF(4,4) ×4 steps"} {
		x0, x1 := mg.Res.Method(label).ExcessSecondHalf, mg.Res.Method(label+" [seed 1]").ExcessSecondHalf
		r := math.Exp(ly[b]) - math.Exp(alpha+beta*lx[b])
		if math.Abs(r) > (x0.Hi-x0.Lo+x1.Hi-x1.Lo)/4 {
			outside++
		}
		rs = append(rs, fmt.Sprintf("%+.4f", r))
	}
	if want := "residuals of the fit (excess − fit) " + strings.Join(rs, ", "); !strings.Contains(c.Numbers, want) {
		t.Errorf("(E′) %q, want %q", c.Numbers, want)
	}
	if want := fmt.Sprintf("outside at %d of 3 budgets", outside); outside == 0 || !strings.Contains(c.Numbers, want) {
		t.Errorf("(E′) %q, want %q (and the constructed points off the line)", c.Numbers, want)
	}
	// Points on a power law: residuals 0, inside.
	onLaw := ladderResults(0.08, 0.04, 0.02, 0.015, 0.04)
	if c := beside(t, findLadder(cfg, onLaw, nil), "(E′)"); !strings.Contains(c.Numbers, "outside at 0 of 3 budgets") {
		t.Errorf("(E′) on an exact power law: %q", c.Numbers)
	}
	// TF(4,4) ×4 already below CTW: said, not extrapolated.
	below := ladderResults(0.08, 0.05, 0.008, 0.015, 0.04)
	if c := beside(t, findLadder(cfg, below, nil), "(E′)"); c.Verdict != "already at or below" || !strings.Contains(c.Numbers, "already at or below CTW(D=5)") {
		t.Errorf("(E′) with TF(4,4) ×4 below CTW: %+v", c)
	}
	// Without CTW, or with CTW as the reference, there is nothing to aim at.
	noCTW := resultsOf(0.003, "Bayes(D=1..5)", 0.0, "Markov(k=4,α=0.5)", 0.04, "TF(4,4)", 0.08, "TF(4,4) ×2 steps", 0.05, "TF(4,4) ×4 steps", 0.02)
	for _, c := range findLadder(cfg, mergedOf(noCTW), nil).Beside {
		if strings.HasPrefix(c.Claim, "(E′)") {
			t.Errorf("(E′) without CTW: %+v", c)
		}
	}
	ctwRef := resultsOf(0.003, "CTW(D=5)", 0.0, "Markov(k=4,α=0.5)", 0.04, "TF(4,4)", 0.08, "TF(4,4) ×2 steps", 0.05, "TF(4,4) ×4 steps", 0.02)
	for _, c := range findLadder(cfg, mergedOf(ctwRef), nil).Beside {
		if strings.HasPrefix(c.Claim, "(E′)") {
			t.Errorf("(E′) with CTW as the reference: %+v", c)
		}
	}
}

// TestLadderTables: the section's tables list the post-hoc analyses and
// every model and seed, a missing one said.
func TestLadderTables(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	mg := ladderResults(0.08, 0.05, 0.02, 0.015, 0.04)
	ts := ladderTables(cfg, mg, findLadder(cfg, mg, ladderProfiles(0.95)))
	if len(ts) != 2 || !strings.Contains(ts[0].Caption, "not part of the verdict") {
		t.Fatalf("tables %+v", ts)
	}
	rows := map[string][]string{}
	for _, r := range ts[1].Rows {
		rows[r[0]] = r
	}
	n := 0
	for _, s := range cfg.Fig3Models {
		m, _ := study.ParseModel(s)
		n += cfg.SeedsOf(m)
	}
	if len(ts[1].Rows) != n {
		t.Errorf("%d rows, want one per model and seed (%d)", len(ts[1].Rows), n)
	}
	if r := rows["TF(4,4) ×4 steps [seed 1]"]; r == nil || !strings.HasPrefix(r[3], "-0.02") {
		t.Errorf("TF(4,4) ×4 seed 1 row %q: want its paired difference from Markov(4), ≈ −0.02", r)
	}
	missing := 0
	for _, r := range ts[1].Rows {
		if r[2] == "no result" {
			missing++
		}
	}
	if missing == 0 {
		t.Error("the models without a result (the -sin ones here) are not said")
	}
}

// TestLadderExtrapolationRange: the extrapolation says how far beyond the
// fitted budgets its answer lies, and not when the target is inside them.
func TestLadderExtrapolationRange(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	mg := ladderResults(0.12, 0.085, 0.06, 0.07, 0.04)
	v := findLadder(cfg, mg, ladderProfiles(0.95))
	var lx, ly []float64
	for b, label := range []string{"TF(4,4)", "TF(4,4) ×2 steps", "TF(4,4) ×4 steps"} {
		e := (mg.Res.Method(label).ExcessSecondHalf.Mean + mg.Res.Method(label+" [seed 1]").ExcessSecondHalf.Mean) / 2
		lx, ly = append(lx, float64(b)*math.Ln2), append(ly, math.Log(e))
	}
	alpha, beta := stat.LinearRegression(lx, ly, nil, false)
	target := mg.Res.Method("Markov(k=4,α=0.5)").ExcessSecondHalf.Mean
	local := fmt.Sprintf("slopes between consecutive budgets: %+.2f, %+.2f", (ly[1]-ly[0])/lx[1], (ly[2]-ly[1])/(lx[2]-lx[1]))
	if !strings.Contains(v.Extrapolation, local) {
		t.Errorf("extrapolation %q, want %q", v.Extrapolation, local)
	}
	far := math.Exp((math.Log(target)-alpha)/beta) / 4 // in units of ×4, the largest budget
	if want := fmt.Sprintf("%.3g× beyond the largest budget fitted", far); !strings.Contains(v.Extrapolation, want) {
		t.Errorf("target past ×4: %q, want %q", v.Extrapolation, want)
	}
	// Markov(4)'s 0.07 lies between ×1 (0.12) and ×2 (0.06): inside.
	v = findLadder(cfg, ladderResults(0.12, 0.06, 0.03, 0.07, 0.07), ladderProfiles(0.5))
	if !strings.Contains(v.Extrapolation, "it reaches") || strings.Contains(v.Extrapolation, "beyond") {
		t.Errorf("target inside the fitted budgets: %q", v.Extrapolation)
	}
}

// TestLadderSectionPrev: the section draws the previous-symbol heads by
// budget into the report stage's directory from the profile stages, and
// lists it before every model's own profile; without profiles, nothing.
func TestLadderSectionPrev(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	mg := ladderResults(0.08, 0.05, 0.02, 0.015, 0.04)
	figDir, out := t.TempDir(), t.TempDir()
	deps := map[string]*pipeline.Done{}
	m, _ := study.ParseModel("4,4-x4")
	for r := range cfg.SeedsOf(m) {
		d := filepath.Join(t.TempDir(), "profile")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteJSON(d, results.LadderProfileJSON, holding(0.95)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, results.LadderProfileFile), []byte("png"), 0o644); err != nil {
			t.Fatal(err)
		}
		deps[results.ProfileStageName(m, r)] = &pipeline.Done{Dir: d, Outputs: []string{results.LadderProfileJSON, results.LadderProfileFile}}
	}
	_, files, _, err := ladderSection(cfg, mg, deps, figDir, out)
	if err != nil {
		t.Fatal(err)
	}
	prev := filepath.Join(out, figures.LadderPrevFile)
	if len(files) != 3 || files[0] != prev {
		t.Fatalf("files %v: want %s, then the two profiles", files, prev)
	}
	if _, err := os.Stat(prev); err != nil {
		t.Fatal(err)
	}
	// without profiles: no figure
	out2 := t.TempDir()
	if _, files, _, err := ladderSection(cfg, mg, nil, figDir, out2); err != nil || len(files) != 0 {
		t.Fatalf("without profiles: %v, %v", files, err)
	}
	// not a budget artefact: the text names the rule's top budget
	f, _, _, err := ladderSection(cfg, ladderResults(0.081, 0.0805, 0.08, 0.09, 0.04), nil, figDir, t.TempDir())
	if err != nil || f.Verdict != fails.String() || !strings.Contains(f.Found, "persist with 4 times the budget") {
		t.Errorf("not a budget artefact: %q %q %v", f.Verdict, f.Found, err)
	}
}

// TestLateHold checks criterion B's number: the best head by its least
// weight over the last ladderLate positions, and where that least is.
func TestLateHold(t *testing.T) {
	const n = 100
	flat := func(v float64) []float64 {
		s := make([]float64, n)
		for i := 1; i < n; i++ {
			s[i] = v
		}
		return s
	}
	dip := func(v float64, q int, at float64) []float64 {
		s := flat(v)
		s[q] = at
		return s
	}
	for _, tc := range []struct {
		name     string
		prev     [][]float64
		w        float64
		head, at int
	}{
		{"one head holds", [][]float64{flat(0.5), flat(0.95)}, 0.95, 2, n - ladderLate},
		{"dip at the last position", [][]float64{dip(0.99, n-1, 0.001), dip(0.97, n-5, 0.2)}, 0.2, 2, n - 5},
		{"early dip ignored", [][]float64{dip(0.92, 3, 0)}, 0.92, 1, n - ladderLate},
		{"no profile", nil, math.NaN(), 0, 0},
		{"a NaN disqualifies its head", [][]float64{dip(0.99, n-3, math.NaN()), flat(0.5)}, 0.5, 2, n - ladderLate},
		{"too short a profile", [][]float64{{0}}, math.NaN(), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, h, at := lateHold(results.LadderProfile{Prev: tc.prev})
			if h != tc.head || at != tc.at || !(w == tc.w || math.IsNaN(w) && math.IsNaN(tc.w)) {
				t.Errorf("lateHold = %v, head %d, at %d; want %v, head %d, at %d", w, h, at, tc.w, tc.head, tc.at)
			}
		})
	}
}
