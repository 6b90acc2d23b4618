package report

import (
	"strings"
	"testing"

	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
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
		{"B fails", ladderResults(0.08, 0.05, 0.02, 0.015, 0.04), ladderProfiles(0.5), "inconclusive", "reaches"},
		{"C fails", ladderResults(0.08, 0.05, 0.02, 0.04, 0.04), ladderProfiles(0.95), "inconclusive", "reaches"},
		{"A fails", ladderResults(0.08, 0.06, 0.04, 0.041, 0.04), ladderProfiles(0.95), "inconclusive", ""},
		{"not an artefact", ladderResults(0.081, 0.0805, 0.08, 0.09, 0.04), ladderProfiles(0.95), "not a budget artefact", ""},
		{"still improving", ladderResults(0.12, 0.09, 0.06, 0.07, 0.04), ladderProfiles(0.95), "inconclusive", "reaches"},
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
