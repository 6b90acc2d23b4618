package report

import (
	"fmt"
	"math"
	"strings"
	"testing"

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
