package synth

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/predict"
)

// refLoss is an independent float64 forward pass: mean cross-entropy over
// the rows with targets.
func refLoss(m *Model, p []float64, X []float32, targets []int32) float64 {
	c, l := m.Config, m.lay
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	lin := func(x []float64, w, b int, in, out int) []float64 {
		y := make([]float64, out)
		for o := 0; o < out; o++ {
			s := p[b+o]
			for i := 0; i < in; i++ {
				s += p[w+o*in+i] * x[i]
			}
			y[o] = s
		}
		return y
	}
	total, n := 0.0, 0
	for r, t := range targets {
		x := make([]float64, F)
		for k := range x {
			x[k] = float64(X[r*F+k])
		}
		a := x
		if c.Embed > 0 {
			a = lin(x, l.emb, l.embB, F, W)
		}
		u := lin(a, l.fc, l.fcB, W, H)
		for i, v := range u {
			if c.Activation == ReLU {
				u[i] = math.Max(v, 0)
			} else {
				u[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
			}
		}
		h := lin(u, l.proj, l.projB, H, W)
		for i := range h {
			h[i] += a[i]
		}
		z := lin(h, l.head, l.headB, W, A)
		mx := z[0]
		for _, v := range z {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for _, v := range z {
			s += math.Exp(v - mx)
		}
		if t >= 0 {
			total += math.Log(s) - (z[t] - mx)
			n++
		}
	}
	return total / float64(n)
}

func randSeq(rng *rand.Rand, n, A int) []byte {
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(rng.IntN(A))
	}
	return x
}

// TestGradients compares every analytic (float32) gradient with float64
// central differences of refLoss.
func TestGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		v     Variant
		embed int
		act   string
	}{{TF20, 0, GELU}, {WithAllCounts, 0, ReLU}, {TotalCountsOnly, 5, GELU}, {WithoutCounts, 4, ReLU}} {
		m, err := New(Config{Variant: tc.v, A: 3, D: 2, Context: 12, Embed: tc.embed, Hidden: 7, Activation: tc.act}, 5)
		if err != nil {
			t.Fatal(err)
		}
		const B, T = 3, 12
		ac := m.NewActivations(B*(T-1), true)
		e := m.NewExtractor()
		raw := make([]float64, m.Config.Features())
		F := m.Config.Features()
		for b := 0; b < B; b++ {
			r := b * (T - 1)
			m.fillWindow(e, raw, randSeq(rng, T, 3), ac.X[r*F:(r+T-1)*F], ac.Targets[r:r+T-1])
		}
		M := B * (T - 1)
		ac.Targets[4] = -1 // a row outside the loss
		nt := M - 1
		loss := m.Forward(ac, M) / float64(nt)
		p := make([]float64, len(m.Params))
		for i, v := range m.Params {
			p[i] = float64(v)
		}
		if ref := refLoss(m, p, ac.X, ac.Targets[:M]); math.Abs(ref-loss) > 1e-5 {
			t.Fatalf("%v: loss %v, reference %v", tc.v, loss, ref)
		}
		g := make([]float32, len(m.Params))
		m.Backward(ac, g, M, float32(1/float64(nt)))
		fd := make([]float64, len(p))
		mx := 0.0
		for i := range p {
			const h = 1e-5
			old := p[i]
			p[i] = old + h
			lp := refLoss(m, p, ac.X, ac.Targets[:M])
			p[i] = old - h
			lm := refLoss(m, p, ac.X, ac.Targets[:M])
			p[i] = old
			fd[i] = (lp - lm) / (2 * h)
			mx = math.Max(mx, math.Abs(fd[i]))
		}
		worst := 0.0
		for i := range p {
			bound := 2e-3*math.Abs(fd[i]) + 1e-5*mx
			d := math.Abs(float64(g[i]) - fd[i])
			worst = math.Max(worst, d/bound)
			if d > bound {
				t.Errorf("%v embed=%d %s: param %d: analytic %g, finite differences %g", tc.v, tc.embed, tc.act, i, g[i], fd[i])
			}
		}
		t.Logf("%v embed=%d %s: %d params, worst error/bound %.3f", tc.v, tc.embed, tc.act, len(p), worst)
	}
}

// sliceWindows is a transformer.Windows over in-memory windows.
type sliceWindows [][]byte

func (s sliceWindows) Windows() int        { return len(s) }
func (s sliceWindows) Window(i int) []byte { return s[i] }

// order1 samples windows of a fixed order-1 Markov chain over 3 symbols.
func order1(rng *rand.Rand, n, T int) sliceWindows {
	P := [3][3]float64{{0.8, 0.1, 0.1}, {0.1, 0.1, 0.8}, {0.3, 0.4, 0.3}}
	var ws sliceWindows
	for range n {
		x := make([]byte, T)
		x[0] = byte(rng.IntN(3))
		for i := 1; i < T; i++ {
			u, a := rng.Float64(), 0
			for ; a < 2 && u > P[x[i-1]][a]; a++ {
				u -= P[x[i-1]][a]
			}
			x[i] = byte(a)
		}
		ws = append(ws, x)
	}
	return ws
}

// TestTrainDeterministicAndLearns trains twice on an order-1 chain: the
// runs are bit-identical and the loss falls well below the unigram's.
func TestTrainDeterministicAndLearns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	train, val := order1(rng, 200, 32), order1(rng, 20, 32)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.EvalEvery, tc.WarmupSteps, tc.LR = 16, 6, 20, 10, 1e-2
	cfg := Config{Variant: WithAllCounts, A: 3, D: 2}
	m1, err := Train(context.Background(), cfg, train, val, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Train(context.Background(), cfg, train, val, tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m1.Params {
		if m1.Params[i] != m2.Params[i] {
			t.Fatalf("runs differ at parameter %d", i)
		}
	}
	// H(X_t | X_{t−1}) for this chain is about 0.78 nats; uniform is ln 3.
	if v := m1.Evaluate(val); !(v < 0.95) || math.Abs(v-m1.Info.BestVal) > 1e-9 {
		t.Errorf("validation loss %v (best %v), want < 0.95 and equal", v, m1.Info.BestVal)
	}
	t.Logf("best val %.4f after %d steps", m1.Info.BestVal, m1.Info.Steps)

	// Save / Load round trip.
	var buf bytes.Buffer
	if err := m1.Write(&buf); err != nil {
		t.Fatal(err)
	}
	m3, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if m3.Config != m1.Config || m3.Info.Steps != m1.Info.Steps || len(m3.Info.History) != len(m1.Info.History) {
		t.Fatalf("round trip: config %+v info %+v", m3.Config, m3.Info)
	}
	for i := range m1.Params {
		if m1.Params[i] != m3.Params[i] {
			t.Fatalf("round trip changed parameter %d", i)
		}
	}

	// Predictor contract: the State loop equals PredictSequence, also past
	// the context (sliding window); row 0 is uniform.
	x := randSeq(rng, 45, 3)
	A := 3
	seq := make([]float64, len(x)*A)
	m1.PredictSequence(x, seq)
	st := m1.NewState()
	p := make([]float64, A)
	for i, s := range x {
		st.Predict(p)
		for a := range p {
			if math.Abs(p[a]-seq[i*A+a]) > 1e-6 {
				t.Fatalf("row %d: State %v, PredictSequence %v", i, p, seq[i*A:(i+1)*A])
			}
		}
		st.Observe(s)
	}
	if seq[0] != 1.0/3 {
		t.Errorf("row 0 = %v, want uniform", seq[:A])
	}
	if _, err := predict.LogLoss(m1, x, make([]float64, len(x))); err != nil {
		t.Fatal(err)
	}
	if m1.Name() != "TF 2-0 w/ all counts" {
		t.Errorf("name %q", m1.Name())
	}
}
