package synth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// refFeatures computes the model inputs of positions 0..T−1 of a window
// with a fresh extractor: row t after x[0..t].
func refFeatures(m *Model, x []byte) [][]float32 {
	e, raw := m.NewExtractor(), make([]float64, m.Config.Features())
	rows := make([][]float32, len(x))
	for t, s := range x {
		e.Push(s)
		rows[t] = make([]float32, m.Config.Features())
		m.Input(e, raw, rows[t])
	}
	return rows
}

// refProbs is the float64 reference of the model (the formulas of the
// implementation before synth ran on the engine, evaluated in float64):
// the next-symbol distribution of one feature row under parameters p.
func refProbs(c Config, p []float64, row []float32) []float64 {
	l := c.layout()
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
	a := make([]float64, F)
	for k := range a {
		a[k] = float64(row[k])
	}
	if c.Embed > 0 {
		a = lin(a, l.emb, l.embB, F, W)
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
	for i, v := range z {
		z[i] = math.Exp(v - mx)
		s += z[i]
	}
	for i := range z {
		z[i] /= s
	}
	return z
}

// refLoss is the float64 reference loss: the mean cross-entropy (nats)
// over the T−1 targets of every window.
func refLoss(c Config, p []float64, feats [][][]float32, wins [][]byte) float64 {
	total, n := 0.0, 0
	for b, x := range wins {
		for t := 0; t+1 < len(x); t++ {
			total -= math.Log(refProbs(c, p, feats[b][t])[x[t+1]])
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

var gradCases = []struct {
	v     Variant
	embed int
	act   string
}{{TF20, 0, GELU}, {WithAllCounts, 0, ReLU}, {TotalCountsOnly, 5, GELU}, {WithoutCounts, 4, ReLU}}

// gradEnc[i] is the encoding of gradCases[i] (nil: all Paper); set by
// TestEncodingGradients.
var gradEnc []string

// gradEncoding is the encoding of gradCases[i].
func gradEncoding(i int) string {
	if i < len(gradEnc) {
		return gradEnc[i]
	}
	return Paper
}

func f64s(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestGradients compares every analytic gradient of the model on the
// engine (float32 backend ops) with float64 central differences of
// refLoss, and the engine's loss with the reference's.
func TestGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i, tc := range gradCases {
		m, err := NewOn(cpu.NewDefault(), Config{Variant: tc.v, A: 3, D: 2, Context: 12, Embed: tc.embed, Hidden: 7, Activation: tc.act, Encoding: gradEncoding(i)}, 5)
		if err != nil {
			t.Fatal(err)
		}
		const B, T = 3, 12
		var wins [][]byte
		var feats [][][]float32
		var inputs []byte
		for range B {
			x := randSeq(rng, T, 3)
			wins, inputs = append(wins, x), append(inputs, x...)
			feats = append(feats, refFeatures(m, x))
		}
		ac := m.NewActivations(B, T, true)
		nt := B * (T - 1)
		loss := m.Forward(ac, inputs, B, T) / float64(nt)
		p := f64s(m.HostParams())
		if ref := refLoss(m.Config, p, feats, wins); math.Abs(ref-loss) > 1e-5 {
			t.Fatalf("%v: loss %v, reference %v", tc.v, loss, ref)
		}
		be := m.Backend()
		gt, err := backend.AllocTensor(be, m.NumParams())
		if err != nil {
			t.Fatal(err)
		}
		m.Backward(ac, gt, float32(1/float64(nt)))
		g := make([]float32, gt.Len)
		be.Download(g, gt)
		fd := make([]float64, len(p))
		mx := 0.0
		for i := range p {
			const h = 1e-5
			old := p[i]
			p[i] = old + h
			lp := refLoss(m.Config, p, feats, wins)
			p[i] = old - h
			lm := refLoss(m.Config, p, feats, wins)
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
		t.Logf("%v embed=%d %s %s: %d params, worst error/bound %.3f", tc.v, tc.embed, tc.act, m.Config.Encoding, len(p), worst)
	}
}

// TestPredictionsMatchReference checks the engine's probabilities (Forward
// on a batch, including each window's last position, and PredictSequence
// past the context with its sliding window) against the float64 reference
// of the former implementation on the same parameters.
func TestPredictionsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i, tc := range gradCases {
		m, err := NewOn(cpu.NewDefault(), Config{Variant: tc.v, A: 3, D: 2, Context: 10, Embed: tc.embed, Hidden: 9, Activation: tc.act, Encoding: gradEncoding(i)}, 6)
		if err != nil {
			t.Fatal(err)
		}
		p, A := f64s(m.HostParams()), 3
		worst := 0.0
		check := func(what string, got []float32, want []float64) {
			for i := range want {
				d := math.Abs(float64(got[i]) - want[i])
				worst = math.Max(worst, d)
				if d > 2e-6 {
					t.Fatalf("%v %s: probability %d: %v, reference %v", tc.v, what, i, got[i], want[i])
				}
			}
		}
		const B, T = 4, 10
		ac := m.NewActivations(B, T, false)
		var inputs []byte
		for range B {
			inputs = append(inputs, randSeq(rng, T, A)...)
		}
		m.Forward(ac, inputs, B, T)
		probs := ac.Probs()
		for b := 0; b < B; b++ {
			rows := refFeatures(m, inputs[b*T:(b+1)*T])
			for tt := 0; tt < T; tt++ {
				r := b*T + tt
				check(fmt.Sprintf("window %d position %d", b, tt), probs[r*A:(r+1)*A], refProbs(m.Config, p, rows[tt]))
			}
		}
		x := randSeq(rng, 27, A)
		seq := make([]float64, len(x)*A)
		m.PredictSequence(x, seq)
		for j := 1; j < len(x); j++ {
			lo := max(0, j-(m.Config.Context-1)) // the sliding window
			rows := refFeatures(m, x[lo:j])
			want := refProbs(m.Config, p, rows[len(rows)-1])
			got := make([]float32, A)
			for a := range got {
				got[a] = float32(seq[j*A+a])
			}
			check(fmt.Sprintf("PredictSequence row %d", j), got, want)
		}
		t.Logf("%v: max |Δp| %.2g", tc.v, worst)
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

func sameParams(t *testing.T, what string, a, b []float32) {
	t.Helper()
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: parameter %d differs: %v vs %v", what, i, a[i], b[i])
		}
	}
}

// TestTrainDeterministicAndLearns trains with GOMAXPROCS 1 and 3: the runs
// are bit-identical and the loss falls well below the unigram's.
func TestTrainDeterministicAndLearns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	train, val := order1(rng, 200, 32), order1(rng, 20, 32)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.LR, tc.LogEvery = 16, 6, 10, 1e-2, 5
	cfg := Config{Variant: WithAllCounts, A: 3, D: 2}
	m1 := trainOnProcs1And3(t, "", cfg, train, val, tc)
	// H(X_t | X_{t−1}) for this chain is about 0.78 nats; uniform is ln 3.
	if v := m1.Evaluate(val); !(v < 0.95) || math.Abs(v-m1.Info.BestVal) > 1e-9 {
		t.Errorf("validation loss %v (best %v), want < 0.95 and equal", v, m1.Info.BestVal)
	}
	if m1.Info.Steps != 6*13 || len(m1.Info.History) == 0 || m1.Info.BestStep == 0 {
		t.Errorf("info %+v", m1.Info)
	}
	t.Logf("best val %.4f at step %d after %d steps", m1.Info.BestVal, m1.Info.BestStep, m1.Info.Steps)

	// Save / Load round trip.
	var buf bytes.Buffer
	if err := m1.Write(&buf); err != nil {
		t.Fatal(err)
	}
	m3, err := ReadOn(cpu.NewDefault(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if m3.Config != m1.Config || m3.Info.Steps != m1.Info.Steps || len(m3.Info.History) != len(m1.Info.History) {
		t.Fatalf("round trip: config %+v info %+v", m3.Config, m3.Info)
	}
	sameParams(t, "round trip", m1.HostParams(), m3.HostParams())

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

// TestEarlyStoppingCountsEpochs: on uniform random symbols (nothing to
// learn, so the validation loss soon stops improving) the run stops after
// Patience epochs without a better validation loss and restores the
// parameters of the best epoch.
func TestEarlyStoppingCountsEpochs(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	random := func(n int) sliceWindows {
		var ws sliceWindows
		for range n {
			ws = append(ws, randSeq(rng, 16, 3))
		}
		return ws
	}
	train, val := random(64), random(16)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.Patience, tc.LogEvery, tc.LR = 16, 40, 1, 2, 0, 2e-2
	tr, err := NewTrainer(cpu.NewDefault(), Config{Variant: TF20, A: 3, D: 1}, train, val, tc)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	var snaps [][]float32
	tr.Log = func(e transformer.EpochStats) {
		vals = append(vals, e.ValLoss)
		snaps = append(snaps, tr.Model.HostParams())
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	best := 0
	for i, v := range vals {
		if v < vals[best] {
			best = i
		}
	}
	if !tr.Stopped || len(vals) != best+1+tc.Patience {
		t.Fatalf("stopped %v after %d epochs, best epoch %d (losses %v)", tr.Stopped, len(vals), best+1, vals)
	}
	sameParams(t, "restored best", tr.Model.HostParams(), snaps[best])
	if info := InfoOf(tr); !info.Stopped || info.BestVal != vals[best] || info.BestStep != 4*(best+1) {
		t.Fatalf("info %+v, val losses %v", info, vals)
	}
	t.Logf("stopped after epoch %d, best epoch %d", len(vals), best+1)
}

// TestResumeEqualsUninterrupted checkpoints a synth run after every step,
// resumes from several of them (also after a cancellation) and requires
// exactly the parameters and log of the uninterrupted run.
func TestResumeEqualsUninterrupted(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	train, val := order1(rng, 44, 20), order1(rng, 8, 20)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.LogEvery, tc.Patience, tc.LR = 8, 4, 3, 4, 1, 0.05
	cfg := Config{Variant: TF20, A: 3, D: 2, Embed: 6, Hidden: 10}
	ref, err := NewTrainer(cpu.NewDefault(), cfg, train, val, tc)
	if err != nil {
		t.Fatal(err)
	}
	var ckpts [][]byte
	snap := func() error {
		var b bytes.Buffer
		if err := ref.WriteCheckpoint(&b, nil); err != nil {
			return err
		}
		ckpts = append(ckpts, b.Bytes())
		return nil
	}
	ref.CheckpointEvery, ref.OnCheckpoint = 1, snap
	if _, err := ref.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := ref.Model.HostParams()
	compare := func(what string, tr *Trainer) {
		t.Helper()
		sameParams(t, what, tr.Model.HostParams(), want)
		if tr.Step != ref.Step || tr.Epoch != ref.Epoch || tr.Stopped != ref.Stopped || len(tr.History) != len(ref.History) {
			t.Fatalf("%s: step %d epoch %d stopped %v, %d entries; want %d %d %v %d", what, tr.Step, tr.Epoch, tr.Stopped,
				len(tr.History), ref.Step, ref.Epoch, ref.Stopped, len(ref.History))
		}
		for i, e := range tr.History {
			r := ref.History[i]
			if e.Step != r.Step || e.TrainLoss != r.TrainLoss || e.EpochEnd != r.EpochEnd ||
				!(e.ValLoss == r.ValLoss || math.IsNaN(e.ValLoss) && math.IsNaN(r.ValLoss)) {
				t.Fatalf("%s: log entry %d %+v, want %+v", what, i, e, r)
			}
		}
	}
	resume := func(b []byte) *Trainer {
		c, err := transformer.ReadCheckpoint(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if c.ModelFormat != FileFormat {
			t.Fatalf("checkpoint model format %q", c.ModelFormat)
		}
		if _, err := c.ResumeOn(cpu.NewDefault(), train, val); err == nil {
			t.Fatal("a synth checkpoint resumed as a transformer")
		}
		tr, err := Resume(cpu.NewDefault(), c, train, val)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	t.Logf("%d steps, %d epochs, stopped %v", ref.Step, ref.Epoch, ref.Stopped)
	for _, k := range []int{0, 1, 5, 6, 11, len(ckpts) - 1} {
		tr := resume(ckpts[k])
		if _, err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		compare(fmt.Sprintf("resumed at checkpoint %d", k), tr)
	}
	tr := resume(ckpts[2])
	ctx, cancel := context.WithCancel(context.Background())
	tr.OnStep = func(step int, _ float64) {
		if step == 9 {
			cancel()
		}
	}
	if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	var b bytes.Buffer
	if err := tr.WriteCheckpoint(&b, nil); err != nil {
		t.Fatal(err)
	}
	tr2 := resume(b.Bytes())
	if _, err := tr2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	compare("resumed twice", tr2)
}

// TestReadFormerFile reads a model file as written before synth trained on
// the engine (train info with eval_every, patience in evaluations): it
// loads, with its parameters and summary.
func TestReadFormerFile(t *testing.T) {
	cfg := Config{Variant: WithAllCounts, A: 3, D: 2, Context: 16}.withDefaults()
	params := InitParams(cfg, 4)
	var ts []safetensors.Tensor
	for _, tn := range cfg.tensors() {
		n := tn.rows * max(tn.cols, 1)
		shape := []int{tn.rows}
		if tn.cols > 0 {
			shape = append(shape, tn.cols)
		}
		ts = append(ts, safetensors.Tensor{Name: tn.name, DType: "F32", Shape: shape, Data: safetensors.Float32Bytes(params[tn.off : tn.off+n])})
	}
	meta := map[string]string{"format": FileFormat, "label": Label(cfg.Variant),
		"config": `{"variant":"allcounts","alphabet":3,"D":2,"context":16,"pos_period":64,"embed":0,"hidden":` + fmt.Sprint(cfg.Hidden) + `,"activation":"gelu","count_norm":"log1p"}`,
		"train":  `{"train":{"batch_size":64,"epochs":10,"lr":0.002,"min_lr":1e-05,"warmup_steps":100,"beta1":0.9,"beta2":0.999,"eps":1e-08,"weight_decay":0.01,"clip_norm":1,"eval_every":200,"patience":10,"seed":1},"steps":400,"best_step":200,"best_val":0.81,"early_stopped":false,"train_windows":100,"val_windows":10,"history":[{"step":200,"epoch":1.5,"train_loss":0.9,"val_loss":0.81,"lr":0.001,"elapsed_s":1.5}]}`}
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, meta, ts); err != nil {
		t.Fatal(err)
	}
	m, err := ReadOn(cpu.NewDefault(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if m.Config != cfg || m.Info.Steps != 400 || m.Info.BestVal != 0.81 || m.Info.Train.Patience != 10 || len(m.Info.History) != 1 {
		t.Fatalf("config %+v, info %+v", m.Config, m.Info)
	}
	sameParams(t, "former file", m.HostParams(), params)
}

// trainOnProcs1And3 trains cfg with GOMAXPROCS 1 and 3, checks that the
// parameters are bit-identical and returns the first model.
func trainOnProcs1And3(t *testing.T, what string, cfg Config, train, val transformer.Windows, tc transformer.TrainConfig) *Model {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ms [2]*Model
	for i, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		m, err := Train(context.Background(), cpu.NewDefault(), cfg, train, val, tc, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	sameParams(t, what+"GOMAXPROCS 1 vs 3", ms[0].HostParams(), ms[1].HostParams())
	return ms[0]
}
