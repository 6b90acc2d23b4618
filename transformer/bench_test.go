package transformer

import (
	"testing"
	"time"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// BenchmarkTrainC1 measures a full training step (forward, backward,
// clipping, AdamW) of the C1 configuration: L=2, 4 heads, E=64, N=256,
// batch 32 (8192 tokens per step), A=3. Reports tokens/s.
func BenchmarkTrainC1(b *testing.B) {
	benchTrainStep(b, DefaultConfig(2, 4, 64, 256, 3), 32)
}

// BenchmarkTrainC2 is the C2 configuration: L=4, 8 heads, E=128, N=512,
// batch 16 (8192 tokens per step), A=3.
func BenchmarkTrainC2(b *testing.B) {
	benchTrainStep(b, DefaultConfig(4, 8, 128, 512, 3), 16)
}

func benchTrainStep(b *testing.B, cfg Config, B int) {
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	T := cfg.Context
	train := sliceWindows{}
	x := randomInputs(1, B*T, cfg.Alphabet)
	for i := 0; i < B; i++ {
		train = append(train, x[i*T:(i+1)*T])
	}
	tc := DefaultTrainConfig()
	tc.BatchSize = B
	tr, err := NewTrainer(m, tc, train, nil)
	if err != nil {
		b.Fatal(err)
	}
	tr.TrainStep(x, B) // warm up
	b.ResetTimer()
	t0 := cpuTime()
	for i := 0; i < b.N; i++ {
		tr.TrainStep(x, B)
	}
	reportTokens(b, B*T*b.N, t0)
}

// reportTokens reports tokens/s and, where the CPU time is known,
// tokens/cpu-s (tokens per CPU-second summed over cores: stable on a
// machine shared with other jobs; ≈ tokens/s ÷ cores used).
func reportTokens(b *testing.B, tokens int, cpu0 time.Duration) {
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
	if cpu := cpuTime() - cpu0; cpu > 0 && cpu0 > 0 {
		b.ReportMetric(float64(tokens)/cpu.Seconds(), "tokens/cpu-s")
	}
}

// BenchmarkForwardC1 is the forward pass alone (inference buffers).
func BenchmarkForwardC1(b *testing.B) {
	cfg := DefaultConfig(2, 4, 64, 256, 3)
	m, _ := NewOn(cpu.NewDefault(), cfg, 1)
	B, T := 32, 256
	x := randomInputs(1, B*T, 3)
	acts := m.NewActivations(B, T, false)
	b.ResetTimer()
	t0 := cpuTime()
	for i := 0; i < b.N; i++ {
		m.Forward(acts, x, B, T)
	}
	reportTokens(b, B*T*b.N, t0)
}
