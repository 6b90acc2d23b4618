package study

import (
	"math"
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
	for _, tc := range []struct {
		name    string
		cfg     Config
		runs    int
		maxMult float64
		want    []string
	}{
		// the ladder: TF(4,4) and TF(4,4)-sin at three budgets with two
		// seeds, TF(4,4,4) at three budgets and TF(4,4,4,4) with one
		{"ladder", ladder, 16, 4, []string{"16 transformers (10 models, 1–2 seeds each)", "at the 1× budget", "393M for the largest (-x4)"}},
		{"one", one, 1, 1, []string{"1 transformer (1 model, 1 seed each), ≤ 98.3M training tokens each"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.TrainingRuns(); got != tc.runs {
				t.Errorf("TrainingRuns = %d, want %d", got, tc.runs)
			}
			if got := tc.cfg.MaxTrainTokens() / tc.cfg.TrainTokens(); math.Abs(got-tc.maxMult) > 1e-12 {
				t.Errorf("MaxTrainTokens = %g × TrainTokens, want %g×", got, tc.maxMult)
			}
			s := tc.cfg.CostSummary()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("CostSummary = %q, want it to contain %q", s, w)
				}
			}
			if tc.maxMult == 1 && strings.Contains(s, "largest") {
				t.Errorf("CostSummary = %q names a largest budget without -xK models", s)
			}
		})
	}
}
