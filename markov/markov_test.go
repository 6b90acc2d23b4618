package markov

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
		name  string
		A, k  int
		alpha float64
		opts  Options
	}{
		{"A=0", 0, 1, 0.5, Options{}},
		{"A=257", 257, 1, 0.5, Options{}},
		{"A<0", -3, 1, 0.5, Options{}},
		{"k<0", 3, -1, 0.5, Options{}},
		{"k too large", 3, MaxOrder + 1, 0.5, Options{}},
		{"alpha=0", 3, 1, 0, Options{}},
		{"alpha<0", 3, 1, -1, Options{}},
		{"alpha=NaN", 3, 1, math.NaN(), Options{}},
		{"alpha=Inf", 3, 1, math.Inf(1), Options{}},
		{"bad init", 3, 1, 0.5, Options{Init: Init(7)}},
		{"bad init k=0", 3, 0, 0.5, Options{Init: Init(-1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.A, tc.k, tc.alpha, tc.opts)
			if err == nil {
				t.Fatalf("New(%d,%d,%v,%+v) = %v, want error", tc.A, tc.k, tc.alpha, tc.opts, p.Name())
			}
		})
	}
	if _, err := NewUnigram(3, -1); err == nil {
		t.Error("NewUnigram(3,-1): want error")
	}
	if _, err := NewFixedOrder(1, 3, 1, Options{}); err != nil {
		t.Errorf("A=1 should be accepted: %v", err)
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		A, k  int
		alpha float64
		opts  Options
		want  string
	}{
		{3, 0, 0.5, Options{}, "Unigram(α=0.5)"},
		{3, 2, 0.5, Options{}, "Markov(k=2,α=0.5)"},
		{256, 4, 1, Options{Init: Shorter}, "Markov(k=4,α=1,shorter)"},
		{2, 1, 0.125, Options{Init: Pad}, "Markov(k=1,α=0.125)"},
	}
	for _, tc := range tests {
		p, err := New(tc.A, tc.k, tc.alpha, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Name(); got != tc.want {
			t.Errorf("Name() = %q, want %q", got, tc.want)
		}
		if p.AlphabetSize() != tc.A {
			t.Errorf("%s: AlphabetSize() = %d, want %d", tc.want, p.AlphabetSize(), tc.A)
		}
	}
	if Pad.String() != "pad" || Shorter.String() != "shorter" {
		t.Error("Init.String")
	}
}

// TestHand checks predictions computed by hand, position by position.
func TestHand(t *testing.T) {
	tests := []struct {
		name  string
		A, k  int
		alpha float64
		init  Init
		x     []byte
		want  [][]float64 // want[i] = P(· | x_1^i)
	}{
		{
			name: "unigram", A: 3, k: 0, alpha: 0.5, x: []byte{0, 0, 1},
			want: [][]float64{
				{1.0 / 3, 1.0 / 3, 1.0 / 3},
				{1.5 / 2.5, 0.5 / 2.5, 0.5 / 2.5},
				{2.5 / 3.5, 0.5 / 3.5, 0.5 / 3.5},
				{2.5 / 4.5, 1.5 / 4.5, 0.5 / 4.5},
			},
		},
		{
			// Padded: x_1 is predicted in context 0, so (0→0) is counted
			// and the second prediction (context 0 again) uses it.
			name: "pad k=1", A: 2, k: 1, alpha: 1, init: Pad, x: []byte{0, 0, 1},
			want: [][]float64{
				{0.5, 0.5},
				{2.0 / 3, 1.0 / 3},
				{3.0 / 4, 1.0 / 4},
				{0.5, 0.5}, // context 1 never seen
			},
		},
		{
			// Shorter: the first symbol is predicted from the empty
			// context and is not counted in the order-1 table.
			name: "shorter k=1", A: 2, k: 1, alpha: 1, init: Shorter, x: []byte{0, 0, 1},
			want: [][]float64{
				{0.5, 0.5},
				{0.5, 0.5},
				{2.0 / 3, 1.0 / 3},
				{0.5, 0.5},
			},
		},
		{
			// k=2, A=3, α=1/2, pad: contexts 00,00,01,11,10 then 00.
			name: "pad k=2", A: 3, k: 2, alpha: 0.5, init: Pad, x: []byte{0, 1, 1, 0, 0},
			want: [][]float64{
				{1.0 / 3, 1.0 / 3, 1.0 / 3},       // ctx 00, empty
				{1.5 / 2.5, 0.5 / 2.5, 0.5 / 2.5}, // ctx 00: {0:1}
				{1.0 / 3, 1.0 / 3, 1.0 / 3},       // ctx 01 unseen
				{1.0 / 3, 1.0 / 3, 1.0 / 3},       // ctx 11 unseen
				{1.0 / 3, 1.0 / 3, 1.0 / 3},       // ctx 10 unseen
				{1.5 / 3.5, 1.5 / 3.5, 0.5 / 3.5}, // ctx 00: {0:1,1:1}
			},
		},
	}
	for _, tc := range tests {
		for _, sparse := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/sparse=%v", tc.name, sparse), func(t *testing.T) {
				m, err := NewFixedOrder(tc.A, tc.k, tc.alpha, Options{Init: tc.init})
				if err != nil {
					t.Fatal(err)
				}
				m.forceSparse = sparse
				m.configure()
				var ps []predict.Predictor = []predict.Predictor{m}
				if tc.k == 0 {
					u, _ := NewUnigram(tc.A, tc.alpha)
					ps = append(ps, u)
				}
				for _, p := range ps {
					st := p.NewState()
					got := make([]float64, tc.A)
					for i, w := range tc.want {
						st.Predict(got)
						for a := range w {
							if !testseq.AlmostEqual(got[a], w[a], 1e-15) {
								t.Fatalf("%s: position %d: P(%d) = %v, want %v", p.Name(), i, a, got[a], w[a])
							}
						}
						if i < len(tc.x) {
							st.Observe(tc.x[i])
						}
					}
				}
			})
		}
	}
}

// brute recomputes P(· | x[:i]) from the definition by scanning the whole
// history: under Pad the contexts are taken from 0^k x; under Shorter the
// context of position j has length min(k, j) and only contexts of equal
// length share a table.
func brute(x []byte, i, A, k int, alpha float64, init Init) []float64 {
	counts := make([]float64, A)
	total := 0.0
	if init == Pad {
		y := append(make([]byte, k), x...)
		ctx := y[i : i+k]
		for j := 0; j < i; j++ {
			if bytes.Equal(y[j:j+k], ctx) {
				counts[y[j+k]]++
				total++
			}
		}
	} else {
		L := min(k, i)
		ctx := x[i-L : i]
		for j := 0; j < i; j++ {
			if min(k, j) == L && bytes.Equal(x[j-L:j], ctx) {
				counts[x[j]]++
				total++
			}
		}
	}
	p := make([]float64, A)
	for a := range p {
		p[a] = (counts[a] + alpha) / (total + float64(A)*alpha)
	}
	return p
}

// TestBruteForce compares every storage mode (dense arrays, packed-key map,
// string-key map) against the brute-force definition on random data.
func TestBruteForce(t *testing.T) {
	tests := []struct {
		A, k     int
		alpha    float64
		alphabet []byte // symbols used by the random sequence
		n        int
		sparse   bool
		mode     int
	}{
		{3, 2, 0.5, []byte{0, 1, 2}, 300, false, modeDense},
		{3, 2, 0.5, []byte{0, 1, 2}, 300, true, modeKey},
		{2, 5, 1, []byte{0, 1}, 400, false, modeDense},
		{3, 12, 0.5, []byte{0, 1}, 400, false, modeKey},
		{256, 2, 0.25, []byte{0, 7, 255}, 300, false, modeKey},
		{256, 8, 0.25, []byte{0, 255}, 300, false, modeKey},
		{256, 9, 0.25, []byte{0, 255}, 300, false, modeString},
		{200, 3, 2, []byte{0, 1, 199}, 300, false, modeKey},
		{1, 3, 1, []byte{0}, 50, false, modeDense},
		{4, 0, 0.5, []byte{0, 1, 2, 3}, 100, false, modeDense},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range tests {
		for _, init := range []Init{Pad, Shorter} {
			name := fmt.Sprintf("A=%d/k=%d/%v/mode=%d", tc.A, tc.k, init, tc.mode)
			t.Run(name, func(t *testing.T) {
				m, err := NewFixedOrder(tc.A, tc.k, tc.alpha, Options{Init: init})
				if err != nil {
					t.Fatal(err)
				}
				m.forceSparse = tc.sparse
				m.configure()
				if m.mode != tc.mode {
					t.Fatalf("mode = %d, want %d", m.mode, tc.mode)
				}
				x := make([]byte, tc.n)
				for i := range x {
					x[i] = tc.alphabet[r.IntN(len(tc.alphabet))]
				}
				st := m.NewState()
				got := make([]float64, tc.A)
				for i := 0; i <= len(x); i++ {
					st.Predict(got)
					want := brute(x, i, tc.A, tc.k, tc.alpha, init)
					sum := 0.0
					for a := range want {
						sum += got[a]
						if !testseq.AlmostEqual(got[a], want[a], 1e-13) {
							t.Fatalf("position %d: P(%d) = %v, want %v", i, a, got[a], want[a])
						}
					}
					if !testseq.AlmostEqual(sum, 1, 1e-12) {
						t.Fatalf("position %d: sum = %v", i, sum)
					}
					if i < len(x) {
						st.Observe(x[i])
					}
				}
			})
		}
	}
}

// TestConvergence checks that the order-k estimator's mean log-loss on a
// long order-k source approaches the source's entropy rate from above, while
// the unigram (a misspecified model) stays well above it.
func TestConvergence(t *testing.T) {
	x := testseq.FixedOrderSource(3, 2, 50000, 42)
	loss := make([]float64, len(x))
	m2, _ := New(3, 2, 0.5, Options{})
	u, _ := New(3, 0, 0.5, Options{})
	m4, _ := New(3, 4, 0.5, Options{})
	l2, _ := predict.LogLoss(m2, x, loss)
	lu, _ := predict.LogLoss(u, x, loss)
	l4, _ := predict.LogLoss(m4, x, loss)
	n := float64(len(x))
	if !(l2/n < l4/n && l2/n < lu/n) {
		t.Errorf("mean losses (nats): order2 %.4f, order4 %.4f, unigram %.4f; want order 2 best", l2/n, l4/n, lu/n)
	}
}

func TestConcurrentStates(t *testing.T) {
	m, _ := New(3, 3, 0.5, Options{})
	x := testseq.FixedOrderSource(3, 3, 2000, 5)
	loss := make([]float64, len(x))
	want, _ := predict.LogLoss(m, x, loss)
	done := make(chan float64, 4)
	for g := 0; g < 4; g++ {
		go func() {
			l := make([]float64, len(x))
			got, _ := predict.LogLoss(m, x, l)
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
	// Order-1 Markov with the Krichevsky–Trofimov estimator (α = 1/2).
	p, err := New(3, 1, 0.5, Options{})
	if err != nil {
		panic(err)
	}
	st := p.NewState()
	for _, a := range []byte{0, 1, 0, 1, 0} {
		st.Observe(a)
	}
	dist := make([]float64, p.AlphabetSize())
	// With the default Pad convention x_1 = 0 follows the padded context 0,
	// so context 0 has been followed by 0 once and by 1 twice:
	// P(·|0) = (1+½, 2+½, ½)/(3+3·½).
	st.Predict(dist)
	fmt.Printf("%s: P(0|0)=%.4f P(1|0)=%.4f P(2|0)=%.4f\n", p.Name(), dist[0], dist[1], dist[2])
	// Output: Markov(k=1,α=0.5): P(0|0)=0.3333 P(1|0)=0.5556 P(2|0)=0.1111
}

func BenchmarkA3Order5(b *testing.B) {
	x := testseq.FixedOrderSource(3, 5, 100000, 1)
	p, _ := New(3, 5, 0.5, Options{})
	testseq.BenchSequence(b, p, x)
}

func BenchmarkA256Order4Text(b *testing.B) {
	x := testseq.TextStream(100000)
	p, _ := New(256, 4, 0.5, Options{})
	testseq.BenchSequence(b, p, x)
}

func BenchmarkA256UnigramText(b *testing.B) {
	x := testseq.TextStream(100000)
	p, _ := New(256, 0, 0.5, Options{})
	testseq.BenchSequence(b, p, x)
}
