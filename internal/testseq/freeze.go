package testseq

import (
	"math"
	"testing"

	"github.com/vomc/vomc/predict"
)

// CheckFreeze trains a fresh state of p on x[:cut], freezes it (the state
// must implement predict.Freezer) and checks, over x[cut:], that the
// prediction depends only on the last k symbols (equal contexts at
// different times give equal distributions: nothing is learned any more),
// that the distributions stay valid, and that they differ from those of a
// state that keeps learning somewhere (freezing changed something).
func CheckFreeze(t *testing.T, p predict.Predictor, x []byte, cut, k int) {
	t.Helper()
	A := p.AlphabetSize()
	st := p.NewState()
	learn := p.NewState()
	for _, a := range x[:cut] {
		st.Observe(a)
		learn.Observe(a)
	}
	f, ok := st.(predict.Freezer)
	if !ok {
		t.Fatalf("%s: state does not implement predict.Freezer", p.Name())
	}
	f.Freeze()
	seen := map[string][]float64{}
	differs := false
	q := make([]float64, A)
	for i := cut; i < len(x); i++ {
		d := make([]float64, A)
		st.Predict(d)
		learn.Predict(q)
		for s := range d {
			if !(d[s] > 0) || d[s] > 1 || math.IsNaN(d[s]) {
				t.Fatalf("%s position %d: invalid probability %v", p.Name(), i, d[s])
			}
			if d[s] != q[s] {
				differs = true
			}
		}
		ctx := string(x[max(0, i-k):i])
		if prev, ok := seen[ctx]; ok {
			for s := range d {
				if d[s] != prev[s] {
					t.Fatalf("%s position %d: frozen prediction in context %v changed: %v then %v", p.Name(), i, []byte(ctx), prev, d)
				}
			}
		}
		seen[ctx] = d
		st.Observe(x[i])
		learn.Observe(x[i])
	}
	if !differs {
		t.Errorf("%s: the frozen state predicts exactly like a learning one", p.Name())
	}
}
