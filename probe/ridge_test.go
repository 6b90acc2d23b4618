package probe

import (
	"math"
	"math/rand/v2"
	"testing"
)

// gaussian returns n rows of p standard normal features.
func gaussian(rng *rand.Rand, n, p int) fmatrix {
	x := fmatrix{n, p, make([]float32, n*p)}
	for i := range x.v {
		x.v[i] = float32(rng.NormFloat64())
	}
	return x
}

// fitScore fits on the first rows, picks the penalty on the next, and
// returns the R² on the last, as Run does.
func fitScore(t *testing.T, x fmatrix, y matrix, ntr, nva int) (test float64, penalty float64) {
	t.Helper()
	part := func(lo, hi int) (fmatrix, matrix) {
		return fmatrix{hi - lo, x.cols, x.v[lo*x.cols : hi*x.cols]}, matrix{hi - lo, y.cols, y.v[lo*y.cols : hi*y.cols]}
	}
	xtr, ytr := part(0, ntr)
	xva, yva := part(ntr, ntr+nva)
	xte, yte := part(ntr+nva, x.n)
	r, err := fitRidge(xtr, ytr)
	if err != nil {
		t.Fatal(err)
	}
	best := math.Inf(-1)
	for _, c := range DefaultPenalties {
		if v := r2(yva, r.predict(r.project(xva), c)); v > best {
			best, penalty = v, c
		}
	}
	return r2(yte, r.predict(r.project(xte), penalty)), penalty
}

// TestPlantedFeature is the check where the truth is known: a target that
// is a linear function of the features (plus 1% noise, and an offset) is
// recovered with held-out R² ≥ 0.99, a target independent of them has
// held-out R² ≈ 0, and a feature planted in one column of
// wildly scaled others is still found.
func TestPlantedFeature(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, p = 3000, 48
	x := gaussian(rng, n, p)
	w := make([]float64, p)
	for j := range w {
		w[j] = rng.NormFloat64()
	}
	planted, random, scaled := newMatrix(n, 2), newMatrix(n, 1), newMatrix(n, 1)
	xs := fmatrix{n, p, append([]float32(nil), x.v...)}
	for i := range n {
		s := 0.0
		for j, v := range x.row(i) {
			s += w[j] * float64(v)
		}
		planted.row(i)[0] = 3 + s + 0.01*math.Sqrt(float64(p))*rng.NormFloat64()
		planted.row(i)[1] = -s
		random.row(i)[0] = rng.NormFloat64()
		for j := range p {
			xs.row(i)[j] *= float32(math.Pow(10, float64(j%7-3)))
		}
		scaled.row(i)[0] = float64(x.row(i)[5])
	}
	if got, _ := fitScore(t, x, planted, 2000, 500); got < 0.99 {
		t.Errorf("planted linear feature: held-out R² = %.4f, want ≥ 0.99", got)
	}
	got, c := fitScore(t, x, random, 2000, 500)
	if math.Abs(got) > 0.03 {
		t.Errorf("random feature: held-out R² = %.4f, want ≈ 0", got)
	}
	if c < 1 {
		t.Errorf("random feature: penalty %g chosen, want a large one", c)
	}
	if got, _ := fitScore(t, xs, scaled, 2000, 500); got < 0.999 {
		t.Errorf("one column of features scaled 1e-3..1e3: held-out R² = %.5f, want ≥ 0.999", got)
	}
}

func TestScores(t *testing.T) {
	y := matrix{4, 2, []float64{1, 0, 0, 1, 1, 0, 0, 1}}
	for _, tc := range []struct {
		pred     []float64
		acc, rsq float64
	}{
		{[]float64{1, 0, 0, 1, 1, 0, 0, 1}, 1, 1},
		{[]float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}, 0.5, 0}, // ties: the first class
		{[]float64{0, 1, 1, 0, 0, 1, 1, 0}, 0, -3},
	} {
		pred := matrix{4, 2, tc.pred}
		if a := accuracy(y, pred); a != tc.acc {
			t.Errorf("accuracy(%v) = %g, want %g", tc.pred, a, tc.acc)
		}
		if r := r2(y, pred); math.Abs(r-tc.rsq) > 1e-12 {
			t.Errorf("r2(%v) = %g, want %g", tc.pred, r, tc.rsq)
		}
	}
	if r := r2(matrix{2, 1, []float64{1, 1}}, matrix{2, 1, []float64{1, 2}}); !math.IsNaN(r) {
		t.Errorf("R² of a constant target = %g, want NaN", r)
	}
	if _, err := fitRidge(fmatrix{1, 1, []float32{1}}, matrix{1, 1, []float64{1}}); err == nil {
		t.Error("a fit on one row was accepted")
	}
}
