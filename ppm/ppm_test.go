package ppm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/vomc/vomc/internal/testseq"
	"github.com/vomc/vomc/predict"
)

// The paper's alphabet {a, b, c} is {0, 1, 2}; d = 3 is a fourth symbol that
// never occurs.
const (
	sa = 0
	sb = 1
	sc = 2
)

var paperSeq = []byte{sa, sb, sc, sa, sb, sb, sc} // a b c a b b c

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name     string
		A, order int
		opts     Options
	}{
		{"A=0", 0, 2, Options{}},
		{"A=300", 300, 2, Options{}},
		{"order<0", 3, -1, Options{}},
		{"order too large", 3, MaxOrder + 1, Options{}},
		{"method B", 3, 2, Options{Method: Method(7)}},
		{"method<0", 3, 2, Options{Method: Method(-1)}},
	}
	for _, tc := range tests {
		if _, err := New(tc.A, tc.order, tc.opts); err == nil {
			t.Errorf("%s: want error", tc.name)
		}
	}
}

func TestName(t *testing.T) {
	tests := []struct {
		order int
		opts  Options
		want  string
	}{
		{2, Options{}, "PPM(D=2,A)"},
		{4, Options{Method: MethodC, Exclusion: true}, "PPM(D=4,C,excl)"},
		{3, Options{Method: MethodD, Exclusion: true, UpdateExclusion: true, Normalize: true}, "PPM(D=3,D,excl,updexcl,norm)"},
		{1, Options{Normalize: true}, "PPM(D=1,A,norm)"},
	}
	for _, tc := range tests {
		m, err := New(3, tc.order, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Name(); got != tc.want {
			t.Errorf("Name() = %q, want %q", got, tc.want)
		}
		if m.Order() != tc.order || m.Options() != tc.opts || m.AlphabetSize() != 3 {
			t.Error("accessors")
		}
	}
}

func run(t *testing.T, A, order int, opts Options, x []byte) (*state, []float64) {
	t.Helper()
	m, err := New(A, order, opts)
	if err != nil {
		t.Fatal(err)
	}
	st := m.newState()
	for _, a := range x {
		st.Observe(a)
	}
	p := make([]float64, A)
	st.Predict(p)
	return st, p
}

// countsOf returns the counts c(s, ·) of the context s, or nil if s is not
// in the trie.
func countsOf(st *state, s []byte) map[byte]uint32 {
	n := int32(0)
	for _, a := range s {
		i := st.t.Find(n, a)
		if i < 0 {
			return nil
		}
		n = st.t.Arena[i].Node
	}
	out := map[byte]uint32{}
	for _, k := range st.t.Kids(n) {
		if k.Count > 0 {
			out[k.Sym] = k.Count
		}
	}
	return out
}

// contextsOfOrder lists the contexts of length k that have been followed by
// a symbol.
func contextsOfOrder(st *state, k int) [][]byte {
	var out [][]byte
	var walk func(n int32, prefix []byte)
	walk = func(n int32, prefix []byte) {
		if len(prefix) == k {
			if st.t.Nodes[n].Total > 0 {
				out = append(out, append([]byte(nil), prefix...))
			}
			return
		}
		for _, kd := range st.t.Kids(n) {
			if kd.Count > 0 {
				walk(kd.Node, append(prefix, kd.Sym))
			}
		}
	}
	walk(0, nil)
	return out
}

// TestPaperTable checks every count and probability of the paper's table of
// PPM counts after observing a b c a b b c (paper appendix app:ppm: D = 2, method A).
// The paper's table lists (c,a) → c; the string a b c a b b c has (c,a)
// followed by b (positions 3–5), which is what is tested.
func TestPaperTable(t *testing.T) {
	st, _ := run(t, 3, 2, Options{}, paperSeq)
	type row struct {
		ctx    []byte
		counts map[byte]uint32
		p      map[byte]float64 // method-A probabilities of the symbols
		esc    float64
	}
	rows := []row{
		// order 2
		{[]byte{sa, sb}, map[byte]uint32{sb: 1, sc: 1}, map[byte]float64{sb: 1.0 / 3, sc: 1.0 / 3}, 1.0 / 3},
		{[]byte{sb, sb}, map[byte]uint32{sc: 1}, map[byte]float64{sc: 0.5}, 0.5},
		{[]byte{sb, sc}, map[byte]uint32{sa: 1}, map[byte]float64{sa: 0.5}, 0.5},
		{[]byte{sc, sa}, map[byte]uint32{sb: 1}, map[byte]float64{sb: 0.5}, 0.5},
		// order 1
		{[]byte{sa}, map[byte]uint32{sb: 2}, map[byte]float64{sb: 2.0 / 3}, 1.0 / 3},
		{[]byte{sb}, map[byte]uint32{sb: 1, sc: 2}, map[byte]float64{sb: 0.25, sc: 0.5}, 0.25},
		{[]byte{sc}, map[byte]uint32{sa: 1}, map[byte]float64{sa: 0.5}, 0.5},
		// order 0
		{[]byte{}, map[byte]uint32{sa: 2, sb: 3, sc: 2}, map[byte]float64{sa: 0.25, sb: 3.0 / 8, sc: 0.25}, 1.0 / 8},
	}
	for _, r := range rows {
		got := countsOf(st, r.ctx)
		if fmt.Sprint(got) != fmt.Sprint(r.counts) {
			t.Errorf("context %v: counts %v, want %v", r.ctx, got, r.counts)
			continue
		}
		n, d := uint32(0), uint32(0)
		for _, c := range got {
			n += c
			d++
		}
		den, escW := st.m.weights(n, d)
		for a, c := range got {
			if p := st.m.symWeight(c) / den; !testseq.AlmostEqual(p, r.p[a], 1e-15) {
				t.Errorf("context %v: P(%d) = %v, want %v", r.ctx, a, p, r.p[a])
			}
		}
		if esc := escW / den; !testseq.AlmostEqual(esc, r.esc, 1e-15) {
			t.Errorf("context %v: P(Esc) = %v, want %v", r.ctx, esc, r.esc)
		}
	}
	// No other contexts exist.
	for k, want := range []int{1, 3, 4} {
		if got := len(contextsOfOrder(st, k)); got != want {
			t.Errorf("%d contexts of order %d, want %d: %v", got, k, want, contextsOfOrder(st, k))
		}
	}
	// The paper's worked example: next symbol a → 1/2 from the order-2
	// column; b → escapes from (b,c) and (c) then 3/8 at order 0.
	_, p := run(t, 3, 2, Options{}, paperSeq)
	if !testseq.AlmostEqual(p[sa], 0.5, 1e-15) {
		t.Errorf("P(a) = %v, want 1/2", p[sa])
	}
	if want := 0.5 * 0.5 * 3.0 / 8; !testseq.AlmostEqual(p[sb], want, 1e-15) {
		t.Errorf("P(b) = %v, want 1/2·1/2·3/8 = %v", p[sb], want)
	}
	if want := 0.5 * 0.5 * 2.0 / 8; !testseq.AlmostEqual(p[sc], want, 1e-15) {
		t.Errorf("P(c) = %v, want 1/2·1/2·2/8 = %v", p[sc], want)
	}
}

// TestHand checks full distributions computed by hand after a b c a b b c
// (and a b c a b b c a) for every method, with and without exclusion, for
// A = 3 and for A = 4, where the fourth symbol d never occurred.
//
// After a b c a b b c the contexts are (b,c): {a:1}; (c): {a:1};
// (): {a:2, b:3, c:2}, n = 7, d = 3. Every method gives a 1/2 at order 2
// (A: 1/(1+1); C: 1/(1+1); D: (2−1)/2) with escape 1/2. Order 1 only holds a:
// without exclusion it escapes with 1/2; with exclusion it is skipped.
// Order 0 without exclusion: A: b 3/8, c 2/8, esc 1/8; C: 3/10, 2/10, 3/10;
// D: 5/14, 3/14, 3/14. Order 0 with exclusion has {b:3, c:2}, n = 5, d = 2:
// for A = 3 these are all the symbols left, so the escape is not coded and
// A, C give b 3/5, c 2/5 and D gives 5/8, 3/8; for A = 4 the escape leads to
// d: A: 3/6, 2/6, esc 1/6; C: 3/7, 2/7, esc 2/7; D: 5/10, 3/10, esc 2/10, and
// order −1 gives d everything left.
func TestHand(t *testing.T) {
	abcabbca := append(append([]byte(nil), paperSeq...), sa)
	tests := []struct {
		name string
		A    int
		opts Options
		x    []byte
		want []float64
	}{
		{"A/3", 3, Options{Method: MethodA}, paperSeq, []float64{0.5, 0.25 * 3 / 8, 0.25 * 2 / 8}},
		{"A/3/excl", 3, Options{Method: MethodA, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 3 / 5, 0.5 * 2 / 5}},
		{"C/3", 3, Options{Method: MethodC}, paperSeq, []float64{0.5, 0.25 * 3 / 10, 0.25 * 2 / 10}},
		{"C/3/excl", 3, Options{Method: MethodC, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 3 / 5, 0.5 * 2 / 5}},
		{"D/3", 3, Options{Method: MethodD}, paperSeq, []float64{0.5, 0.25 * 5 / 14, 0.25 * 3 / 14}},
		{"D/3/excl", 3, Options{Method: MethodD, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 5 / 8, 0.5 * 3 / 8}},
		{"A/4", 4, Options{Method: MethodA}, paperSeq, []float64{0.5, 0.25 * 3 / 8, 0.25 * 2 / 8, 0.25 / 8 / 4}},
		{"A/4/excl", 4, Options{Method: MethodA, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 3 / 6, 0.5 * 2 / 6, 0.5 / 6}},
		{"C/4", 4, Options{Method: MethodC}, paperSeq, []float64{0.5, 0.25 * 3 / 10, 0.25 * 2 / 10, 0.25 * 3 / 10 / 4}},
		{"C/4/excl", 4, Options{Method: MethodC, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 3 / 7, 0.5 * 2 / 7, 0.5 * 2 / 7}},
		{"D/4", 4, Options{Method: MethodD}, paperSeq, []float64{0.5, 0.25 * 5 / 14, 0.25 * 3 / 14, 0.25 * 3 / 14 / 4}},
		{"D/4/excl", 4, Options{Method: MethodD, Exclusion: true}, paperSeq, []float64{0.5, 0.5 * 5 / 10, 0.5 * 3 / 10, 0.5 * 2 / 10}},
		// After a b c a b b c a: (c,a): {b:1}; (a): {b:2}; (): {a:3, b:3,
		// c:2}. A: b 1/2, esc 1/2; order 1 escapes with 1/3 (or is
		// skipped with exclusion); order 0: a 3/9, c 2/9 (exclusion: b
		// removed, n = 5, the escape is not coded: a 3/5, c 2/5).
		{"A/3 abcabbca", 3, Options{}, abcabbca, []float64{0.5 / 3 * 3 / 9, 0.5, 0.5 / 3 * 2 / 9}},
		{"A/3/excl abcabbca", 3, Options{Exclusion: true}, abcabbca, []float64{0.5 * 3 / 5, 0.5, 0.5 * 2 / 5}},
		// Method C on the same: (c,a) b 1/2, esc 1/2; (a): {b:2}, n=2,
		// d=1: esc 1/3; (): n=8, d=3: a 3/11, c 2/11.
		{"C/3 abcabbca", 3, Options{Method: MethodC}, abcabbca, []float64{0.5 / 3 * 3 / 11, 0.5, 0.5 / 3 * 2 / 11}},
		// Method D: (c,a) 1/2, esc 1/2; (a): n=2, d=1: esc 1/4;
		// (): a 5/16, c 3/16.
		{"D/3 abcabbca", 3, Options{Method: MethodD}, abcabbca, []float64{0.5 / 4 * 5 / 16, 0.5, 0.5 / 4 * 3 / 16}},
		// Empty history: uniform.
		{"empty", 4, Options{Method: MethodC, Exclusion: true}, nil, []float64{0.25, 0.25, 0.25, 0.25}},
		{"empty/noexcl", 3, Options{}, nil, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		// One symbol: order 0 {a:1}; A: a 1/2, esc 1/2 → b, c 1/2·1/3
		// (exclusion: 1/2·1/2).
		{"one", 3, Options{}, []byte{sa}, []float64{0.5, 0.5 / 3, 0.5 / 3}},
		{"one/excl", 3, Options{Exclusion: true}, []byte{sa}, []float64{0.5, 0.25, 0.25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, p := run(t, tc.A, 2, tc.opts, tc.x)
			for a := range tc.want {
				if !testseq.AlmostEqual(p[a], tc.want[a], 1e-15) {
					t.Errorf("P(%d) = %.17g, want %.17g", a, p[a], tc.want[a])
				}
			}
		})
	}
}

// TestUpdateExclusion checks the counts and prediction after a b c a b b c
// with update exclusion, worked out symbol by symbol:
//
//	a: novel          → update all: (): a1
//	b: novel          → (): b1, (a): b1
//	c: novel          → (): c1, (b): c1, (a,b): c1
//	a: coded at 0     → (): a2, (c): a1, (b,c): a1
//	b: coded at 1 (a) → (a): b2, (c,a): b1
//	b: coded at 0     → (): b2, (b): b1, (a,b): b1
//	c: coded at 1 (b) → (b): c2, (b,b): c1
//
// Prediction: (b,c) a 1/2, esc 1/2; (c) esc 1/2; (): {a2, b2, c1}: b 2/6,
// c 1/6.
func TestUpdateExclusion(t *testing.T) {
	st, p := run(t, 3, 2, Options{UpdateExclusion: true}, paperSeq)
	want := map[string]map[byte]uint32{
		"":    {sa: 2, sb: 2, sc: 1},
		"a":   {sb: 2},
		"b":   {sb: 1, sc: 2},
		"c":   {sa: 1},
		"ab":  {sb: 1, sc: 1},
		"bc":  {sa: 1},
		"ca":  {sb: 1},
		"bb":  {sc: 1},
		"aa":  nil,
		"cb":  nil,
		"abc": nil,
	}
	for s, w := range want {
		ctx := make([]byte, len(s))
		for i := range s {
			ctx[i] = s[i] - 'a'
		}
		got := countsOf(st, ctx)
		if len(got) == 0 {
			got = nil
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("context %q: %v, want %v", s, got, w)
		}
	}
	wantP := []float64{0.5, 0.25 * 2 / 6, 0.25 * 1 / 6}
	for a := range wantP {
		if !testseq.AlmostEqual(p[a], wantP[a], 1e-15) {
			t.Errorf("P(%d) = %v, want %v", a, p[a], wantP[a])
		}
	}
}

// brutePPM is an independent, slow PPM: counts in a map keyed by context
// string, and the probability of each symbol computed separately by walking
// its escape chain.
type brutePPM struct {
	A, D   int
	opts   Options
	hist   []byte
	counts map[string][]uint32
}

func (b *brutePPM) ctxCounts(k int) []uint32 {
	n := len(b.hist)
	if c := b.counts[string(b.hist[n-k:])]; c != nil {
		return c
	}
	return make([]uint32, b.A)
}

func (b *brutePPM) prob(a byte) float64 {
	m := &PPM{a: b.A, order: b.D, opts: b.opts}
	excluded := make([]bool, b.A)
	nExcl := 0
	esc := 1.0
	for k := min(b.D, len(b.hist)); k >= 0; k-- {
		c := b.ctxCounts(k)
		n, d := uint32(0), uint32(0)
		for s, v := range c {
			if v > 0 && !(b.opts.Exclusion && excluded[s]) {
				n += v
				d++
			}
		}
		if n == 0 {
			continue
		}
		den, escW := m.weights(n, d)
		if b.opts.Exclusion && int(d) == b.A-nExcl {
			den -= escW
			escW = 0
		}
		if c[a] > 0 {
			return esc * m.symWeight(c[a]) / den
		}
		esc *= escW / den
		for s, v := range c {
			if v > 0 && !excluded[s] {
				excluded[s] = true
				nExcl++
			}
		}
	}
	if b.opts.Exclusion {
		return esc / float64(b.A-nExcl)
	}
	return esc / float64(b.A)
}

func (b *brutePPM) observe(a byte) {
	coded := -1
	for k := min(b.D, len(b.hist)); k >= 0; k-- {
		if b.ctxCounts(k)[a] > 0 {
			coded = k
			break
		}
	}
	n := len(b.hist)
	for k := 0; k <= min(b.D, n); k++ {
		if b.opts.UpdateExclusion && k < coded {
			continue
		}
		key := string(b.hist[n-k:])
		if b.counts[key] == nil {
			b.counts[key] = make([]uint32, b.A)
		}
		b.counts[key][a]++
	}
	b.hist = append(b.hist, a)
}

func randomSeq(r *rand.Rand, alphabet []byte, n int) []byte {
	x := make([]byte, n)
	for i := range x {
		x[i] = alphabet[r.IntN(len(alphabet))]
	}
	return x
}

var allOptions = func() []Options {
	var out []Options
	for _, m := range []Method{MethodA, MethodC, MethodD} {
		for _, ex := range []bool{false, true} {
			for _, ue := range []bool{false, true} {
				out = append(out, Options{Method: m, Exclusion: ex, UpdateExclusion: ue})
			}
		}
	}
	return out
}()

// TestBruteForce compares Predict with the brute-force PPM at every position
// of random sequences, for every method and option.
func TestBruteForce(t *testing.T) {
	tests := []struct {
		A, D     int
		alphabet []byte
		n        int
	}{
		{2, 3, []byte{0, 1}, 150},
		{3, 0, []byte{0, 1, 2}, 60},
		{3, 2, []byte{0, 1, 2}, 200},
		{3, 5, []byte{0, 1, 2}, 200},
		{5, 2, []byte{0, 1, 2, 3}, 200},
		{20, 2, []byte{0, 3, 7, 19, 4, 5}, 200},
		{256, 3, []byte{'a', 'b', 'c', 'd', 255, 0}, 250},
		{1, 2, []byte{0}, 20},
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range tests {
		for _, opts := range allOptions {
			m, _ := New(tc.A, tc.D, opts)
			t.Run(fmt.Sprintf("A=%d/%s", tc.A, m.Name()), func(t *testing.T) {
				x := randomSeq(r, tc.alphabet, tc.n)
				st := m.NewState()
				b := &brutePPM{A: tc.A, D: tc.D, opts: opts, counts: map[string][]uint32{}}
				p := make([]float64, tc.A)
				for i := 0; i <= len(x); i++ {
					st.Predict(p)
					for a := range p {
						want := b.prob(byte(a))
						if !testseq.AlmostEqual(p[a], want, 1e-14*want) {
							t.Fatalf("position %d: P(%d) = %.17g, want %.17g", i, a, p[a], want)
						}
					}
					if i < len(x) {
						st.Observe(x[i])
						b.observe(x[i])
					}
				}
			})
		}
	}
}

// TestSums checks on random and text data that every probability is
// positive, that with exclusion (or Normalize) the probabilities sum to 1
// within 1e-12, and that without exclusion they sum to at most 1 and
// strictly less once the history is informative.
func TestSums(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	data := []struct {
		name string
		A, D int
		x    []byte
	}{
		{"A=3 D=5 source", 3, 5, testseq.FixedOrderSource(3, 3, 5000, 3)},
		{"A=2 D=3 random", 2, 3, randomSeq(r, []byte{0, 1}, 3000)},
		{"A=256 D=4 text", 256, 4, testseq.TextStream(8000)},
		{"A=256 D=2 random bytes", 256, 2, randomSeq(r, all, 3000)},
	}
	for _, d := range data {
		for _, base := range allOptions {
			for _, norm := range []bool{false, true} {
				opts := base
				opts.Normalize = norm
				m, _ := New(d.A, d.D, opts)
				t.Run(d.name+"/"+m.Name(), func(t *testing.T) {
					st := m.NewState()
					p := make([]float64, d.A)
					below := 0
					for i := 0; i <= len(d.x); i++ {
						st.Predict(p)
						sum := 0.0
						for a, v := range p {
							if !(v > 0) {
								t.Fatalf("position %d: P(%d) = %v", i, a, v)
							}
							sum += v
						}
						if opts.Exclusion || opts.Normalize {
							if math.Abs(sum-1) > 1e-12 {
								t.Fatalf("position %d: sum = %.17g", i, sum)
							}
						} else {
							if sum > 1+1e-12 {
								t.Fatalf("position %d: sum = %.17g > 1", i, sum)
							}
							if sum < 1-1e-9 {
								below++
							}
						}
						if i < len(d.x) {
							st.Observe(d.x[i])
						}
					}
					if !opts.Exclusion && !opts.Normalize && below == 0 {
						t.Error("without exclusion the sum should fall below 1")
					}
				})
			}
		}
	}
}

// TestCompression is a sanity check of PPMC (order 4, exclusion, update
// exclusion) as a byte compressor on English text: PPMC codes book1 at
// about 2.4–2.5 bits per byte.
func TestCompression(t *testing.T) {
	if _, err := os.Stat("../../shared/data/corpus/calgary/book1"); err != nil {
		t.Skip("shared corpus not present")
	}
	x := testseq.TextStream(200000)
	for _, opts := range []Options{
		{Method: MethodC, Exclusion: true, UpdateExclusion: true},
		{Method: MethodD, Exclusion: true},
		{Method: MethodA},
	} {
		m, _ := New(256, 4, opts)
		nats, err := predict.LogLoss(m, x, make([]float64, len(x)))
		if err != nil {
			t.Fatal(err)
		}
		bpb := predict.Nats2Bits(nats) / float64(len(x))
		t.Logf("%s: %.3f bits/byte on the first %d bytes of book1", m.Name(), bpb, len(x))
		if opts.Exclusion && bpb > 2.8 {
			t.Errorf("%s: %.3f bits/byte, want < 2.8", m.Name(), bpb)
		}
	}
}

func TestConcurrentStates(t *testing.T) {
	m, _ := New(3, 4, Options{Method: MethodC, Exclusion: true})
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

// Example reproduces the worked example of the paper's appendix app:ppm.
func Example() {
	m, err := New(3, 2, Options{Method: MethodA})
	if err != nil {
		panic(err)
	}
	st := m.NewState()
	for _, a := range []byte("abcabbc") {
		st.Observe(a - 'a')
	}
	p := make([]float64, 3)
	st.Predict(p)
	fmt.Printf("%s: P(a)=%g P(b)=%g (=1/2·1/2·3/8) P(c)=%g sum=%g\n", m.Name(), p[0], p[1], p[2], p[0]+p[1]+p[2])
	// Output: PPM(D=2,A): P(a)=0.5 P(b)=0.09375 (=1/2·1/2·3/8) P(c)=0.0625 sum=0.65625
}

func BenchmarkA3Order5(b *testing.B) {
	x := testseq.FixedOrderSource(3, 5, 100000, 1)
	m, _ := New(3, 5, Options{})
	testseq.BenchSequence(b, m, x)
}

func BenchmarkA3Order5CExcl(b *testing.B) {
	x := testseq.FixedOrderSource(3, 5, 100000, 1)
	m, _ := New(3, 5, Options{Method: MethodC, Exclusion: true})
	testseq.BenchSequence(b, m, x)
}

func BenchmarkA256Order4Text(b *testing.B) {
	x := testseq.TextStream(100000)
	m, _ := New(256, 4, Options{})
	testseq.BenchSequence(b, m, x)
}

func BenchmarkA256Order4TextCExcl(b *testing.B) {
	x := testseq.TextStream(100000)
	m, _ := New(256, 4, Options{Method: MethodC, Exclusion: true, UpdateExclusion: true})
	testseq.BenchSequence(b, m, x)
}
