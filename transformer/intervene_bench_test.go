package transformer

import (
	"testing"
	"time"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// BenchmarkIntervened measures what an intervention costs an evaluation:
// PredictBatch of BatchWindows(N) windows of N symbols at C1 (L=2, 4
// heads, E=64, N=256, A=3), intact and with each intervention, in the
// same run, each iteration timing every path in turn (the order
// rotating). It reports each path's cost relative to the intact one, in
// wall time and in process CPU time ("zero/intact" = 1.05: 5% slower):
//
//   - zero, mean, resample: two layer-1 heads ablated;
//   - offset: a layer-1 head replaced by offset:1;
//   - suffix: a layer-2 head replaced by suffix:2;
//   - all: zero ablation of one head in every layer.
//
// On a machine shared with other jobs, quote the ratios.
func BenchmarkIntervened(b *testing.B) {
	cfg := DefaultConfig(2, 4, 64, 256, 3)
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Free()
	N, A := cfg.Context, cfg.Alphabet
	B := m.BatchWindows(N)
	x := randomInputs(5, B*N, A)
	xs, outs := make([][]byte, B), make([][]float64, B)
	for j := range xs {
		xs[j], outs[j] = x[j*N:(j+1)*N], make([]float64, N*A)
	}
	var refs [][]byte
	for i := range 64 {
		refs = append(refs, randomInputs(uint64(100+i), N, A))
	}
	l1 := []Head{{0, 1}, {0, 2}}
	ivs := []struct {
		name string
		iv   Intervention
	}{
		{"zero", Intervention{Ablate: l1, Mode: AblateZero}},
		{"mean", Intervention{Ablate: l1, Mode: AblateMean, References: refs}},
		{"resample", Intervention{Ablate: l1, Mode: AblateResample, References: refs}},
		{"offset", Intervention{Patterns: []HeadPattern{{Head{0, 0}, Pattern{PatternOffset, 1}}}}},
		{"suffix", Intervention{Patterns: []HeadPattern{{Head{1, 0}, Pattern{PatternSuffix, 2}}}}},
		{"all", Intervention{Ablate: []Head{{0, 0}, {1, 0}}, Mode: AblateZero}},
	}
	names := []string{"intact"}
	paths := []func(){func() {
		if err := m.PredictBatch(xs, outs); err != nil {
			b.Fatal(err)
		}
	}}
	for _, c := range ivs {
		iv, err := m.Intervene(c.iv)
		if err != nil {
			b.Fatal(err)
		}
		names = append(names, c.name)
		paths = append(paths, func() {
			if err := iv.PredictBatch(xs, outs); err != nil {
				b.Fatal(err)
			}
		})
	}
	for _, p := range paths { // warm up: pools, buffers
		p()
	}
	wall, cpu := make([]time.Duration, len(paths)), make([]time.Duration, len(paths))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k := range paths {
			p := (i + k) % len(paths)
			t0, c0 := time.Now(), cpuTime()
			paths[p]()
			wall[p] += time.Since(t0)
			cpu[p] += cpuTime() - c0
		}
	}
	b.ReportMetric(float64(b.N*B*N)/wall[0].Seconds(), "intact-tokens/s")
	for p := 1; p < len(paths); p++ {
		b.ReportMetric(wall[p].Seconds()/wall[0].Seconds(), names[p]+"/intact")
		if cpu[0] > 0 {
			b.ReportMetric(cpu[p].Seconds()/cpu[0].Seconds(), names[p]+"/intact(cpu)")
		}
	}
}
