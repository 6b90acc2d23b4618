package probe

import (
	"context"
	"testing"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// benchSetup makes 1000 windows of 512 symbols of the ladder's prior
// (depths 1..5, A = 3: the targets include the Bayes leaf posterior and the
// posterior over depths), split 600/200/200 with 64 positions each, and two
// models of the ladder's TF(4,4) architecture (L = 2, 4 heads, E = 64, N =
// 512), one standing for the trained model and one for the Init control
// (the cost does not depend on the weights).
func benchSetup(b *testing.B) ([]*split, *targetSet, [2]*tfStreams, [][]byte) {
	b.Helper()
	prior := source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}, Leaves: source.Dirichlet}
	ds, err := dataset.Build(dataset.Config{Prior: prior, K: 1000, NK: 512, N: 512, Fresh: true, Seed: 9}, 2, nil)
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Train: 600, Val: 200, Test: 200, Seed: 1}
	o.defaults()
	splits, err := makeSplits(ds, o, 512)
	if err != nil {
		b.Fatal(err)
	}
	ts, err := newTargetSet(ds.Manifest.Prior)
	if err != nil {
		b.Fatal(err)
	}
	var ms [2]*tfStreams
	for i := range ms {
		m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 4, 64, 512, 3), uint64(i+1))
		if err != nil {
			b.Fatal(err)
		}
		ms[i] = &tfStreams{m: m}
	}
	var xs [][]byte
	for _, s := range splits {
		xs = append(xs, s.windows...)
	}
	return splits, ts, ms, xs
}

// BenchmarkProbeInputs measures what Run computes before fitting, for 1000
// windows of 512 symbols of the ladder's prior (depths 1..5): every
// residual stream at 64 positions per window of the trained model and of
// the Init control's model (one forward-only pass each, the probed rows
// copied out) and every target (the Bayes leaf posterior and posterior
// over depths, CTW(5)'s ω, the MAP lengths, the context counts). Its
// budget is one forward pass per model probed (the evaluation path,
// PredictBatch, for each of the two models) plus the targets' CTW and
// Bayes passes (CTW(5) reading ω, and the Bayes predictor of the prior
// reading its predictive, at every position). The two run alternately in
// every iteration; the metrics are the seconds of each (wall and CPU: on a
// machine shared with other jobs the CPU time is the stable one) and
// their ratios, which the goal keeps ≤ 1.
func BenchmarkProbeInputs(b *testing.B) {
	splits, ts, ms, xs := benchSetup(b)
	outs := make([][]float64, len(xs))
	for i, x := range xs {
		outs[i] = make([]float64, len(x)*3)
	}
	omega, pred := make([]float64, ts.D+1), make([]float64, ts.A)
	o := Options{Workers: 1, Events: events.Discard}
	paths := []func(){
		func() { // the probe's inputs
			for _, m := range ms {
				if _, err := features(context.Background(), m, splits, 512, "features", events.Discard); err != nil {
					b.Fatal(err)
				}
			}
			if err := computeTargets(context.Background(), ts, splits, 512, o); err != nil {
				b.Fatal(err)
			}
		},
		func() { // the budget
			for _, m := range ms {
				if err := m.m.PredictBatch(xs, outs); err != nil {
					b.Fatal(err)
				}
			}
			for _, x := range xs {
				st, bst := ts.ctw.NewCTWState(), ts.bayes.NewBayesState()
				for _, s := range x {
					st.Observe(s)
					st.Weights(omega)
					bst.Observe(s)
					bst.Predict(pred)
				}
			}
		},
	}
	var wall, cpu [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for k := range paths {
			p := (i + k) % 2
			t0, c0 := time.Now(), cpuTime()
			paths[p]()
			wall[p] += time.Since(t0)
			cpu[p] += cpuTime() - c0
		}
	}
	n := float64(b.N)
	b.ReportMetric(wall[0].Seconds()/n, "probe-s/op")
	b.ReportMetric(wall[1].Seconds()/n, "budget-s/op")
	b.ReportMetric(wall[0].Seconds()/wall[1].Seconds(), "wall-ratio")
	if cpu[1] > 0 {
		b.ReportMetric(cpu[0].Seconds()/n, "probe-cpu-s/op")
		b.ReportMetric(cpu[1].Seconds()/n, "budget-cpu-s/op")
		b.ReportMetric(cpu[0].Seconds()/cpu[1].Seconds(), "cpu-ratio")
	}
}
