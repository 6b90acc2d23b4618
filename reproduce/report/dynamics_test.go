package report

import (
	"testing"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/reproduce/study"
)

// TestDynamicsKNNote: the dynamics section names the δ of the references'
// KN, tuned on all the training set's windows, and says how it relates to
// the summary table's KN, tuned on the first KNTuneWindows (depth5: δ =
// 0.8703 against 0.8662).
func TestDynamicsKNNote(t *testing.T) {
	t.Parallel()
	depth5, _ := study.Preset("depth5")
	small := depth5
	small.TrainTrees, small.TrainNK = 100, 1024 // 200 windows ≤ KNTuneWindows
	refs := func(names ...string) []*dynamics.Result {
		return []*dynamics.Result{{References: names}, {References: names}}
	}
	std := refs("Unigram(α=0.5)", "Markov(k=1,α=0.5)", "KN(D=5,δ=0.8703)", "CTW(D=5,λ=0.15,α=0.5)")
	cases := []struct {
		name string
		cfg  study.Config
		res  []*dynamics.Result
		kn   string
		want string
	}{
		{"depth5", depth5, std, "KN(D=5,δ=0.8662)",
			" KN among the references is KN(D=5,δ=0.8703), its discount δ tuned on all 50000 windows of the training set, not on the first 1000 of them as the summary table's KN(D=5,δ=0.8662), hence the different δ."},
		{"same δ", depth5, std, "KN(D=5,δ=0.8703)",
			" KN among the references is KN(D=5,δ=0.8703), its discount δ tuned on all 50000 windows of the training set, not on the first 1000 of them as the summary table's KN(D=5,δ=0.8703) (the same δ nonetheless)."},
		{"small training set", small, std, "KN(D=5,δ=0.8703)",
			" KN among the references is KN(D=5,δ=0.8703), its discount δ tuned on all 200 windows of the training set, as the summary table's KN(D=5,δ=0.8703)."},
		{"no KN in the summary", depth5, std, "",
			" KN among the references is KN(D=5,δ=0.8703), its discount δ tuned on all 50000 windows of the training set."},
		{"no KN among the references", depth5, refs("Unigram(α=0.5)", "CTW(D=5,λ=0.15,α=0.5)"), "KN(D=5,δ=0.8662)", ""},
	}
	for _, tc := range cases {
		if got := knNote(tc.cfg, tc.res, tc.kn); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
