package transformer

import (
	"testing"
	"time"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// oldPredictSequence is PredictSequence as it was before forward-only
// buffers and batches: one pass per window on a's activations (every
// layer's buffers, of one window), the first over x[0..min(n−1, N)−1],
// then one per row beyond N over the last N symbols.
func oldPredictSequence(m *Model, a *Activations, x []byte, out []float64) {
	n, N, A := len(x), m.Config.Context, m.Config.Alphabet
	if n == 0 {
		return
	}
	predict.Uniform(out[:A])
	if n == 1 {
		return
	}
	T := min(n-1, N)
	m.Forward(a, x[:T], 1, T)
	probs := a.Probs()
	for i := 1; i <= T; i++ {
		predict.FromFloat32(out[i*A:(i+1)*A], probs[(i-1)*A:i*A])
	}
	for i := N + 1; i < n; i++ {
		m.Forward(a, x[i-N:i], 1, N)
		predict.FromFloat32(out[i*A:(i+1)*A], a.ProbRow(0, N-1))
	}
}

// BenchmarkEvalPaper measures evaluation at the paper's shape — N=1536,
// E=128, 8 heads, A=3; 2 layers (the paper's TF(4,4) has 4, which only
// doubles every time) — on windows of N symbols, as `vomc eval` runs a
// tf method, against the training step's forward pass on the same model,
// in the same run: each iteration times, in turn (the order rotating),
//
//   - train-fwd: Forward on training Activations over B windows of N
//     symbols (what TrainStep does before Backward), B = the batch of
//     PredictBatch (BatchWindows(N));
//   - old: the per-window path before forward-only buffers
//     (oldPredictSequence: one window per pass on Activations);
//   - new: PredictBatch of the same B windows (forward-only buffers).
//
// It reports each path's tokens/s (symbols predicted, or trained on,
// per second of wall time) and tokens/cpu-s (per CPU-second of the
// process, summed over cores), and the ratios new/train-fwd and new/old
// of both. On a machine shared with other jobs, quote the ratios.
func BenchmarkEvalPaper(b *testing.B) { benchEval(b, DefaultConfig(2, 8, 128, 1536, 3)) }

// BenchmarkEvalC1 is BenchmarkEvalPaper at the C1 configuration of the
// training benchmarks (L=2, 4 heads, E=64, N=256, A=3), whose short
// windows fill a pass only when batched.
func BenchmarkEvalC1(b *testing.B) { benchEval(b, DefaultConfig(2, 4, 64, 256, 3)) }

func benchEval(b *testing.B, cfg Config) {
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
	train := m.NewActivations(B, N, true)
	defer train.Free()
	old := m.NewActivations(1, N, false)
	defer old.Free()
	paths := []func(){
		func() { m.Forward(train, x, B, N) },
		func() {
			for j := range xs {
				oldPredictSequence(m, old, xs[j], outs[j])
			}
		},
		func() {
			if err := m.PredictBatch(xs, outs); err != nil {
				b.Fatal(err)
			}
		},
	}
	for _, p := range paths { // warm up: pools, buffers
		p()
	}
	var wall, cpu [3]time.Duration
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
	tokens := float64(b.N * B * N)
	rate := func(d time.Duration) float64 { return tokens / d.Seconds() }
	b.ReportMetric(float64(B), "windows/batch")
	for p, name := range []string{"train-fwd", "old", "new"} {
		b.ReportMetric(rate(wall[p]), name+"-tokens/s")
		if cpu[p] > 0 {
			b.ReportMetric(rate(cpu[p]), name+"-tokens/cpu-s")
		}
	}
	b.ReportMetric(rate(wall[2])/rate(wall[0]), "new/train-fwd")
	b.ReportMetric(rate(wall[2])/rate(wall[1]), "new/old")
	if cpu[0] > 0 && cpu[1] > 0 && cpu[2] > 0 {
		b.ReportMetric(rate(cpu[2])/rate(cpu[0]), "new/train-fwd(cpu)")
		b.ReportMetric(rate(cpu[2])/rate(cpu[1]), "new/old(cpu)")
	}
}
