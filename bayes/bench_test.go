package bayes

import (
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// benchWindows are 20 fresh windows of N = 512 from the paper's training
// prior (depths 1..5) with the given leaves.
func benchWindows(b *testing.B, leaves source.LeafKind) (source.Prior, [][]byte) {
	p := source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: leaves}
	return p, generate(b, p, 20, 512, 3)
}

// runWindows predicts every window with each of prs in turn and reports
// the windows' symbols per second.
func runWindows(b *testing.B, ws [][]byte, prs ...predict.Predictor) {
	p := make([]float64, prs[0].AlphabetSize())
	syms := 0
	for b.Loop() {
		for _, x := range ws {
			for _, pr := range prs {
				st := pr.NewState()
				for _, s := range x {
					st.Predict(p)
					st.Observe(s)
				}
			}
			syms += len(x)
		}
	}
	b.ReportMetric(float64(syms)/b.Elapsed().Seconds(), "symbols/s")
}

// BenchmarkDirichletMixture is the Bayes predictor of the paper's prior with
// Dirichlet leaves (five CTW components, D = 1..5) on windows of 512;
// BenchmarkCTWComponents runs the same five CTWs one after the other, the
// sum its cost is to be compared with (target: within 2×).
func BenchmarkDirichletMixture(b *testing.B) {
	p, ws := benchWindows(b, source.Dirichlet)
	pr, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	runWindows(b, ws, pr)
}

func BenchmarkCTWComponents(b *testing.B) {
	_, ws := benchWindows(b, source.Dirichlet)
	var cs []predict.Predictor
	for D := 1; D <= 5; D++ {
		c, _ := ctw.New(ctw.Config{A: 3, D: D, Lambda: 0.15, Alpha: 0.5})
		cs = append(cs, c)
	}
	runWindows(b, ws, cs...)
}

// BenchmarkMixedLeaves is the Bayes predictor of the paper's mixed
// Dirichlet/sparse prior (ten components); its sparse marginals are
// memoised across windows, so later iterations run warm.
func BenchmarkMixedLeaves(b *testing.B) {
	p, ws := benchWindows(b, source.Mixed)
	pr, err := New(p)
	if err != nil {
		b.Fatal(err)
	}
	runWindows(b, ws, pr)
}
