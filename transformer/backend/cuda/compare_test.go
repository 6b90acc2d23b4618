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

type windows [][]byte

func (w windows) Windows() int        { return len(w) }
func (w windows) Window(i int) []byte { return w[i] }

// trainLosses trains a model of cfg on be for steps steps of B random
// windows (the same windows and initial parameters for every backend) and
// returns the training losses and gradient norms.
func trainLosses(t *testing.T, be backend.Backend, cfg transformer.Config, B, steps int) (losses, norms []float64) {
	t.Helper()
	m, err := transformer.NewOn(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	T := cfg.Context
	r := rand.New(rand.NewPCG(3, 4))
	var train windows
	for i := 0; i < B*4; i++ {
		w := make([]byte, T)
		prev := byte(0)
		for j := range w { // a little structure: repeat the previous symbol half the time
			if r.IntN(2) == 0 {
				w[j] = prev
			} else {
				w[j] = byte(r.IntN(cfg.Alphabet))
			}
			prev = w[j]
		}
		train = append(train, w)
	}
	tc := transformer.DefaultTrainConfig()
	tc.BatchSize, tc.WarmupSteps, tc.LR, tc.MaxSteps = B, 5, 3e-3, steps
	tr, err := transformer.NewTrainer(m, tc, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Free()
	in := make([]byte, 0, B*T)
	for s := 0; s < steps; s++ {
		in = in[:0]
		for i := 0; i < B; i++ {
			in = append(in, train[(s*B+i)%len(train)]...)
		}
		l, g := tr.TrainStep(in, B)
		losses, norms = append(losses, l), append(norms, g)
	}
	return losses, norms
}

// compareTraining trains the same models on the CPU backend and on be and
// checks that the losses agree to tol (relative) at every step and fall.
func compareTraining(t *testing.T, be backend.Backend, steps int, tol float64, cfgs []transformer.Config, B int) {
	ref := cpu.New(kernels.Default())
	defer ref.Close()
	for _, cfg := range cfgs {
		compareOne(t, ref, be, cfg, steps, tol, B)
	}
}

func compareOne(t *testing.T, ref, be backend.Backend, cfg transformer.Config, steps int, tol float64, B int) {
	t.Helper()
	{
		want, wn := trainLosses(t, ref, cfg, B, steps)
		got, gn := trainLosses(t, be, cfg, B, steps)
		worst, worstNorm := 0.0, 0.0
		for i := range want {
			d := math.Abs(got[i]-want[i]) / math.Abs(want[i])
			worst = math.Max(worst, d)
			if !(d <= tol) {
				t.Errorf("%+v: step %d loss %.9g on %s, %.9g on the CPU (relative difference %.2g > %.2g)", cfg, i+1, got[i], be.Name(), want[i], d, tol)
				return
			}
			if dn := math.Abs(gn[i]-wn[i]) / wn[i]; !(dn <= 100*tol) {
				t.Errorf("%+v: step %d gradient norm %.9g on %s, %.9g on the CPU", cfg, i+1, gn[i], be.Name(), wn[i])
				return
			}
			worstNorm = math.Max(worstNorm, math.Abs(gn[i]-wn[i])/wn[i])
		}
		if !(got[len(got)-1] < got[0]) {
			t.Errorf("%+v: the loss did not fall on %s: %.4f → %.4f", cfg, be.Name(), got[0], got[len(got)-1])
		}
		t.Logf("%s L=%d H=%v E=%d N=%d ff=%v ln=%v %s: %d steps, losses %.6f → %.6f, largest relative difference from the CPU %.2g (gradient norm %.2g)",
			be.Name(), cfg.Layers, cfg.Heads, cfg.Embed, cfg.Context, cfg.FeedForward, cfg.LayerNorm, cfg.Positional, steps, got[0], got[len(got)-1], worst, worstNorm)
	}
}
