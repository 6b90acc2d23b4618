package results

import (
	"math"
	"slices"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/study"
)

// TestAcrossSeeds checks the Student-t interval over replicate means on
// numbers worked by hand: 1, 2, 3 have mean 2, sd 1 and, with
// t_{0.975,2} = 4.302653, half-width 4.302653/√3.
func TestAcrossSeeds(t *testing.T) {
	iv := AcrossSeeds([]float64{1, 2, 3})
	if iv.Mean != 2 || math.Abs(iv.SD-1) > 1e-12 {
		t.Errorf("mean %v sd %v, want 2 and 1", iv.Mean, iv.SD)
	}
	if want := 4.302653 / math.Sqrt(3); math.Abs(iv.HalfWidth()-want) > 1e-5 {
		t.Errorf("half-width %v, want %v", iv.HalfWidth(), want)
	}
	// Two values 0.5, 0.7: sd = 0.1·√2, t_{0.975,1} = 12.7062.
	iv = AcrossSeeds([]float64{0.5, 0.7})
	if want := 12.706205 * 0.1 * math.Sqrt2 / math.Sqrt2; math.Abs(iv.HalfWidth()-want) > 1e-5 || math.Abs(iv.Mean-0.6) > 1e-12 {
		t.Errorf("got %+v, want mean 0.6 half-width %v", iv, want)
	}
	if iv := AcrossSeeds([]float64{4}); iv.Mean != 4 || !math.IsNaN(iv.Lo) {
		t.Errorf("one value: %+v", iv)
	}
}

// TestSeedStats checks that the across-seed statistics gather each
// model's replicates from a result by name.
func TestSeedStats(t *testing.T) {
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = 2
	m := cfg.Models()[0]
	res := &eval.Result{Methods: []eval.MethodResult{
		{Name: "CTW"},
		{Name: RepLabel(m, 0), Window: eval.Interval{Mean: 1.0}, SecondHalf: eval.Interval{Mean: 0.9}, ExcessSecondHalf: eval.Interval{Mean: 0.1}},
		{Name: RepLabel(m, 1), Window: eval.Interval{Mean: 1.2}, SecondHalf: eval.Interval{Mean: 0.7}, ExcessSecondHalf: eval.Interval{Mean: 0.3}},
	}}
	st := SeedStatsOf(cfg, res)
	if len(st) != 1 || st[0].Model != m.Label() {
		t.Fatalf("stats %+v, want one for %s", st, m.Label())
	}
	if !slices.Equal(st[0].SecondHalf, []float64{0.9, 0.7}) || math.Abs(float64(st[0].AcrossSecondHalf.Mean)-0.8) > 1e-12 {
		t.Errorf("second half %v, across %v", st[0].SecondHalf, st[0].AcrossSecondHalf.Mean)
	}
	if !IsReplicate(cfg, RepLabel(m, 1)) || IsReplicate(cfg, RepLabel(m, 0)) {
		t.Error("isReplicate wrong")
	}
	cfg.Seeds = 1
	if SeedStatsOf(cfg, res) != nil {
		t.Error("S=1 gives seed stats")
	}
}
