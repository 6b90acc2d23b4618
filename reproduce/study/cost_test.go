package study

import (
	"strings"
	"testing"
)

func TestCostSummary(t *testing.T) {
	ladder, err := Preset("ladder")
	if err != nil {
		t.Fatal(err)
	}
	one := ladder
	one.Fig3Models, one.Fig4Models, one.ModelSeeds, one.Seeds = []string{"4,4"}, nil, nil, 1
	// one epoch: the epoch limit binds, so -xK models see no more tokens
	epoch := ladder
	epoch.Epochs = 1
	// no model at the study's own budget
	longOnly := one
	longOnly.Fig3Models = []string{"4,4-x4", "4,4,4-x2"}
	for _, tc := range []struct {
		name     string
		cfg      Config
		runs     int
		want     []string
		wantNot  string
		x4Tokens float64 // ModelTrainTokens of 4,4-x4 / TrainTokens
	}{
		// the ladder: TF(4,4) and TF(4,4)-sin at three budgets with two
		// seeds, TF(4,4,4) at three budgets and TF(4,4,4,4) with one
		{"ladder", ladder, 16, []string{"16 transformers (10 models, 1–2 seeds each)", "≤ 98.3M–393M training tokens each (98.3M at ×1, 393M at ×4)"}, "", 4},
		{"one", one, 1, []string{"1 transformer (1 model, 1 seed each), ≤ 98.3M training tokens each"}, "×", 4},
		{"epoch-bound", epoch, 16, []string{"≤ 24.3M training tokens each"}, "×", 1},
		{"no 1× model", longOnly, 2, []string{"≤ 197M–393M training tokens each (197M at ×2, 393M at ×4)"}, "×1", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.TrainingRuns(); got != tc.runs {
				t.Errorf("TrainingRuns = %d, want %d", got, tc.runs)
			}
			x4, _ := ParseModel("4,4-x4")
			if got := tc.cfg.ModelTrainTokens(x4) / tc.cfg.TrainTokens(); got != tc.x4Tokens {
				t.Errorf("ModelTrainTokens(4,4-x4) = %g × TrainTokens, want %g×", got, tc.x4Tokens)
			}
			s := tc.cfg.CostSummary()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("CostSummary = %q, want it to contain %q", s, w)
				}
			}
			if tc.wantNot != "" && strings.Contains(s, tc.wantNot) {
				t.Errorf("CostSummary = %q contains %q", s, tc.wantNot)
			}
		})
	}
}
