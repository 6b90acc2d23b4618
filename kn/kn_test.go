package kn

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/internal/testseq"
	"github.com/vomc/vomc/predict"
)

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name     string
		A, order int
		delta    float64
	}{
		{"A=0", 0, 2, 0.5},
		{"A=257", 257, 2, 0.5},
		{"order<0", 3, -1, 0.5},
		{"order too large", 3, MaxOrder + 1, 0.5},
		{"delta=0", 3, 2, 0},
		{"delta=1", 3, 2, 1},
		{"delta<0", 3, 2, -0.2},
		{"delta>1", 3, 2, 1.5},
		{"delta=NaN", 3, 2, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.A, tc.order, tc.delta, Options{}); err == nil {
				t.Error("New: want error")
			}
			if _, err := MeanLoss([][]byte{{0, 1}}, tc.A, tc.order, tc.delta, Options{}); err == nil {
				t.Error("MeanLoss: want error")
			}
		})
	}
}

func TestTuneErrors(t *testing.T) {
	tests := []struct {
		name     string
		windows  [][]byte
		A, order int
	}{
		{"no windows", nil, 3, 2},
		{"empty windows", [][]byte{{}, {}}, 3, 2},
		{"symbol out of range", [][]byte{{0, 1}, {2, 3}}, 3, 2},
		{"bad A", [][]byte{{0, 1}}, 0, 2},
		{"bad order", [][]byte{{0, 1}}, 3, -2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := Tune(tc.windows, tc.A, tc.order, Options{}); err == nil {
				t.Error("want error")
			}
		})
	}
}

func TestName(t *testing.T) {
	m, _ := New(3, 3, 0.75, Options{})
	if got := m.Name(); got != "KN(D=3,δ=0.75)" {
		t.Errorf("Name() = %q", got)
	}
	m, _ = New(256, 4, 0.5, Options{Continuation: true})
	if got := m.Name(); got != "KN(D=4,δ=0.5,cont)" {
		t.Errorf("Name() = %q", got)
	}
	if m.AlphabetSize() != 256 || m.Order() != 4 || m.Delta() != 0.5 || !m.Options().Continuation {
		t.Error("accessors")
	}
}

// TestHand checks distributions computed by hand from the formula of
// the paper's appendix app:kn.
func TestHand(t *testing.T) {
	tests := []struct {
		name  string
		A, D  int
		delta float64
		cont  bool
		x     []byte      // the history
		want  [][]float64 // want[i] = P(· | x[:i])
	}{
		{
			// A=2, D=1, δ=1/2, x = 0 1 0:
			// x[:0]: uniform.
			// x[:1]=0: context 0 unseen → order 0: c=(1,0), T=1, N=1:
			//   p(0) = ½/1 + ½·1·½ = ¾, p(1) = ¼.
			// x[:2]=01: context 1 unseen → order 0: c=(1,1), T=2, N=2:
			//   p(a) = ½/2 + ½·2/2·½ = ½.
			// x[:3]=010: context 0 seen once, followed by 1: T=1, N=1;
			//   order 0: c=(2,1), T=3, N=2: p0(0) = 1.5/3 + ½·⅔·½ = ⅔,
			//   p0(1) = ⅓; p(0) = ½·⅔ = ⅓, p(1) = ½ + ½·⅓ = ⅔.
			name: "raw D=1", A: 2, D: 1, delta: 0.5, x: []byte{0, 1, 0},
			want: [][]float64{{0.5, 0.5}, {0.75, 0.25}, {0.5, 0.5}, {1.0 / 3, 2.0 / 3}},
		},
		{
			// x = 0 1 1 0, next symbol: context 0 followed once by 1 (T=1,
			// N=1). Raw order 0: c=(2,2), T=4, N=2: p0 = (½, ½);
			// p(0) = ½·½ = ¼, p(1) = ½ + ¼ = ¾.
			name: "raw D=1 len4", A: 2, D: 1, delta: 0.5, x: []byte{0, 1, 1, 0},
			want: [][]float64{4: {0.25, 0.75}},
		},
		{
			// Continuation: order 0 uses N1+(•a): bigrams 01, 11, 10 give
			// N1+(•0) = 1, N1+(•1) = 2, T=3, N=2: p0(0) = ½/3 + ½·⅔·½ = ⅓,
			// p0(1) = ⅔; top order raw as above: p(0) = ½·⅓ = 1/6,
			// p(1) = ½ + ½·⅔ = 5/6.
			name: "cont D=1 len4", A: 2, D: 1, delta: 0.5, cont: true, x: []byte{0, 1, 1, 0},
			want: [][]float64{4: {1.0 / 6, 5.0 / 6}},
		},
		{
			// Continuation with history 0: N1+(•0) = 0 (x_1 has no left
			// neighbour) so order 0 is empty and falls back to uniform;
			// context 0 has not been followed yet: uniform.
			name: "cont D=1 len1", A: 2, D: 1, delta: 0.5, cont: true, x: []byte{0},
			want: [][]float64{{0.5, 0.5}, {0.5, 0.5}},
		},
		{
			// D=0, A=3, δ=0.2 after 0 0 2: c=(2,0,1), T=3, N=2:
			// p(0) = 1.8/3 + 0.2·2/3·⅓, p(1) = 0.2·2/3·⅓, p(2) = 0.8/3 + 0.2·2/3·⅓.
			name: "D=0", A: 3, D: 0, delta: 0.2, x: []byte{0, 0, 2},
			want: [][]float64{3: {1.8/3 + 0.4/9, 0.4 / 9, 0.8/3 + 0.4/9}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.A, tc.D, tc.delta, Options{Continuation: tc.cont})
			if err != nil {
				t.Fatal(err)
			}
			st := m.NewState()
			got := make([]float64, tc.A)
			for i, w := range tc.want {
				if w != nil {
					st.Predict(got)
					for a := range w {
						if !testseq.AlmostEqual(got[a], w[a], 1e-15) {
							t.Fatalf("position %d: P(%d) = %.17g, want %.17g", i, a, got[a], w[a])
						}
					}
				}
				if i < len(tc.x) {
					st.Observe(tc.x[i])
				}
			}
		})
	}
}

// TestMeanLossHand checks L(δ) against a value computed by hand and against
// a direct brute-force recomputation.
func TestMeanLossHand(t *testing.T) {
	// A=2, D=1, δ=½, window 0 1 0 0 (see TestHand): the probabilities of the
	// symbols that occurred are ½, ¼, ½, ⅓, so the mean loss is
	// (ln 2 + ln 4 + ln 2 + ln 3)/4 = (4 ln 2 + ln 3)/4 nats. A second
	// window 1 1 has probabilities ½ and ¾ (order 0: c(1)=1, T=1, N=1:
	// ½ + ½·½); together: (4 ln 2 + ln 3 + ln 2 + ln(4/3))/6.
	w1 := []byte{0, 1, 0, 0}
	w2 := []byte{1, 1}
	want1 := (4*math.Ln2 + math.Log(3)) / 4
	got1, err := MeanLoss([][]byte{w1}, 2, 1, 0.5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !testseq.AlmostEqual(got1, want1, 1e-15) {
		t.Errorf("MeanLoss(w1) = %.17g, want %.17g", got1, want1)
	}
	want12 := (4*math.Ln2 + math.Log(3) + math.Ln2 + math.Log(4.0/3)) / 6
	got12, _ := MeanLoss([][]byte{w1, w2}, 2, 1, 0.5, Options{})
	if !testseq.AlmostEqual(got12, want12, 1e-15) {
		t.Errorf("MeanLoss(w1,w2) = %.17g, want %.17g", got12, want12)
	}
	if b := bruteMeanLoss([][]byte{w1, w2}, 2, 1, 0.5, false); !testseq.AlmostEqual(b, want12, 1e-15) {
		t.Errorf("brute force = %.17g, want %.17g", b, want12)
	}
}

// bruteKN computes the Kneser–Ney distribution after history x directly from
// the definition by rescanning x at every order.
func bruteKN(x []byte, A, D int, delta float64, cont bool) []float64 {
	n := len(x)
	p := make([]float64, A)
	for a := range p {
		p[a] = 1 / float64(A)
	}
	for k := 0; k <= min(D, n); k++ {
		ctx := x[n-k:]
		cnt := make([]float64, A)
		if cont && k < D {
			seen := map[[2]byte]bool{}
			for j := 1; j+k < n; j++ {
				if bytes.Equal(x[j:j+k], ctx) {
					seen[[2]byte{x[j-1], x[j+k]}] = true
				}
			}
			for wa := range seen {
				cnt[wa[1]]++
			}
		} else {
			for j := 0; j+k < n; j++ {
				if bytes.Equal(x[j:j+k], ctx) {
					cnt[x[j+k]]++
				}
			}
		}
		T, N := 0.0, 0.0
		for _, c := range cnt {
			T += c
			if c > 0 {
				N++
			}
		}
		if T == 0 {
			continue
		}
		for a := range p {
			p[a] = math.Max(cnt[a]-delta, 0)/T + delta*N/T*p[a]
		}
	}
	return p
}

func bruteMeanLoss(windows [][]byte, A, D int, delta float64, cont bool) float64 {
	sum, n := 0.0, 0
	for _, w := range windows {
		for i := range w {
			sum -= math.Log(bruteKN(w[:i], A, D, delta, cont)[w[i]])
			n++
		}
	}
	return sum / float64(n)
}

func randomSeq(r *rand.Rand, alphabet []byte, n int) []byte {
	x := make([]byte, n)
	for i := range x {
		x[i] = alphabet[r.IntN(len(alphabet))]
	}
	return x
}

// TestBruteForce compares Predict and the log-loss path with the definition
// at every position of random sequences.
func TestBruteForce(t *testing.T) {
	tests := []struct {
		A, D     int
		delta    float64
		alphabet []byte
		n        int
	}{
		{3, 0, 0.3, []byte{0, 1, 2}, 60},
		{3, 2, 0.5, []byte{0, 1, 2}, 200},
		{3, 5, 0.75, []byte{0, 1, 2}, 300},
		{2, 3, 0.1, []byte{0, 1}, 200},
		{4, 3, 0.9, []byte{0, 1, 2}, 200},
		{256, 2, 0.6, []byte{0, 'a', 'b', 255}, 300},
		{256, 4, 0.4, []byte{'a', 'b', 'c'}, 300},
		{1, 2, 0.5, []byte{0}, 30},
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range tests {
		for _, cont := range []bool{false, true} {
			t.Run(fmt.Sprintf("A=%d/D=%d/cont=%v", tc.A, tc.D, cont), func(t *testing.T) {
				m, err := New(tc.A, tc.D, tc.delta, Options{Continuation: cont})
				if err != nil {
					t.Fatal(err)
				}
				x := randomSeq(r, tc.alphabet, tc.n)
				st := m.NewState()
				got := make([]float64, tc.A)
				lossSum := 0.0
				for i := 0; i <= len(x); i++ {
					st.Predict(got)
					want := bruteKN(x[:i], tc.A, tc.D, tc.delta, cont)
					for a := range want {
						if !testseq.AlmostEqual(got[a], want[a], 1e-13) {
							t.Fatalf("position %d: P(%d) = %v, want %v", i, a, got[a], want[a])
						}
					}
					if i < len(x) {
						lossSum -= math.Log(want[x[i]])
						st.Observe(x[i])
					}
				}
				ml, err := MeanLoss([][]byte{x}, tc.A, tc.D, tc.delta, Options{Continuation: cont})
				if err != nil {
					t.Fatal(err)
				}
				if !testseq.AlmostEqual(ml, lossSum/float64(len(x)), 1e-12) {
					t.Errorf("MeanLoss = %v, brute force %v", ml, lossSum/float64(len(x)))
				}
			})
		}
	}
}

// TestNeverZero checks on random and text data that every probability is
// positive and that each distribution sums to 1 within 1e-12.
func TestNeverZero(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	bytes256 := make([]byte, 256)
	for i := range bytes256 {
		bytes256[i] = byte(i)
	}
	tests := []struct {
		name  string
		A, D  int
		delta float64
		x     []byte
	}{
		{"A=3 D=5 random", 3, 5, 0.5, randomSeq(r, []byte{0, 1, 2}, 20000)},
		{"A=3 D=5 δ small", 3, 5, 1e-6, testseq.FixedOrderSource(3, 3, 20000, 9)},
		{"A=3 D=5 δ large", 3, 5, 1 - 1e-6, testseq.FixedOrderSource(3, 3, 20000, 9)},
		{"A=2 D=8 constant", 2, 8, 0.01, make([]byte, 5000)},
		{"A=256 D=4 random bytes", 256, 4, 0.5, randomSeq(r, bytes256, 5000)},
		{"A=256 D=4 text", 256, 4, 0.7, testseq.TextStream(20000)},
	}
	for _, tc := range tests {
		for _, cont := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cont=%v", tc.name, cont), func(t *testing.T) {
				m, _ := New(tc.A, tc.D, tc.delta, Options{Continuation: cont})
				st := m.NewState()
				p := make([]float64, tc.A)
				for i := 0; i <= len(tc.x); i++ {
					st.Predict(p)
					sum := 0.0
					for a, v := range p {
						if !(v > 0) {
							t.Fatalf("position %d: P(%d) = %v", i, a, v)
						}
						sum += v
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("position %d: sum = %.17g", i, sum)
					}
					if i < len(tc.x) {
						st.Observe(tc.x[i])
					}
				}
			})
		}
	}
}

// TestMeanLossMatchesLogLoss checks that the fast single-symbol loss path
// agrees with predict.LogLoss over full distributions.
func TestMeanLossMatchesLogLoss(t *testing.T) {
	for _, cont := range []bool{false, true} {
		windows := [][]byte{testseq.FixedOrderSource(3, 2, 500, 1), testseq.FixedOrderSource(3, 4, 700, 2), {2}}
		m, _ := New(3, 3, 0.65, Options{Continuation: cont})
		sum, n := 0.0, 0
		for _, w := range windows {
			l, err := predict.LogLoss(m, w, make([]float64, len(w)))
			if err != nil {
				t.Fatal(err)
			}
			sum += l
			n += len(w)
		}
		got, _ := MeanLoss(windows, 3, 3, 0.65, Options{Continuation: cont})
		if !testseq.AlmostEqual(got, sum/float64(n), 1e-12) {
			t.Errorf("cont=%v: MeanLoss = %.17g, LogLoss = %.17g", cont, got, sum/float64(n))
		}
	}
}

func sourceWindows(A, d, count, length int, seed uint64) [][]byte {
	w := make([][]byte, count)
	for i := range w {
		w[i] = testseq.FixedOrderSource(A, d, length, seed+uint64(i))
	}
	return w
}

// TestTune checks that the tuned δ beats δ = 0.1 and δ = 0.9 (and every
// point of a 0.05 grid) on data from fixed-order sources, that the returned
// loss is L(δ), and that the result is bit-identical for any number of
// workers, with and without the count cache.
func TestTune(t *testing.T) {
	tests := []struct {
		name          string
		A, d, order   int
		count, length int
		cont          bool
		seed          uint64
	}{
		{"A=3 order-2 source D=2", 3, 2, 2, 40, 300, false, 100},
		{"A=3 order-1 source D=3", 3, 1, 3, 30, 400, false, 200},
		{"A=3 order-2 source D=2 cont", 3, 2, 2, 40, 300, true, 300},
		{"A=2 order-3 source D=3", 2, 3, 3, 20, 500, false, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			windows := sourceWindows(tc.A, tc.d, tc.count, tc.length, tc.seed)
			opts := Options{Continuation: tc.cont}
			delta, loss, err := Tune(windows, tc.A, tc.order, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !(delta > 0 && delta < 1) {
				t.Fatalf("δ = %v outside (0,1)", delta)
			}
			direct, _ := MeanLoss(windows, tc.A, tc.order, delta, opts)
			if direct != loss {
				t.Errorf("Tune loss %.17g != MeanLoss(δ) %.17g", loss, direct)
			}
			for _, g := range []float64{0.1, 0.9} {
				lg, _ := MeanLoss(windows, tc.A, tc.order, g, opts)
				if !(loss < lg) {
					t.Errorf("tuned δ=%.5f loss %.6f not below δ=%v loss %.6f", delta, loss, g, lg)
				}
			}
			for g := 0.05; g < 1; g += 0.05 {
				lg, _ := MeanLoss(windows, tc.A, tc.order, g, opts)
				if loss > lg+1e-9 {
					t.Errorf("tuned δ=%.5f loss %.8f above grid δ=%.2f loss %.8f", delta, loss, g, lg)
				}
			}
			t.Logf("δ* = %.5f, L = %.5f nats", delta, loss)
			for _, workers := range []int{1, 2, 3, 7} {
				for _, cache := range []bool{false, true} {
					d2, l2, err := tune(windows, tc.A, tc.order, opts, workers, cache, nil)
					if err != nil {
						t.Fatal(err)
					}
					if d2 != delta || l2 != loss {
						t.Errorf("workers=%d cache=%v: (%v, %v), want (%v, %v)", workers, cache, d2, l2, delta, loss)
					}
				}
			}
		})
	}
}

func TestGoldenSection(t *testing.T) {
	for _, x0 := range []float64{0.01, 0.3, 0.5, 0.77, 0.999} {
		evals := 0
		x, fx := goldenSection(func(x float64) float64 {
			evals++
			return (x - x0) * (x - x0)
		}, 0, 1, TuneTolerance)
		if math.Abs(x-x0) > TuneTolerance {
			t.Errorf("minimiser %v: got %v", x0, x)
		}
		if fx != (x-x0)*(x-x0) {
			t.Errorf("value mismatch")
		}
		if evals != TuneEvaluations {
			t.Errorf("%d evaluations, TuneEvaluations = %d", evals, TuneEvaluations)
		}
	}
}

// TestTuneProgress checks that TuneProgress reports every loss evaluation,
// in order and out of TuneEvaluations, and tunes as Tune does.
func TestTuneProgress(t *testing.T) {
	var windows [][]byte
	for i := range 20 {
		windows = append(windows, testseq.FixedOrderSource(3, 2, 200, uint64(i+1)))
	}
	delta, loss, err := Tune(windows, 3, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	d2, l2, err := TuneProgress(windows, 3, 2, Options{}, func(done, total int) {
		if total != TuneEvaluations {
			t.Errorf("total %d, want %d", total, TuneEvaluations)
		}
		got = append(got, done)
	})
	if err != nil || d2 != delta || l2 != loss {
		t.Errorf("TuneProgress (%v, %v, %v), Tune (%v, %v)", d2, l2, err, delta, loss)
	}
	if len(got) != TuneEvaluations || got[0] != 1 || got[len(got)-1] != TuneEvaluations {
		t.Errorf("reports %v, want 1..%d", got, TuneEvaluations)
	}
	if TuneEvaluations != 22 {
		t.Errorf("TuneEvaluations = %d, the doc says 22", TuneEvaluations)
	}
}

func TestConcurrentStates(t *testing.T) {
	m, _ := New(3, 4, 0.6, Options{})
	x := testseq.FixedOrderSource(3, 3, 3000, 5)
	want, _ := predict.LogLoss(m, x, make([]float64, len(x)))
	done := make(chan float64, 4)
	for g := 0; g < 4; g++ {
		go func() {
			got, _ := predict.LogLoss(m, x, make([]float64, len(x)))
			done <- got
		}()
	}
	for g := 0; g < 4; g++ {
		if got := <-done; got != want {
			t.Errorf("concurrent loss %v, want %v", got, want)
		}
	}
}

func ExampleNew() {
	m, err := New(2, 1, 0.5, Options{})
	if err != nil {
		panic(err)
	}
	st := m.NewState()
	for _, a := range []byte{0, 1, 0} {
		st.Observe(a)
	}
	p := make([]float64, 2)
	st.Predict(p)
	fmt.Printf("%s: P(0|010) = %.4f, P(1|010) = %.4f\n", m.Name(), p[0], p[1])
	// Output: KN(D=1,δ=0.5): P(0|010) = 0.3333, P(1|010) = 0.6667
}

func ExampleTune() {
	windows := [][]byte{
		{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2},
		{2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1, 0},
	}
	delta, loss, err := Tune(windows, 3, 1, Options{})
	if err != nil {
		panic(err)
	}
	// Each window is evaluated from a fresh state: the discount trades the
	// cost of novel symbols early in a window against sharper predictions
	// later.
	fmt.Printf("δ = %.3f, mean log-loss = %.3f nats/symbol\n", delta, loss)
	// Output: δ = 0.345, mean log-loss = 0.463 nats/symbol
}

func BenchmarkA3Order5(b *testing.B) {
	x := testseq.FixedOrderSource(3, 5, 100000, 1)
	m, _ := New(3, 5, 0.5, Options{})
	testseq.BenchSequence(b, m, x)
}

func BenchmarkA256Order4Text(b *testing.B) {
	x := testseq.TextStream(100000)
	m, _ := New(256, 4, 0.5, Options{})
	testseq.BenchSequence(b, m, x)
}

func BenchmarkA256Order4TextCont(b *testing.B) {
	x := testseq.TextStream(100000)
	m, _ := New(256, 4, 0.5, Options{Continuation: true})
	testseq.BenchSequence(b, m, x)
}

// BenchmarkTune tunes δ on 100 windows of 1000 symbols (A=3, D=5) and
// reports the cost per symbol per loss evaluation.
func BenchmarkTune(b *testing.B) {
	windows := sourceWindows(3, 3, 100, 1000, 77)
	for b.Loop() {
		if _, _, err := Tune(windows, 3, 5, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e5/22, "ns/symbol/eval")
}

// TestTuneMemoryEstimate checks the estimate by hand, and that it counts
// the cache exactly when Tune keeps one.
func TestTuneMemoryEstimate(t *testing.T) {
	// 10 windows of 100 symbols at order 3: 1+2+3+4·97 = 394 counts per
	// window, 12 bytes each, a slice header and a loss per window
	if est := TuneMemoryEstimate(10, 100, 3); est != 10*(394*12+24+8) {
		t.Errorf("cached: %d", est)
	}
	if est := TuneMemoryEstimate(1000, 1<<20, 5); est != 8*1000 {
		t.Errorf("over the cache budget: %d", est)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{100, 1 << 17} {
		windows := make([][]byte, 40)
		for i := range windows {
			windows[i] = make([]byte, n)
			for j := range windows[i] {
				windows[i][j] = byte(rng.IntN(3))
			}
		}
		m, err := New(3, 5, 0.5, Options{})
		if err != nil {
			t.Fatal(err)
		}
		tu, err := newTuner(windows, m, 1, true)
		if err != nil {
			t.Fatal(err)
		}
		if cached := TuneMemoryEstimate(len(windows), n, 5) > 8*int64(len(windows)); cached != (tu.stats != nil) {
			t.Errorf("n=%d: estimate counts a cache %v, Tune keeps one %v", n, cached, tu.stats != nil)
		}
	}
}
