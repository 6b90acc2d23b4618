package transformer

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// predictAll returns the predictions of p (PredictBatch) for xs.
func predictAll(t *testing.T, p interface {
	PredictBatch([][]byte, [][]float64) error
}, xs [][]byte, A int) [][]float64 {
	t.Helper()
	outs := make([][]float64, len(xs))
	for j, x := range xs {
		outs[j] = make([]float64, len(x)*A)
	}
	if err := p.PredictBatch(xs, outs); err != nil {
		t.Fatal(err)
	}
	return outs
}

// interveneWindows are windows of every kind a pass sees: shorter than
// the context, of N+1 symbols, and longer (sliding passes).
func interveneWindows(seed uint64, N, A int) [][]byte {
	var xs [][]byte
	for i, n := range []int{N + 1, 3, N + 1, 2*N + 3, 1, N + 1} {
		xs = append(xs, randomInputs(seed+uint64(i), n, A))
	}
	return xs
}

// unusedHead returns the parameters of m with head h's columns of its
// layer's output projection zeroed: the head's output is provably unused.
func unusedHead(m *Model, h Head) []float32 {
	c := m.Config
	flat := slices.Clone(m.HostParams())
	C, hs := c.Embed, c.Embed/c.Heads[h.Layer]
	for _, ti := range c.Layout() {
		if ti.Name != "h."+itoa(h.Layer)+".attn.proj.weight" {
			continue
		}
		for o := range C {
			clear(flat[ti.Offset+o*C+h.Head*hs:][:hs])
		}
	}
	return flat
}

// TestAblateUnusedHeadExact: ablating a head whose output projection
// columns are zero changes no prediction, bit for bit, in every mode, and
// zero-ablating it in the original model gives the same bits as zeroing
// those columns.
func TestAblateUnusedHeadExact(t *testing.T) {
	cfgs := tinyConfigs()
	big := DefaultConfig(3, 4, 32, 12, 5)
	big.Heads = []int{4, 2, 8}
	cfgs = append(cfgs, big)
	for ci, cfg := range cfgs {
		m := randomModel(t, cfg, uint64(ci+1), 0.3)
		xs := interveneWindows(uint64(10*ci), cfg.Context, cfg.Alphabet)
		refs := [][]byte{randomInputs(99, cfg.Context, cfg.Alphabet), randomInputs(98, cfg.Context+4, cfg.Alphabet)}
		for _, h := range cfg.AllHeads() {
			cut, err := FromParamsOn(cpu.NewDefault(), cfg, unusedHead(m, h))
			if err != nil {
				t.Fatal(err)
			}
			want := predictAll(t, cut, xs, cfg.Alphabet)
			for _, mode := range []Ablation{AblateZero, AblateMean, AblateResample} {
				x, err := cut.Intervene(Intervention{Ablate: []Head{h}, Mode: mode, References: refs, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				if got := predictAll(t, x, xs, cfg.Alphabet); !slices.EqualFunc(got, want, slices.Equal) {
					t.Errorf("config %d: ablating unused head %s (%v) changed predictions", ci, h, mode)
				}
			}
			x, err := m.Intervene(Intervention{Ablate: []Head{h}, Mode: AblateZero})
			if err != nil {
				t.Fatal(err)
			}
			if got := predictAll(t, x, xs, cfg.Alphabet); !slices.EqualFunc(got, want, slices.Equal) {
				t.Errorf("config %d: zero-ablating %s differs from zeroing its projection columns", ci, h)
			}
			intact := predictAll(t, m, xs, cfg.Alphabet)
			if slices.EqualFunc(intact, want, slices.Equal) {
				t.Errorf("config %d: head %s is unused in the random model itself: the test cannot fail", ci, h)
			}
			cut.Free()
		}
		m.Free()
	}
}

// refPattern is the test's own reading of the exact patterns, written
// from their definitions: the attention weights of query t over keys
// 0..t of window x.
func refPattern(p Pattern, t int, x []byte) []float64 {
	w := make([]float64, t+1)
	switch p.Kind {
	case PatternOffset:
		w[max(t-p.N, 0)] = 1
	case PatternSuffix:
		var match []int
		for j := 0; j < t; j++ {
			ok := j >= p.N && t-p.N+1 >= 0
			for i := 0; ok && i < p.N; i++ {
				ok = x[j-1-i] == x[t-i]
			}
			if ok {
				match = append(match, j)
			}
		}
		if len(match) == 0 {
			for j := range w {
				match = append(match, j)
			}
		}
		for _, j := range match {
			w[j] = 1 / float64(len(match))
		}
	}
	return w
}

// TestInterventionMatchesReference: the engine's patterned and
// zero-ablated forward passes match the float64 reference with those
// weights (zero ablation: all weights 0) to 1e-5.
func TestInterventionMatchesReference(t *testing.T) {
	cfgs := tinyConfigs()[:4]
	big := DefaultConfig(3, 4, 32, 24, 3)
	big.Heads = []int{4, 2, 8}
	cfgs = append(cfgs, big)
	for ci, cfg := range cfgs {
		m := randomModel(t, cfg, uint64(ci+1), 0.3)
		heads := cfg.AllHeads()
		cases := []Intervention{
			{Patterns: []HeadPattern{{heads[0], Pattern{PatternOffset, 1}}}},
			{Patterns: []HeadPattern{{heads[1], Pattern{PatternOffset, 3}}, {heads[len(heads)-1], Pattern{PatternSuffix, 1}}}},
			{Patterns: []HeadPattern{{heads[len(heads)-1], Pattern{PatternSuffix, 2}}}, Ablate: []Head{heads[0]}, Mode: AblateZero},
		}
		B, T := 3, cfg.Context
		inputs := randomInputs(uint64(ci), B*T, cfg.Alphabet)
		for _, iv := range cases {
			x, err := m.Intervene(iv)
			if err != nil {
				t.Fatal(err)
			}
			in, err := m.AllocInference(B * T)
			if err != nil {
				t.Fatal(err)
			}
			m.forwardInfer(in, inputs, B, T, x)
			got := in.Probs()
			ref := newRef(cfg, toF64(liveParams(m)))
			ref.weights = func(l, h, q int, w []byte) []float64 {
				for _, p := range iv.Patterns {
					if p.Head == (Head{l, h}) {
						return refPattern(p.Pattern, q, w)
					}
				}
				if slices.Contains(iv.Ablate, Head{l, h}) {
					return make([]float64, q+1)
				}
				return nil
			}
			logits, _ := ref.forward(inputs, B, T)
			A, worst := cfg.Alphabet, 0.0
			for b := range B {
				for q := range T {
					want := softmax64(logits[b][q])
					for a := range A {
						worst = math.Max(worst, math.Abs(float64(got[(b*T+q)*A+a])-want[a]))
					}
				}
			}
			if worst > 1e-5 {
				t.Errorf("config %d, %s: max |p − reference| = %.3g > 1e-5", ci, iv, worst)
			}
			in.Free()
		}
		m.Free()
	}
}

func softmax64(z []float64) []float64 {
	mx := slices.Max(z)
	p := make([]float64, len(z))
	s := 0.0
	for i, v := range z {
		p[i] = math.Exp(v - mx)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// TestAblateWithOwnReference: with one reference window, mean and
// resample ablation put back the head's own outputs on that window (its
// predictions are the intact model's, bit for bit) and change another
// window's.
func TestAblateWithOwnReference(t *testing.T) {
	cfg := tinyConfigs()[0]
	m := randomModel(t, cfg, 4, 0.3)
	defer m.Free()
	N, A := cfg.Context, cfg.Alphabet
	own, other := randomInputs(1, N+1, A), randomInputs(2, N+1, A)
	for _, mode := range []Ablation{AblateMean, AblateResample} {
		x, err := m.Intervene(Intervention{Ablate: []Head{{0, 0}, {1, 0}}, Mode: mode, References: [][]byte{own[:N]}})
		if err != nil {
			t.Fatal(err)
		}
		want := predictAll(t, m, [][]byte{own, other}, A)
		got := predictAll(t, x, [][]byte{own, other}, A)
		if !slices.Equal(got[0], want[0]) {
			t.Errorf("%v ablation with the window as its own reference changed its predictions", mode)
		}
		if slices.Equal(got[1], want[1]) {
			t.Errorf("%v ablation changed nothing on another window", mode)
		}
	}
}

// TestIntervenedInterfacesAgree: an intervened model predicts the same
// bits through PredictBatch, PredictSequence and a State.
func TestIntervenedInterfacesAgree(t *testing.T) {
	cfg := tinyConfigs()[0]
	m := randomModel(t, cfg, 5, 0.3)
	defer m.Free()
	N, A := cfg.Context, cfg.Alphabet
	refs := [][]byte{randomInputs(7, N, A), randomInputs(8, N, A), randomInputs(9, N, A)}
	xs := interveneWindows(20, N, A)
	for _, iv := range []Intervention{
		{Ablate: []Head{{0, 1}}, Mode: AblateZero},
		{Ablate: []Head{{0, 0}, {1, 0}}, Mode: AblateMean, References: refs},
		{Ablate: []Head{{0, 1}}, Mode: AblateResample, References: refs, Seed: 11},
		{Patterns: []HeadPattern{{Head{0, 0}, Pattern{PatternOffset, 1}}, {Head{1, 0}, Pattern{PatternSuffix, 2}}}},
	} {
		x, err := m.Intervene(iv)
		if err != nil {
			t.Fatal(err)
		}
		batch := predictAll(t, x, xs, A)
		for j, w := range xs {
			seq := make([]float64, len(w)*A)
			x.PredictSequence(w, seq)
			st := x.NewState()
			one := make([]float64, len(w)*A)
			for i, s := range w {
				st.Predict(one[i*A : (i+1)*A])
				st.Observe(s)
			}
			if !slices.Equal(seq, batch[j]) || !slices.Equal(one, batch[j]) {
				t.Errorf("%s: window %d (%d symbols): PredictBatch, PredictSequence and State disagree", iv, j, len(w))
			}
		}
	}
}

// TestInterventionCheck: every malformed intervention is refused with an
// error naming the problem.
func TestInterventionCheck(t *testing.T) {
	cfg := tinyConfigs()[0] // heads [2, 1], N = 7, A = 3
	ref := [][]byte{randomInputs(1, cfg.Context, cfg.Alphabet)}
	for _, c := range []struct {
		iv   Intervention
		want string
	}{
		{Intervention{}, "no head"},
		{Intervention{Ablate: []Head{{2, 0}}, Mode: AblateZero}, "2 layer(s)"},
		{Intervention{Ablate: []Head{{1, 1}}, Mode: AblateZero}, "layer 2 has 1 head(s)"},
		{Intervention{Ablate: []Head{{0, 0}, {0, 0}}, Mode: AblateZero}, "twice"},
		{Intervention{Ablate: []Head{{0, 0}}, Patterns: []HeadPattern{{Head{0, 0}, Pattern{PatternOffset, 1}}}, Mode: AblateZero}, "twice"},
		{Intervention{Ablate: []Head{{0, 0}}}, "ablation mode"},
		{Intervention{Ablate: []Head{{0, 0}}, Mode: AblateMean}, "needs reference windows"},
		{Intervention{Ablate: []Head{{0, 0}}, Mode: AblateResample, References: [][]byte{{0, 1}}}, "has 2 symbols"},
		{Intervention{Ablate: []Head{{0, 0}}, Mode: AblateMean, References: [][]byte{{0, 1, 2, 3, 0, 1, 9}}}, "outside the alphabet"},
		{Intervention{Patterns: []HeadPattern{{Head{0, 0}, Pattern{PatternOffset, 7}}}}, "outside 0..6"},
		{Intervention{Patterns: []HeadPattern{{Head{0, 0}, Pattern{PatternSuffix, 0}}}}, "outside 1..6"},
		{Intervention{Patterns: []HeadPattern{{Head{0, 0}, Pattern{}}}}, "unknown pattern"},
	} {
		err := c.iv.Check(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", c.iv, err, c.want)
		}
	}
	ok := Intervention{Ablate: []Head{{0, 1}}, Mode: AblateMean, References: ref}
	if err := ok.Check(cfg); err != nil {
		t.Errorf("%s: %v", ok, err)
	}
}

func TestParseHeadAndPattern(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Head
		ok   bool
	}{
		{"L1H2", Head{0, 1}, true}, {"l12h3", Head{11, 2}, true}, {"L0H1", Head{}, false},
		{"H1L1", Head{}, false}, {"L1", Head{}, false}, {"L1H", Head{}, false}, {"L1Hx", Head{}, false},
	} {
		h, err := ParseHead(c.in)
		if (err == nil) != c.ok || (c.ok && h != c.want) {
			t.Errorf("ParseHead(%q) = %v, %v", c.in, h, err)
		}
		if c.ok && !strings.EqualFold(h.String(), c.in) {
			t.Errorf("ParseHead(%q).String() = %q", c.in, h)
		}
	}
	for _, c := range []struct {
		in   string
		want Pattern
		ok   bool
	}{
		{"offset:1", Pattern{PatternOffset, 1}, true}, {"offset:0", Pattern{PatternOffset, 0}, true},
		{"suffix:3", Pattern{PatternSuffix, 3}, true}, {"suffix:0", Pattern{}, false},
		{"offset", Pattern{}, false}, {"offset:-1", Pattern{}, false}, {"prefix:2", Pattern{}, false},
	} {
		p, err := ParsePattern(c.in)
		if (err == nil) != c.ok || (c.ok && p != c.want) {
			t.Errorf("ParsePattern(%q) = %v, %v", c.in, p, err)
		}
		if c.ok && p.String() != c.in {
			t.Errorf("ParsePattern(%q).String() = %q", c.in, p)
		}
	}
	for _, s := range AblationModes {
		if a, err := ParseAblation(s); err != nil || a.String() != s {
			t.Errorf("ParseAblation(%q) = %v, %v", s, a, err)
		}
	}
	if _, err := ParseAblation("maen"); err == nil {
		t.Error(`ParseAblation("maen") succeeded`)
	}
}

func TestParseListsAndDidYouMean(t *testing.T) {
	hs, err := ParseHeads("L1H2+l2h1")
	if err != nil || !slices.Equal(hs, []Head{{0, 1}, {1, 0}}) {
		t.Errorf("ParseHeads = %v, %v", hs, err)
	}
	ps, err := ParsePatterns("L1H1=offset:1+L2H3=suffix:2")
	if err != nil || len(ps) != 2 || ps[1] != (HeadPattern{Head{1, 2}, Pattern{PatternSuffix, 2}}) {
		t.Errorf("ParsePatterns = %v, %v", ps, err)
	}
	cfg := Config{Heads: []int{4, 2}}
	for _, c := range []struct {
		err  error
		want string
	}{
		{cfg.CheckHead(Head{2, 0}), "did you mean L2H1?"},
		{cfg.CheckHead(Head{0, 4}), "did you mean L1H4?"},
		{cfg.CheckHead(Head{1, 3}), "did you mean L2H2?"},
		{func() error { _, err := ParsePattern("ofset:1"); return err }(), `did you mean "offset"?`},
		{func() error { _, err := ParseAblation("resampel"); return err }(), `did you mean "resample"?`},
		{func() error { _, err := ParsePatterns("L1H1:offset:1"); return err }(), "HEAD=offset:d"},
		{func() error { _, err := ParseHeads("L1H2+X"); return err }(), `"X"`},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
}

// TestHeadOutputsShared: interventions reading shared head outputs
// (Intervention.Outputs) predict the same bits as those running their own
// reference pass; outputs of another model, or without the head, are
// refused.
func TestHeadOutputsShared(t *testing.T) {
	cfg := tinyConfigs()[0]
	m := randomModel(t, cfg, 6, 0.3)
	defer m.Free()
	N, A := cfg.Context, cfg.Alphabet
	refs := [][]byte{randomInputs(7, N, A), randomInputs(8, N+2, A), randomInputs(9, N, A)}
	ho, err := m.HeadOutputs(refs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ho.Windows() != 3 {
		t.Errorf("%d windows", ho.Windows())
	}
	xs := interveneWindows(30, N, A)
	for _, mode := range []Ablation{AblateMean, AblateResample} {
		own, err := m.Intervene(Intervention{Ablate: []Head{{0, 1}, {1, 0}}, Mode: mode, References: refs, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		shared, err := m.Intervene(Intervention{Ablate: []Head{{0, 1}, {1, 0}}, Mode: mode, Outputs: ho, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(predictAll(t, own, xs, A), predictAll(t, shared, xs, A), slices.Equal) {
			t.Errorf("%v: shared head outputs predict otherwise", mode)
		}
	}
	other := randomModel(t, cfg, 7, 0.3)
	defer other.Free()
	if _, err := other.Intervene(Intervention{Ablate: []Head{{0, 0}}, Mode: AblateMean, Outputs: ho}); err == nil {
		t.Error("another model's head outputs were accepted")
	}
	part, err := m.HeadOutputs(refs, []Head{{0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Intervene(Intervention{Ablate: []Head{{1, 0}}, Mode: AblateResample, Outputs: part}); err == nil || !strings.Contains(err.Error(), "lack L2H1") {
		t.Errorf("head outputs without the head: %v", err)
	}
	if _, err := m.HeadOutputs([][]byte{{0, 1}}, nil); err == nil {
		t.Error("a short reference window was accepted")
	}
}
