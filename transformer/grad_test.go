package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// tinyConfigs are the configurations of the gradient checks: L=2, heads
// [2,1], E=8, N=7, A=3, every combination of LN on/off, FF on/off,
// ReLU/GELU (FF only) and learned/sinusoidal positions.
func tinyConfigs() []Config {
	var out []Config
	for _, ln := range []bool{true, false} {
		for _, ff := range []bool{true, false} {
			for _, act := range []string{GELU, ReLU} {
				if !ff && act == ReLU {
					continue
				}
				for _, pos := range []string{Learned, Sinusoidal} {
					out = append(out, Config{Layers: 2, Heads: []int{2, 1}, Embed: 8, Context: 7, Alphabet: 3,
						FeedForward: ff, LayerNorm: ln, Activation: act, Positional: pos})
				}
			}
		}
	}
	return out
}

// randomModel returns a model whose every parameter (LayerNorm gains and
// biases included) is random with scale std, so that no gradient is
// trivially zero.
func randomModel(t testing.TB, cfg Config, seed uint64, std float64) *Model {
	m, err := NewOn(cpu.NewDefault(), cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for _, ti := range cfg.Layout() {
		for i := ti.Offset; i < ti.Offset+ti.Size; i++ {
			v := std * r.NormFloat64()
			if len(ti.Shape) == 1 && (strings.HasSuffix(ti.Name, "ln1.weight") || strings.HasSuffix(ti.Name, "ln2.weight") || ti.Name == "lnf.weight") {
				v += 1
			}
			liveParams(m)[i] = float32(v)
		}
	}
	return m
}

func randomInputs(seed uint64, n, A int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(r.IntN(A))
	}
	return x
}

// TestLogitsMatchReference compares the engine's logits with the naive
// float64 reference to 1e-5 (absolute), on the tiny configurations and on
// a larger one that exercises the kernel's blocking edges.
func TestLogitsMatchReference(t *testing.T) {
	cfgs := tinyConfigs()
	big := DefaultConfig(3, 4, 32, 40, 5)
	big.Heads = []int{4, 2, 8}
	cfgs = append(cfgs, big)
	for ci, cfg := range cfgs {
		m := randomModel(t, cfg, uint64(ci+1), 0.3)
		if ci == len(cfgs)-1 {
			m, _ = NewOn(cpu.NewDefault(), cfg, 5)
		}
		B, T := 3, cfg.Context
		x := randomInputs(uint64(ci), B*T, cfg.Alphabet)
		acts := m.NewActivations(B, T, false)
		loss := m.Forward(acts, x, B, T)
		ref := newRef(cfg, toF64(liveParams(m)))
		want, wantLoss := ref.forward(x, B, T)
		got := acts.Logits()
		A := cfg.Alphabet
		maxd := 0.0
		for b := 0; b < B; b++ {
			for tt := 0; tt < T; tt++ {
				for a := 0; a < A; a++ {
					d := math.Abs(float64(got[(b*T+tt)*A+a]) - want[b][tt][a])
					maxd = math.Max(maxd, d)
				}
			}
		}
		if maxd > 1e-5 {
			t.Errorf("%v: max |logit − reference| = %.3g > 1e-5", cfg, maxd)
		}
		if d := math.Abs(loss - wantLoss); d > 1e-5*wantLoss {
			t.Errorf("%v: loss %v, reference %v", cfg, loss, wantLoss)
		}
		// the same forward on a smaller (B, T) reusing the buffers
		acts2 := m.NewActivations(B+1, T, true)
		loss2 := m.Forward(acts2, x[:2*(T-2)], 2, T-2)
		_, want2 := ref.forward(x[:2*(T-2)], 2, T-2)
		if d := math.Abs(loss2 - want2); d > 1e-5*want2 {
			t.Errorf("%v: sub-batch loss %v, reference %v", cfg, loss2, want2)
		}
	}
}

func m0NewActs(cfg Config, B, T int) *Activations {
	m, _ := NewOn(cpu.NewDefault(), cfg, 0)
	return m.NewActivations(B, T, true)
}

// minAbsPreact is the smallest |pre-activation| of the feed-forward layers.
func minAbsPreact(a *Activations, n int) float64 {
	mn := math.Inf(1)
	for _, lb := range a.act.layers {
		for _, v := range hostSlice(lb.fch)[:n] {
			mn = math.Min(mn, math.Abs(float64(v)))
		}
	}
	return mn
}

// TestGradients checks the analytic gradient of the float32 engine against
// central differences (step 1e-4) of the float64 reference loss, for every
// element of every parameter tensor and for the gradient with respect to
// the embedding output (the input of the first layer). Bound, elementwise:
// |g − fd| ≤ 2e-3·|fd| + 1e-5·G, where G is the largest |fd| of the model
// (float32 round-off of the engine dominates; the float64 differences are
// accurate to ~1e-8 relative).
func TestGradients(t *testing.T) {
	for ci, cfg := range tinyConfigs() {
		t.Run(fmt.Sprintf("LN=%v,FF=%v,%s,%s", cfg.LayerNorm, cfg.FeedForward, cfg.Activation, cfg.Positional), func(t *testing.T) {
			B, T := 2, cfg.Context
			x := randomInputs(uint64(200+ci), B*T, cfg.Alphabet)
			x[0], x[1] = 0, 1 // symbol 2 may be absent: its wte row must get 0
			acts := m0NewActs(cfg, B, T)
			// ReLU is not differentiable at 0: take the first seed whose
			// pre-activations all stay ≥ 2e-3 from the kink, so that no
			// central difference straddles it.
			var m *Model
			for seed := uint64(100 + ci); ; seed += 1000 {
				m = randomModel(t, cfg, seed, 0.3)
				m.Forward(acts, x, B, T)
				if cfg.Activation != ReLU || minAbsPreact(acts, B*T*4*cfg.Embed) >= 2e-3 {
					break
				}
			}
			scale := 1 / float64(B*(T-1))
			flat := toF64(liveParams(m))
			ref := newRef(cfg, flat)
			const h = 1e-4
			fd := make([]float64, len(flat))
			G := 0.0
			for i := range flat {
				v := flat[i]
				flat[i] = v + h
				_, lp := ref.forward(x, B, T)
				flat[i] = v - h
				_, lm := ref.forward(x, B, T)
				flat[i] = v
				fd[i] = (lp - lm) / (2 * h) * scale
				G = math.Max(G, math.Abs(fd[i]))
			}
			// the analytic gradient with every kernel set this CPU runs
			defer setKernel(m, nil)
			var grads []float32
			for _, info := range kernels.Sets() {
				if !info.Usable {
					t.Logf("kernel set %s skipped: %s", info.Name, info.Reason)
					continue
				}
				if err := setKernelSet(m, info.Name); err != nil {
					t.Fatal(err)
				}
				grads = make([]float32, len(liveParams(m)))
				m.Forward(acts, x, B, T)
				m.Backward(acts, hostTensor(grads), float32(scale))
				t.Logf("kernel set %s:", info.Name)
				for _, ti := range cfg.Layout() {
					worst := 0.0
					for i := ti.Offset; i < ti.Offset+ti.Size; i++ {
						d := math.Abs(float64(grads[i]) - fd[i])
						bound := 2e-3*math.Abs(fd[i]) + 1e-5*G
						worst = math.Max(worst, d/bound)
						if d > bound {
							t.Errorf("%s[%d]: analytic %.8g, finite difference %.8g", ti.Name, i-ti.Offset, grads[i], fd[i])
							break
						}
					}
					t.Logf("%-20s worst error / bound = %.3f", ti.Name, worst)
				}
			}
			// gradient with respect to the embedding output
			E := cfg.Embed
			ref.encDelta = make([]float64, B*T*E)
			denc := hostSlice(acts.grad.encoded)
			for i := range ref.encDelta {
				ref.encDelta[i] = h
				_, lp := ref.forward(x, B, T)
				ref.encDelta[i] = -h
				_, lm := ref.forward(x, B, T)
				ref.encDelta[i] = 0
				f := (lp - lm) / (2 * h) * scale
				if d := math.Abs(float64(denc[i]) - f); d > 2e-3*math.Abs(f)+1e-5*G {
					t.Errorf("d embedding[%d]: analytic %.8g, finite difference %.8g", i, denc[i], f)
					break
				}
			}
		})
	}
}
