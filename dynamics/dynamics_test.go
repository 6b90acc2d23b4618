package dynamics

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/markov"
	"github.com/vomc/vomc/predict"
)

// fixed is a predictor giving the same distribution at every position.
type fixed struct {
	name string
	p    []float64
}

func (f fixed) Name() string            { return f.name }
func (f fixed) AlphabetSize() int       { return len(f.p) }
func (f fixed) NewState() predict.State { return fixedState(f) }

type fixedState fixed

func (s fixedState) Predict(p []float64) { copy(p, s.p) }
func (s fixedState) Observe(byte)        {}

func windows(n, N, A int, seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 1))
	ws := make([][]byte, n)
	for i := range ws {
		ws[i] = make([]byte, N)
		for t := range ws[i] {
			ws[i][t] = byte(r.IntN(A))
		}
	}
	return ws
}

// TestMeasureKL: the divergence from a reference to a model that is that
// reference is 0; from another fixed distribution it is the closed-form
// KL; the excess over a reference is the closed-form difference of
// cross-entropies on the windows; the closest reference is the model
// itself.
func TestMeasureKL(t *testing.T) {
	A, N := 3, 16
	ws := windows(20, N, A, 3)
	u := fixed{"uniform", []float64{1. / 3, 1. / 3, 1. / 3}}
	q := fixed{"skewed", []float64{0.5, 0.3, 0.2}}
	ctw := fixed{"CTW-like", []float64{0.2, 0.2, 0.6}}
	refs := []Reference{{"uniform", u}, {"skewed", q}, {"CTW-like", ctw}}
	pts, err := Measure(context.Background(), []Snapshot{{Step: 5}, {Step: 50}}, func(s Snapshot) (Model, error) {
		if s.Step == 5 {
			return u, nil
		}
		return q, nil
	}, Options{Windows: ws, References: refs, Excess: "CTW-like", HeadWindows: -1})
	if err != nil {
		t.Fatal(err)
	}
	kl := func(p, q []float64) float64 {
		d := 0.0
		for a := range p {
			d += p[a] * math.Log(p[a]/q[a])
		}
		return d
	}
	for i, tc := range []struct {
		model   fixed
		closest string
	}{{u, "uniform"}, {q, "skewed"}} {
		p := pts[i]
		if p.Closest != tc.closest {
			t.Errorf("step %d: closest %s, want %s", p.Step, p.Closest, tc.closest)
		}
		for r, ref := range refs {
			want := kl(ref.P.(fixed).p, tc.model.p)
			if d := p.KL[r]; math.Abs(d.Window.Mean-want) > 1e-12 || math.Abs(d.Half.Mean-want) > 1e-12 || d.Window.CI > 1e-12 {
				t.Errorf("step %d: KL(%s ‖ %s) = %+v, want %g with no spread", p.Step, ref.Name, tc.model.name, d, want)
			}
		}
		// excess: mean over windows of (1/N) Σ_t [−ln q(x_t) + ln ctw(x_t)]
		sum := 0.0
		for _, x := range ws {
			for _, s := range x {
				sum += -math.Log(tc.model.p[s]) + math.Log(ctw.p[s])
			}
		}
		if want := sum / float64(len(ws)*N); math.Abs(p.Excess.Mean-want) > 1e-12 {
			t.Errorf("step %d: excess %g, want %g", p.Step, p.Excess.Mean, want)
		}
	}
	ph := Phases(pts)
	if len(ph) != 2 || ph[0].Closest != "uniform" || ph[1].From != 50 {
		t.Errorf("phases %+v", ph)
	}
}

// TestMeasureMarkov: a model that is Markov(1) trained on the window is
// closest to the Markov(1) reference, not to Markov(2) or the unigram.
func TestMeasureMarkov(t *testing.T) {
	A := 3
	ws := windows(30, 64, A, 5)
	m1, err := markov.New(A, 1, 0.5, markov.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := markov.New(A, 2, 0.5, markov.Options{})
	m0, _ := markov.New(A, 0, 0.5, markov.Options{})
	refs := []Reference{{"Markov(0)", m0}, {"Markov(1)", m1}, {"Markov(2)", m2}}
	pts, err := Measure(context.Background(), []Snapshot{{Step: 1}}, func(Snapshot) (Model, error) { return m1, nil }, Options{Windows: ws, References: refs, HeadWindows: -1})
	if err != nil {
		t.Fatal(err)
	}
	if pts[0].Closest != "Markov(1)" || pts[0].KL[1].Window.Mean != 0 {
		t.Fatalf("closest %s, KL to itself %g", pts[0].Closest, pts[0].KL[1].Window.Mean)
	}
}

// TestEmergences: a head's label is dated from the first snapshot after
// which it keeps its final label.
func TestEmergences(t *testing.T) {
	h := func(lab string, ok bool) []Head {
		return []Head{{Layer: 1, Head: 1, Label: lab, Labelled: ok}, {Layer: 1, Head: 2, Label: "x", Labelled: false}}
	}
	pts := []Point{{Step: 1, Heads: h("d=1", true)}, {Step: 10, Heads: h("u", false)}, {Step: 100, Heads: h("d=1", true)}, {Step: 1000, Heads: h("d=1", true)}}
	em := Emergences(pts)
	if len(em) != 1 || em[0].Step != 100 || em[0].Label != "d=1" {
		t.Fatalf("emergences %+v", em)
	}
}

// TestSnapshotsAndErrors: snapshot files are listed in step order; no
// snapshots, too few windows, a missing excess reference are errors.
func TestSnapshotsAndErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Snapshots(dir); err == nil {
		t.Fatal("no snapshots: no error")
	}
	os.MkdirAll(filepath.Join(dir, "snapshots"), 0o755)
	for _, s := range []string{"step-000000100.safetensors", "step-000000002.safetensors", "junk.txt", "step-12.safetensors"} {
		os.WriteFile(filepath.Join(dir, "snapshots", s), nil, 0o644)
	}
	ss, err := Snapshots(dir)
	if err != nil || len(ss) != 2 || ss[0].Step != 2 || ss[1].Step != 100 {
		t.Fatalf("snapshots %+v, %v", ss, err)
	}
	u := fixed{"u", []float64{0.5, 0.5}}
	load := func(Snapshot) (Model, error) { return u, nil }
	if _, err := Measure(context.Background(), ss, load, Options{Windows: windows(1, 8, 2, 1), References: []Reference{{"u", u}}}); err == nil {
		t.Error("one window: no error")
	}
	if _, err := Measure(context.Background(), ss, load, Options{Windows: windows(4, 8, 2, 1), References: []Reference{{"u", u}}, Excess: "CTW"}); err == nil {
		t.Error("missing excess reference: no error")
	}
	if _, err := Measure(context.Background(), ss, load, Options{Windows: windows(4, 8, 3, 1), References: []Reference{{"u", u}}}); err == nil {
		t.Error("symbols outside the alphabet: no error")
	}
}

// TestTies: a reference equal to the closest one is tied with it (the
// paired difference is 0 in every window); a reference that is worse in
// every window is not, even where the unpaired intervals of the two
// divergences overlap widely; phases merge snapshots with the same set of
// closest references whichever of them is nominally first.
func TestTies(t *testing.T) {
	A := 3
	ws := windows(40, 64, A, 7)
	m1, _ := markov.New(A, 1, 0.5, markov.Options{})
	m1b, _ := markov.New(A, 1, 0.5, markov.Options{})
	m1c, _ := markov.New(A, 1, 0.7, markov.Options{}) // near Markov(1), a different prior
	m0, _ := markov.New(A, 0, 0.5, markov.Options{})
	refs := []Reference{{"Markov(0)", m0}, {"Markov(1)", m1}, {"Markov(1) again", m1b}, {"Markov(1) α=0.7", m1c}}
	pts, err := Measure(context.Background(), []Snapshot{{Step: 1}}, func(Snapshot) (Model, error) { return m1, nil }, Options{Windows: ws, References: refs, HeadWindows: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := pts[0]
	if p.Closest != "Markov(1)" || len(p.Tied) != 1 || p.Tied[0] != "Markov(1) again" {
		t.Fatalf("closest %s, tied %v; want Markov(1) tied with its copy only", p.Closest, p.Tied)
	}
	// Markov(1) α=0.7 has positive KL in every window: not tied, though
	// its mean is small next to the spread of the divergences.
	if d := p.KL[3].Window; d.Mean <= 0 {
		t.Fatalf("KL to the α=0.7 chain %+v", d)
	}
	// Paired, not unpaired: divergences spread over [0, 1) across windows;
	// "worse" is 0.01 above "best" in every window (unpaired intervals
	// overlap, paired difference 0.01 ± 0), "noisy" ±0.01 around it.
	r := rand.New(rand.NewPCG(9, 9))
	kl := make([][]float64, 3)
	for w := range 50 {
		v := r.Float64()
		kl[0] = append(kl[0], v)
		kl[1] = append(kl[1], v+0.01)
		kl[2] = append(kl[2], v+0.01*float64(1-2*(w%2))+0.0001)
	}
	if s0, s1 := stat(kl[0]), stat(kl[1]); s1.Mean-s1.CI > s0.Mean+s0.CI {
		t.Fatalf("unpaired intervals do not overlap: %+v %+v", s0, s1)
	}
	names := []Reference{{Name: "best"}, {Name: "worse"}, {Name: "noisy"}}
	if got := tied(kl, 0, names); len(got) != 1 || got[0] != "noisy" {
		t.Errorf("tied with best: %v, want [noisy]", got)
	}

	ph := Phases([]Point{
		{Step: 1, Closest: "A"},
		{Step: 2, Closest: "A", Tied: []string{"B"}},
		{Step: 3, Closest: "B", Tied: []string{"A"}},
		{Step: 4, Closest: "B"},
	})
	if len(ph) != 3 || ph[1].From != 2 || ph[1].To != 3 || ph[1].Name() != "B ≈ A" || ph[2].Name() != "B" {
		t.Fatalf("phases %+v", ph)
	}
	res := &Result{Run: "r", Points: []Point{{Step: 2, Closest: "A", Tied: []string{"B"}}}, Phases: Phases([]Point{{Step: 2, Closest: "A", Tied: []string{"B"}}})}
	if txt := res.PhasesText(); !strings.Contains(txt, "A ≈ B") {
		t.Errorf("phases text lacks the tie:\n%s", txt)
	}
}

// TestTiesWinnerFree: the tied set does not depend on which of two
// indistinguishable references has the lower mean. A and B differ by ±0.03
// window by window (mean ≈ 0); C is 0.005 above A in every window (shown
// worse than A) but within the noise of B. Whether A or B is nominally
// closest, the set is {A, B}: C is out (comparing with the closest alone
// would let C in when B is closest).
func TestTiesWinnerFree(t *testing.T) {
	refs := []Reference{{Name: "A"}, {Name: "B"}, {Name: "C"}}
	for _, shift := range []float64{+0.0001, -0.0001} { // B just above, then just below A
		kl := make([][]float64, 3)
		r := rand.New(rand.NewPCG(4, 4))
		for w := range 60 {
			v := r.Float64()
			e := 0.03 * float64(1-2*(w%2))
			kl[0] = append(kl[0], v)
			kl[1] = append(kl[1], v+e+shift)
			kl[2] = append(kl[2], v+0.005)
		}
		best := 0
		if shift < 0 {
			best = 1
		}
		got := tied(kl, best, refs)
		if want := refs[1-best].Name; len(got) != 1 || got[0] != want {
			t.Errorf("B − A mean %+g: tied with %s: %v, want [%s]", shift, refs[best].Name, got, want)
		}
	}
}

// TestMeasureNotFinite: a snapshot whose probabilities are NaN is an
// error naming its step, not a NaN in the results.
func TestMeasureNotFinite(t *testing.T) {
	nan := fixed{"nan", []float64{math.NaN(), math.NaN(), math.NaN()}}
	u := fixed{"uniform", []float64{1. / 3, 1. / 3, 1. / 3}}
	_, err := Measure(context.Background(), []Snapshot{{Step: 7, Path: "s7"}}, func(Snapshot) (Model, error) { return nan, nil },
		Options{Windows: windows(4, 8, 3, 1), References: []Reference{{"uniform", u}}, HeadWindows: -1})
	if err == nil || !strings.Contains(err.Error(), "step 7") {
		t.Fatalf("NaN model: %v", err)
	}
}

// TestMeasureCancel: cancelling the context stops Measure with its error,
// before the next snapshot is loaded.
func TestMeasureCancel(t *testing.T) {
	u := fixed{"uniform", []float64{1. / 3, 1. / 3, 1. / 3}}
	ctx, cancel := context.WithCancel(context.Background())
	loaded := 0
	_, err := Measure(ctx, []Snapshot{{Step: 1}, {Step: 2}, {Step: 3}}, func(Snapshot) (Model, error) {
		loaded++
		cancel() // while the first snapshot is measured
		return u, nil
	}, Options{Windows: windows(8, 16, 3, 1), References: []Reference{{"uniform", u}}, HeadWindows: -1})
	if !errors.Is(err, context.Canceled) || loaded != 1 {
		t.Fatalf("err %v after %d snapshots loaded, want context.Canceled after 1", err, loaded)
	}
}
