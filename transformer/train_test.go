package transformer

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestLearningRate: the warm-up, then the cosine decay to the floor at
// the run's end, or the constant peak; "" is the cosine schedule.
func TestLearningRate(t *testing.T) {
	for _, c := range []struct {
		schedule            string
		step, warmup, total int
		peak, floor, want   float64
	}{
		{ScheduleCosine, 0, 10, 110, 1, 0, 0.1},           // warm-up step 0
		{ScheduleConstant, 0, 10, 110, 1, 0, 0.1},         // the same warm-up
		{ScheduleCosine, 9, 10, 110, 1, 0, 1},             // end of warm-up
		{ScheduleCosine, 60, 10, 110, 1, 0.1, 0.55},       // cosine midpoint
		{"", 60, 10, 110, 1, 0.1, 0.55},                   // "" is cosine
		{ScheduleCosine, 110, 10, 110, 1, 0.1, 0.1},       // end
		{ScheduleCosine, 500, 10, 110, 1, 0.1, 0.1},       // after the end
		{ScheduleConstant, 9, 10, 110, 1e-3, 1e-5, 1e-3},  // end of warm-up
		{ScheduleConstant, 60, 10, 110, 1e-3, 1e-5, 1e-3}, // the peak, not the cosine
		{ScheduleConstant, 500, 0, 110, 1e-3, 1e-5, 1e-3}, // no warm-up, past the end
		{ScheduleConstant, 0, 0, 110, 1e-3, 1e-5, 1e-3},   // no warm-up: the peak from step 0
	} {
		if got := LearningRate(c.schedule, c.step, c.warmup, c.total, c.peak, c.floor); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%q step %d (warm-up %d, total %d): %v, want %v", c.schedule, c.step, c.warmup, c.total, got, c.want)
		}
	}
}

// TestScheduleJSON: the cosine schedule is left out of the JSON form (old
// files and stage hashes read and hash the same), the constant one kept,
// and both read back; a bad schedule is refused by Validate.
func TestScheduleJSON(t *testing.T) {
	for _, s := range Schedules {
		c := DefaultTrainConfig()
		c.Schedule = s
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(b), "lr_schedule"); has != (s == ScheduleConstant) {
			t.Errorf("%s: JSON %s", s, b)
		}
		var back TrainConfig
		back.Schedule = "x"
		if err := json.Unmarshal(b, &back); err != nil || back != c {
			t.Errorf("%s: read back %+v, %v", s, back, err)
		}
	}
	c := DefaultTrainConfig()
	c.Schedule = "linear"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "lr_schedule") || !strings.Contains(err.Error(), "one of cosine, constant") {
		t.Errorf("schedule linear: %v", err)
	}
}

func TestClipGradNorm(t *testing.T) {
	be := cpu.NewDefault()
	g := []float32{3, 4}
	if n := ClipGradNorm(be, hostTensor(g), 1); n != 5 || math.Abs(float64(g[0])-0.6) > 1e-6 || math.Abs(float64(g[1])-0.8) > 1e-6 {
		t.Errorf("norm %v, clipped %v", n, g)
	}
	g = []float32{0.3, 0.4}
	ClipGradNorm(be, hostTensor(g), 1)
	if g[0] != 0.3 || g[1] != 0.4 {
		t.Errorf("clipped below the bound: %v", g)
	}
}

// TestAdamW compares two steps with the PyTorch formula evaluated in
// float64.
func TestAdamW(t *testing.T) {
	p := []float32{1, -2, 0.5}
	o, err := NewAdamW(cpu.NewDefault(), 3)
	if err != nil {
		t.Fatal(err)
	}
	gs := [][]float32{{0.1, -0.3, 2}, {-0.2, 0.1, 1}}
	want := []float64{1, -2, 0.5}
	m, v := make([]float64, 3), make([]float64, 3)
	lr := 0.01
	for step, g := range gs {
		o.Step(hostTensor(p), hostTensor(g), lr)
		tt := float64(step + 1)
		for i := range want {
			want[i] *= 1 - lr*0.01
			m[i] = 0.9*m[i] + 0.1*float64(g[i])
			v[i] = 0.999*v[i] + 0.001*float64(g[i])*float64(g[i])
			want[i] -= lr * (m[i] / (1 - math.Pow(0.9, tt))) / (math.Sqrt(v[i]/(1-math.Pow(0.999, tt))) + 1e-8)
		}
	}
	for i := range p {
		if math.Abs(float64(p[i])-want[i]) > 1e-6 {
			t.Errorf("param %d: %v, want %v", i, p[i], want[i])
		}
	}
}

// markovWindows draws n windows of T symbols from the order-1 chain P
// (stationary start), returning them and the chain's conditional and
// stationary (unigram) entropies in nats.
type sliceWindows [][]byte

func (s sliceWindows) Windows() int        { return len(s) }
func (s sliceWindows) Window(i int) []byte { return s[i] }

func markovWindows(P [][]float64, n, T int, seed uint64) (w sliceWindows, hCond, hUni float64) {
	A := len(P)
	// stationary distribution by power iteration
	pi := make([]float64, A)
	for i := range pi {
		pi[i] = 1 / float64(A)
	}
	for it := 0; it < 1000; it++ {
		nx := make([]float64, A)
		for a := range P {
			for b := range P[a] {
				nx[b] += pi[a] * P[a][b]
			}
		}
		pi = nx
	}
	for a := range P {
		hUni -= pi[a] * math.Log(pi[a])
		for _, p := range P[a] {
			if p > 0 {
				hCond -= pi[a] * p * math.Log(p)
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	draw := func(p []float64) byte {
		u, c := r.Float64(), 0.0
		for i, v := range p {
			c += v
			if u < c {
				return byte(i)
			}
		}
		return byte(len(p) - 1)
	}
	for i := 0; i < n; i++ {
		x := make([]byte, T)
		x[0] = draw(pi)
		for j := 1; j < T; j++ {
			x[j] = draw(P[x[j-1]])
		}
		w = append(w, x)
	}
	return w, hCond, hUni
}

var testChain = [][]float64{{0.1, 0.85, 0.05}, {0.05, 0.1, 0.85}, {0.8, 0.05, 0.15}}

// TestTrainMarkovSmoke trains a tiny model a few hundred steps on an
// order-1 Markov chain and checks that the validation loss ends far below
// the unigram entropy, near the conditional entropy.
func TestTrainMarkovSmoke(t *testing.T) {
	train, hCond, hUni := markovWindows(testChain, 1024, 32, 1)
	val, _, _ := markovWindows(testChain, 128, 32, 2)
	cfg := DefaultConfig(2, 2, 16, 32, 3)
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.LR, tc.WarmupSteps, tc.Seed = 16, 5, 3e-3, 20, 1
	tr, err := NewTrainer(m, tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	tr.Log = func(s EpochStats) {
		t.Logf("epoch %d step %d train %.4f val %.4f lr %.2g |g| %.3f %.0f tok/s", s.Epoch, s.Steps, s.TrainLoss, s.ValLoss, s.LR, s.GradNorm, s.TokensPerSecond)
	}
	st, err := tr.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("H(X|X−1) = %.4f, H(X) = %.4f nats; best val %.4f after %d steps", hCond, hUni, tr.BestVal, st.Steps)
	if st.Steps != 320 {
		t.Errorf("%d steps, want 5·1024/16 = 320", st.Steps)
	}
	// position 1 of each window is unpredictable from the past beyond the
	// unigram, so allow a little above hCond.
	if tr.BestVal > hCond+0.05 || tr.BestVal > hUni-0.5 {
		t.Errorf("validation loss %.4f not near H(X|X−1) = %.4f (unigram %.4f)", tr.BestVal, hCond, hUni)
	}
	// the trained model as a predict.Predictor on a fresh sequence
	x := val[0]
	loss := make([]float64, len(x))
	total, err := predict.LogLoss(m, x, loss)
	if err != nil || math.Abs(loss[0]-math.Log(3)) > 1e-12 || total/float64(len(x)) > hUni {
		t.Errorf("LogLoss: %v, %v, first %v", total, err, loss[0])
	}
}

// TestTrainDeterministic trains twice from the same seeds and requires
// bit-identical parameters.
func TestTrainDeterministic(t *testing.T) {
	train, _, _ := markovWindows(testChain, 64, 16, 3)
	run := func() []float32 {
		cfg := DefaultConfig(1, 2, 8, 16, 3)
		m, _ := NewOn(cpu.NewDefault(), cfg, 4)
		tc := DefaultTrainConfig()
		tc.BatchSize, tc.Epochs, tc.Seed = 8, 2, 9
		tr, err := NewTrainer(m, tc, train, train[:8])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return liveParams(m)
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("param %d differs: %v vs %v", i, a[i], b[i])
		}
	}
}

// TestEarlyStopping: with a zero learning rate the validation loss never
// improves after epoch 1, so training stops after 1+Patience epochs.
func TestEarlyStopping(t *testing.T) {
	train, _, _ := markovWindows(testChain, 16, 8, 3)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 8, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.LR, tc.MinLR, tc.WeightDecay, tc.Patience = 8, 50, 0, 0, 0, 3
	tr, _ := NewTrainer(m, tc, train, train)
	st, _ := tr.Run(context.Background())
	if st.Epoch != 4 {
		t.Errorf("stopped after %d epochs, want 4", st.Epoch)
	}
}

// TestPredictor checks the predict.Predictor contract: the State loop and
// PredictSequence agree (also past the context N, with the sliding
// window), rows are distributions, row 0 is uniform.
func TestPredictor(t *testing.T) {
	for _, cfg := range tinyConfigs()[:3] {
		m := randomModel(t, cfg, 3, 0.3)
		A := cfg.Alphabet
		x := randomInputs(5, 2*cfg.Context+3, A)
		seq := make([]float64, len(x)*A)
		if err := predict.Sequence(m, x, seq); err != nil {
			t.Fatal(err)
		}
		st := m.NewState()
		p := make([]float64, A)
		for i, s := range x {
			st.Predict(p)
			sum := 0.0
			for a := range p {
				sum += p[a]
				if math.Abs(p[a]-seq[i*A+a]) > 1e-6 {
					t.Fatalf("%s: position %d: state %v, sequence %v", m.Name(), i, p, seq[i*A:(i+1)*A])
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("row %d sums to %v", i, sum)
			}
			st.Observe(s)
		}
		for a := 0; a < A; a++ {
			if seq[a] != 1/float64(A) {
				t.Fatalf("row 0 not uniform: %v", seq[:A])
			}
		}
	}
}
