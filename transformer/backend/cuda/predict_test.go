package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// comparePredict checks that PredictBatch of a model on be (forward-only
// buffers on the device, windows batched) gives the distributions of the
// same model's PredictBatch on the CPU backend to tol (absolute, on
// probabilities), and its own PredictSequence window by window to tol
// too (the GEMMs choose tiles and K splits by shape, so a batch of
// windows need not round as one window does), for windows of different
// lengths: shorter than N, N+1, sliding.
func comparePredict(t *testing.T, be backend.Backend, cfg transformer.Config, tol float64) {
	t.Helper()
	flat := transformer.InitParams(cfg, 3)
	ref := cpu.New(kernels.Default())
	defer ref.Close()
	mc, err := transformer.FromParamsOn(ref, cfg, flat)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Free()
	mg, err := transformer.FromParamsOn(be, cfg, flat)
	if err != nil {
		t.Fatal(err)
	}
	defer mg.Free()
	N, A := cfg.Context, cfg.Alphabet
	r := rand.New(rand.NewPCG(5, 6))
	var xs [][]byte
	for _, n := range []int{N + 1, N + 1, 7, N + 1, 2*N + 3, 1, N + 1} {
		x := make([]byte, n)
		for i := range x {
			x[i] = byte(r.IntN(A))
		}
		xs = append(xs, x)
	}
	outs := func() [][]float64 {
		o := make([][]float64, len(xs))
		for j, x := range xs {
			o[j] = make([]float64, len(x)*A)
		}
		return o
	}
	want, got := outs(), outs()
	if err := mc.PredictBatch(xs, want); err != nil {
		t.Fatal(err)
	}
	if err := mg.PredictBatch(xs, got); err != nil {
		t.Fatal(err)
	}
	worst, worstSeq := 0.0, 0.0
	for j, x := range xs {
		seq := make([]float64, len(x)*A)
		mg.PredictSequence(x, seq)
		for i := range want[j] {
			d, ds := math.Abs(got[j][i]-want[j][i]), math.Abs(got[j][i]-seq[i])
			if !(d <= tol) || !(ds <= tol) {
				t.Fatalf("%s, window %d, value %d: PredictBatch %v, PredictSequence %v, on the CPU %v", be.Name(), j, i, got[j][i], seq[i], want[j][i])
			}
			worst, worstSeq = max(worst, d), max(worstSeq, ds)
		}
	}
	t.Logf("%s L=%d E=%d N=%d: PredictBatch within %.2g of the CPU's, %.2g of its PredictSequence", be.Name(), cfg.Layers, cfg.Embed, N, worst, worstSeq)
}

// TestPredictBatchMatchesCPU is TestEmulatorPredictBatch on the GPU, at
// the architectures of the training comparison.
func TestPredictBatchMatchesCPU(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	for _, cfg := range gpuConfigs()[:3] {
		comparePredict(t, be, cfg, 1e-5)
	}
}
