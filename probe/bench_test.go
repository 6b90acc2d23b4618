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

// benchSetup makes 1000 windows of 512 symbols of the depth-3 prior (A =
// 3), split 600/200/200 with 64 positions each, and the ladder's TF(4,4)
// architecture (L = 2, 4 heads, E = 64, N = 512) at initialisation (the
// cost does not depend on the weights).
func benchSetup(b *testing.B) ([]*split, *targetSet, *tfStreams, [][]byte) {
	b.Helper()
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(3), K: 1000, NK: 512, N: 512, Fresh: true, Seed: 9}, 2, nil)
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
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 4, 64, 512, 3), 1)
	if err != nil {
		b.Fatal(err)
	}
	var xs [][]byte
	for _, s := range splits {
		xs = append(xs, s.windows...)
	}
	return splits, ts, &tfStreams{m: m}, xs
}

// BenchmarkProbeInputs measures what a probe reads for 1000 windows of
// 512 symbols — every residual stream at 64 positions per window (one
// forward-only pass, the probed rows copied out) and every
// target (CTW's ω and MAP length, the context counts) — against its
// budget: one forward pass over the same windows (the evaluation path,
// PredictBatch) plus a CTW pass reading ω at every position. The two run
// alternately in every iteration; the metrics are the seconds of each
// (wall and CPU: on a machine shared with other jobs the CPU time is the
// stable one) and their ratios, which the goal keeps ≤ 1.
func BenchmarkProbeInputs(b *testing.B) {
	splits, ts, m, xs := benchSetup(b)
	outs := make([][]float64, len(xs))
	for i, x := range xs {
		outs[i] = make([]float64, len(x)*3)
	}
	omega := make([]float64, ts.D+1)
	o := Options{Workers: 1, Events: events.Discard}
	paths := []func(){
		func() { // the probe's inputs
			if _, err := features(context.Background(), m, splits, 512, "features", events.Discard); err != nil {
				b.Fatal(err)
			}
			if err := computeTargets(context.Background(), ts, splits, 512, o); err != nil {
				b.Fatal(err)
			}
		},
		func() { // the budget
			if err := m.m.PredictBatch(xs, outs); err != nil {
				b.Fatal(err)
			}
			for _, x := range xs {
				st := ts.ctw.NewCTWState()
				for _, s := range x {
					st.Observe(s)
					st.Weights(omega)
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
