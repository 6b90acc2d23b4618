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

// interventions are the interventions the device comparisons run: each
// ablation mode and both patterns, on heads of the first and last layer.
func interventions(cfg transformer.Config, refs [][]byte) []transformer.Intervention {
	last := transformer.Head{Layer: cfg.Layers - 1, Head: cfg.Heads[cfg.Layers-1] - 1}
	first := transformer.Head{}
	return []transformer.Intervention{
		{Ablate: []transformer.Head{first, last}, Mode: transformer.AblateZero},
		{Ablate: []transformer.Head{last}, Mode: transformer.AblateMean, References: refs},
		{Ablate: []transformer.Head{first}, Mode: transformer.AblateResample, References: refs, Seed: 4},
		{Patterns: []transformer.HeadPattern{
			{Head: first, Pattern: transformer.Pattern{Kind: transformer.PatternOffset, N: 1}},
			{Head: last, Pattern: transformer.Pattern{Kind: transformer.PatternSuffix, N: 2}},
		}},
	}
}

// compareIntervened checks that an intervened model's PredictBatch on be
// gives the distributions of the same intervened model on the CPU
// backend to tol (absolute, on probabilities), and that the intervention
// changed them (so that the comparison is of the intervened path).
func compareIntervened(t *testing.T, be backend.Backend, cfg transformer.Config, tol float64) {
	t.Helper()
	// weights three times their initial scale, so that a head's output
	// moves the predictions by far more than the tolerance
	flat := transformer.InitParams(cfg, 3)
	for i := range flat {
		flat[i] *= 3
	}
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
	r := rand.New(rand.NewPCG(7, 8))
	draw := func(n int) []byte {
		x := make([]byte, n)
		for i := range x {
			x[i] = byte(r.IntN(A))
		}
		return x
	}
	var xs, refs [][]byte
	for _, n := range []int{N + 1, 5, N + 1, 2*N + 3} {
		xs = append(xs, draw(n))
	}
	for range 5 {
		refs = append(refs, draw(N))
	}
	outs := func() [][]float64 {
		o := make([][]float64, len(xs))
		for j, x := range xs {
			o[j] = make([]float64, len(x)*A)
		}
		return o
	}
	intact := outs()
	if err := mc.PredictBatch(xs, intact); err != nil {
		t.Fatal(err)
	}
	for _, iv := range interventions(cfg, refs) {
		xc, err := mc.Intervene(iv)
		if err != nil {
			t.Fatal(err)
		}
		xg, err := mg.Intervene(iv)
		if err != nil {
			t.Fatal(err)
		}
		want, got := outs(), outs()
		if err := xc.PredictBatch(xs, want); err != nil {
			t.Fatal(err)
		}
		if err := xg.PredictBatch(xs, got); err != nil {
			t.Fatal(err)
		}
		worst, moved := 0.0, 0.0
		for j := range xs {
			for i := range want[j] {
				d := math.Abs(got[j][i] - want[j][i])
				if !(d <= tol) {
					t.Fatalf("%s, %s, window %d, value %d: %v, on the CPU %v", be.Name(), iv, j, i, got[j][i], want[j][i])
				}
				worst, moved = max(worst, d), max(moved, math.Abs(want[j][i]-intact[j][i]))
			}
		}
		if moved == 0 {
			t.Errorf("%s: the intervention changed no prediction", iv)
		}
		t.Logf("%s L=%d E=%d N=%d %s: within %.2g of the CPU's (it moves predictions by up to %.2g)", be.Name(), cfg.Layers, cfg.Embed, N, iv, worst, moved)
	}
}

// TestInterveneMatchesCPU is TestEmulatorIntervene on the GPU, at the
// architectures of the training comparison, to 1e-4: the weights at three
// times their initial scale make the logits larger than those of
// TestPredictBatchMatchesCPU (1e-5), and the GPU's GEMMs split their sums
// by shape. Not yet run on a GPU.
func TestInterveneMatchesCPU(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	for _, cfg := range gpuConfigs()[:3] {
		compareIntervened(t, be, cfg, 1e-4)
	}
}
