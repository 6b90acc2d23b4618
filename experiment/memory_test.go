package experiment

import (
	"testing"

	"github.com/vomc/vomc/methods"
)

// TestEvalMemoryEstimate pins the estimate (the values of the former
// package memest) and checks that workers and a tuning set add to it.
func TestEvalMemoryEstimate(t *testing.T) {
	spec := methods.MustParse("ctw,kn,ppm,unigram")
	w := methods.Workload{A: 3, D: 3, Windows: 10, N: 100, Workers: 1}
	if est := EvalMemoryEstimate(spec, 1000, w); est != 25331784 {
		t.Errorf("estimate %d, was 25331784", est)
	}
	tuned := methods.Workload{A: 3, D: 5, Windows: 100, N: 16, Tune: 20000, TuneN: 512, Workers: 4}
	if est := EvalMemoryEstimate(spec, 777, tuned); est != 36312745 {
		t.Errorf("estimate with a tuning set %d, was 36312745", est)
	}
	two := w
	two.Workers = 2
	tune := w
	tune.Tune, tune.TuneN = 10, 100
	if one := EvalMemoryEstimate(spec, 1000, w); EvalMemoryEstimate(spec, 1000, two) <= one || EvalMemoryEstimate(spec, 1000, tune) <= one {
		t.Errorf("2 workers or a tuning set add nothing to %d", one)
	}
}
