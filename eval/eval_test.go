package eval_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

// ---- tiny predictors used by the tests ----

// uniform predicts 1/A for every symbol.
type uniform struct {
	name string
	a    int
}

func (u uniform) Name() string             { return u.name }
func (u uniform) AlphabetSize() int        { return u.a }
func (u uniform) NewState() predict.State  { return uniformState{u.a} }
func (uniformState) Observe(byte)          {}
func (s uniformState) Predict(p []float64) { fillUniform(p, s.a) }

type uniformState struct{ a int }

func fillUniform(p []float64, a int) {
	for i := range p {
		p[i] = 1 / float64(a)
	}
}

// laplace is the Laplace-smoothed (add-one) unigram estimator.
type laplace struct {
	name string
	a    int
}

func (l laplace) Name() string            { return l.name }
func (l laplace) AlphabetSize() int       { return l.a }
func (l laplace) NewState() predict.State { return &laplaceState{counts: make([]int, l.a)} }

type laplaceState struct {
	counts []int
	n      int
}

func (s *laplaceState) Observe(a byte) { s.counts[a]++; s.n++ }
func (s *laplaceState) Predict(p []float64) {
	den := float64(s.n + len(s.counts))
	for i, c := range s.counts {
		p[i] = float64(c+1) / den
	}
}

// bigram is the add-½ (KT) order-1 Markov estimator.
type bigram struct {
	name string
	a    int
}

func (b bigram) Name() string      { return b.name }
func (b bigram) AlphabetSize() int { return b.a }
func (b bigram) NewState() predict.State {
	return &bigramState{a: b.a, counts: make([]float64, b.a*(b.a+1)), prev: b.a}
}

type bigramState struct {
	a      int
	counts []float64 // (prev or a for "none") × a
	prev   int
}

func (s *bigramState) Observe(x byte) { s.counts[s.prev*s.a+int(x)]++; s.prev = int(x) }
func (s *bigramState) Predict(p []float64) {
	row := s.counts[s.prev*s.a : (s.prev+1)*s.a]
	tot := 0.0
	for _, c := range row {
		tot += c
	}
	for i, c := range row {
		p[i] = (c + 0.5) / (tot + 0.5*float64(s.a))
	}
}

// certain puts probability 1 on symbol 0 (infinite loss elsewhere).
type certain struct{ a int }

func (certain) Name() string              { return "certain" }
func (c certain) AlphabetSize() int       { return c.a }
func (c certain) NewState() predict.State { return certainState{} }

type certainState struct{}

func (certainState) Observe(byte) {}
func (certainState) Predict(p []float64) {
	clear(p)
	p[0] = 1
}

// markovWindows draws n windows of length N from a random order-1 chain
// over A symbols (fixed seed), a fresh chain per window.
func markovWindows(seed uint64, n, N, A int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([][]byte, n)
	for j := range out {
		trans := make([][]float64, A)
		for a := range trans {
			trans[a] = make([]float64, A)
			tot := 0.0
			for b := range trans[a] {
				v := r.ExpFloat64()
				v *= v
				trans[a][b] = v
				tot += v
			}
			for b := range trans[a] {
				trans[a][b] /= tot
			}
		}
		w := make([]byte, N)
		prev := r.IntN(A)
		for i := range w {
			u := r.Float64()
			s := 0
			for ; s < A-1; s++ {
				u -= trans[prev][s]
				if u < 0 {
					break
				}
			}
			w[i] = byte(s)
			prev = s
		}
		out[j] = w
	}
	return out
}

func preds3() []predict.Predictor {
	return []predict.Predictor{
		uniform{"uniform", 3},
		laplace{"unigram", 3},
		bigram{"CTW-ish bigram", 3},
	}
}

// ---- brute-force reference ----

type bruteStats struct{ mean, sd, lo, hi float64 }

func brute(v []float64, crit float64) bruteStats {
	n := float64(len(v))
	s := 0.0
	for _, x := range v {
		s += x
	}
	mean := s / n
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / (n - 1))
	h := crit * sd / math.Sqrt(n)
	return bruteStats{mean, sd, mean - h, mean + h}
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-11*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func checkIv(t *testing.T, what string, got eval.Interval, want bruteStats) {
	t.Helper()
	if !near(got.Mean, want.mean) || !near(got.SD, want.sd) || !near(got.Lo, want.lo) || !near(got.Hi, want.hi) {
		t.Fatalf("%s: got %+v, want %+v", what, got, want)
	}
}

func TestEvaluateMatchesBruteForce(t *testing.T) {
	const n, N, A = 37, 41, 3 // n not a multiple of the chunk size; odd N
	windows := markovWindows(1, n, N, A)
	preds := preds3()
	res, err := eval.Evaluate(context.Background(), windows, A, preds, eval.Config{Workers: 2, Reference: "CTW-ish bigram"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Windows != n || res.N != N || res.AlphabetSize != A || res.SecondHalfStart != N/2+1 {
		t.Fatalf("bad header %+v", res)
	}
	if res.Reference != 2 {
		t.Fatalf("reference = %d, want 2 (named)", res.Reference)
	}
	crit, _, _ := eval.CriticalValue(n, 0.95)
	if res.Critical != crit || res.CIMethod != "student-t" {
		t.Fatalf("critical %v %q", res.Critical, res.CIMethod)
	}
	// losses[m][j][i]
	losses := make([][][]float64, len(preds))
	for m, p := range preds {
		losses[m] = make([][]float64, n)
		for j, w := range windows {
			losses[m][j] = make([]float64, N)
			if _, err := predict.LogLoss(p, w, losses[m][j]); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := res.Reference
	h := res.SecondHalfStart - 1
	for m := range preds {
		mr := res.Methods[m]
		if mr.Name != preds[m].Name() {
			t.Fatalf("name %q", mr.Name)
		}
		col := make([]float64, n)
		for i := range N {
			for j := range n {
				col[j] = losses[m][j][i]
			}
			checkIv(t, "position", mr.Position[i], brute(col, crit))
			for j := range n {
				col[j] = losses[m][j][i] - losses[ref][j][i]
			}
			checkIv(t, "excess", mr.Excess[i], brute(col, crit))
		}
		mean := func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x
			}
			return s / float64(len(v))
		}
		var whole, second, exWhole, exSecond []float64
		for j := range n {
			whole = append(whole, mean(losses[m][j]))
			second = append(second, mean(losses[m][j][h:]))
			exWhole = append(exWhole, mean(losses[m][j])-mean(losses[ref][j]))
			exSecond = append(exSecond, mean(losses[m][j][h:])-mean(losses[ref][j][h:]))
		}
		checkIv(t, "window", mr.Window, brute(whole, crit))
		checkIv(t, "second half", mr.SecondHalf, brute(second, crit))
		checkIv(t, "excess window", mr.ExcessWindow, brute(exWhole, crit))
		checkIv(t, "excess second half", mr.ExcessSecondHalf, brute(exSecond, crit))
	}
	// The reference's excess is exactly zero with a degenerate interval.
	for _, iv := range append(res.Ref().Excess, res.Ref().ExcessWindow, res.Ref().ExcessSecondHalf) {
		if iv != (eval.Interval{}) {
			t.Fatalf("reference excess %+v, want zero", iv)
		}
	}
	// Paired intervals are narrower than the unpaired difference for
	// correlated methods (unigram vs bigram on the same windows).
	u := res.Methods[1]
	if u.ExcessWindow.HalfWidth() >= u.Window.HalfWidth()+res.Ref().Window.HalfWidth() {
		t.Errorf("paired CI %v not narrower than unpaired %v", u.ExcessWindow.HalfWidth(), u.Window.HalfWidth()+res.Ref().Window.HalfWidth())
	}
}

func TestUniformExact(t *testing.T) {
	windows := markovWindows(2, 5, 10, 4)
	res, err := eval.Evaluate(context.Background(), windows, 4, []predict.Predictor{uniform{"u", 4}}, eval.Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := math.Log(4)
	for i, iv := range res.Methods[0].Position {
		if iv.Mean != want || iv.SD != 0 || iv.Lo != want || iv.Hi != want {
			t.Fatalf("position %d: %+v, want exactly ln 4", i+1, iv)
		}
		if b := iv.Bits(); math.Abs(b.Mean-2) > 1e-15 {
			t.Fatalf("bits %v, want 2", b.Mean)
		}
	}
	if res.Reference != 0 {
		t.Fatalf("reference %d, want first", res.Reference)
	}
}

func encodeJSON(t *testing.T, r *eval.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	windows := markovWindows(3, 150, 64, 3)
	var first []byte
	var firstCSV string
	for _, w := range []int{1, 3, 8} {
		res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		js := encodeJSON(t, res)
		var csvb bytes.Buffer
		if err := res.WriteCSV(&csvb); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first, firstCSV = js, csvb.String()
			continue
		}
		if !bytes.Equal(js, first) {
			t.Fatalf("workers=%d: JSON differs from workers=1", w)
		}
		if csvb.String() != firstCSV {
			t.Fatalf("workers=%d: CSV differs from workers=1", w)
		}
	}
}

func TestEvaluateFlat(t *testing.T) {
	windows := markovWindows(4, 20, 16, 3)
	flat := bytes.Join(windows, nil)
	a, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := eval.EvaluateFlat(context.Background(), flat, 16, 3, preds3(), eval.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeJSON(t, a), encodeJSON(t, b)) {
		t.Fatal("flat and sliced evaluations differ")
	}
	for _, tc := range []struct {
		data []byte
		N    int
		want string
	}{
		{flat[:17], 16, "not a multiple"},
		{nil, 16, "no windows"},
		{flat, 0, "must be positive"},
	} {
		_, err := eval.EvaluateFlat(context.Background(), tc.data, tc.N, 3, preds3(), eval.Config{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("EvaluateFlat(len %d, N=%d): err %v, want %q", len(tc.data), tc.N, err, tc.want)
		}
	}
}

func TestValidation(t *testing.T) {
	good := markovWindows(5, 4, 8, 3)
	bad := markovWindows(5, 4, 8, 3)
	bad[2][4] = 3
	ragged := markovWindows(5, 4, 8, 3)
	ragged[3] = ragged[3][:7]
	cases := []struct {
		name    string
		windows [][]byte
		A       int
		preds   []predict.Predictor
		cfg     eval.Config
		want    string
	}{
		{"no windows", nil, 3, preds3(), eval.Config{}, "no windows"},
		{"empty window", [][]byte{{}}, 3, preds3(), eval.Config{}, "window 0 is empty"},
		{"ragged", ragged, 3, preds3(), eval.Config{}, "window 3 has length 7, want 8"},
		{"symbol", bad, 3, preds3(), eval.Config{}, "window 2 (0-based), position 5 (1-based): symbol 3"},
		{"no predictors", good, 3, nil, eval.Config{}, "no predictors"},
		{"nil predictor", good, 3, []predict.Predictor{nil}, eval.Config{}, "predictor 0 is nil"},
		{"alphabet", good, 3, []predict.Predictor{uniform{"u", 3}, uniform{"v", 4}}, eval.Config{}, `predictor 1 ("v") has alphabet size 4, want 3`},
		{"A range", good, 0, preds3(), eval.Config{}, "alphabet size 0"},
		{"duplicate", good, 3, []predict.Predictor{uniform{"u", 3}, laplace{"u", 3}}, eval.Config{}, `same name "u"`},
		{"empty name", good, 3, []predict.Predictor{uniform{"", 3}}, eval.Config{}, "empty name"},
		{"reference", good, 3, preds3(), eval.Config{Reference: "KN"}, `reference method "KN" not among`},
		{"confidence", good, 3, preds3(), eval.Config{Confidence: 1.5}, "confidence level 1.5"},
		{"infinite loss", good, 3, []predict.Predictor{certain{3}}, eval.Config{}, "probability 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := eval.Evaluate(context.Background(), tc.windows, tc.A, tc.preds, tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if res != nil {
				t.Fatal("non-nil result with error")
			}
		})
	}
}

func TestReferenceSelection(t *testing.T) {
	w := markovWindows(6, 3, 8, 3)
	for _, tc := range []struct {
		preds []predict.Predictor
		ref   string
		want  int
	}{
		{[]predict.Predictor{uniform{"a", 3}, laplace{"b", 3}}, "", 0},
		{[]predict.Predictor{uniform{"a", 3}, laplace{"CTW(D=3)", 3}}, "", 0}, // no name prefix: methods.Reference chooses by kind
		{[]predict.Predictor{uniform{"a", 3}, laplace{"CTW(D=3)", 3}}, "CTW(D=3)", 1},
		{[]predict.Predictor{uniform{"a", 3}, laplace{"CTW(D=3)", 3}}, "a", 0},
	} {
		res, err := eval.Evaluate(context.Background(), w, 3, tc.preds, eval.Config{Reference: tc.ref})
		if err != nil {
			t.Fatal(err)
		}
		if res.Reference != tc.want {
			t.Errorf("reference %d, want %d", res.Reference, tc.want)
		}
	}
}

func TestProgressAndCancel(t *testing.T) {
	windows := markovWindows(7, 100, 32, 3)
	var calls []int
	_, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{
		Workers: 3,
		Events: onProgress(func(done, total int) {
			if total != 100 {
				t.Errorf("total %d", total)
			}
			calls = append(calls, done)
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 100 {
		t.Fatalf("%d progress calls, want 100", len(calls))
	}
	for k, d := range calls {
		if d != k+1 {
			t.Fatalf("call %d reported done=%d", k, d)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	_, err = eval.Evaluate(ctx, windows, 3, preds3(), eval.Config{
		Workers: 2,
		Events:  onProgress(func(done, total int) { cancel() }),
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	_, err = eval.Evaluate(ctx, windows, 3, preds3(), eval.Config{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("pre-cancelled: err = %v", err)
	}
}

// panicky is a predictor with a bug: Predict panics (a runtime error) on
// the at-th symbol of every window.
type panicky struct{ a, at int }

type panickyState struct {
	p panicky
	n int
}

func (p panicky) Name() string                { return "panicky" }
func (p panicky) AlphabetSize() int           { return p.a }
func (p panicky) NewState() predict.State     { return &panickyState{p: p} }
func (s *panickyState) Observe(byte)          { s.n++ }
func (s *panickyState) Predict(out []float64) { panicAt(s.n == s.p.at, out, s.p.a) }

func panicAt(bug bool, out []float64, a int) {
	if bug {
		var seen map[int]bool
		seen[a] = true
	}
	fillUniform(out, a)
}

// TestPanicInPredictor: a predictor that panics on a worker goroutine
// makes Evaluate return an error with the panic's value and the worker's
// stack, for any number of workers, instead of ending the process.
func TestPanicInPredictor(t *testing.T) {
	windows := markovWindows(3, 40, 24, 3)
	preds := []predict.Predictor{uniform{"u", 3}, panicky{a: 3, at: 7}}
	for _, workers := range []int{1, 3} {
		_, err := eval.Evaluate(context.Background(), windows, 3, preds, eval.Config{Workers: workers})
		var pe *panics.Error
		if !errors.As(err, &pe) {
			t.Fatalf("%d workers: error %v, want a *panics.Error", workers, err)
		}
		for _, want := range []string{"eval: panic: assignment to entry in nil map", "eval_test.panicAt"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%d workers: the error does not say %q:\n%v", workers, want, err)
			}
		}
	}
}

func TestSingleWindowNaN(t *testing.T) {
	windows := markovWindows(8, 1, 12, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{})
	if err != nil {
		t.Fatal(err)
	}
	iv := res.Methods[0].Window
	if !math.IsNaN(iv.SD) || !math.IsNaN(iv.Lo) || math.IsNaN(iv.Mean) {
		t.Fatalf("single window interval %+v", iv)
	}
	js := encodeJSON(t, res)
	if !bytes.Contains(js, []byte(`"NaN"`)) || bytes.Contains(js, []byte("null")) {
		t.Fatal(`NaN not encoded as "NaN" (jsonfloat)`)
	}
	// files of before wrote NaN as null: they still read
	if old, err := eval.LoadJSON(bytes.NewReader(bytes.ReplaceAll(js, []byte(`"NaN"`), []byte("null")))); err != nil || !math.IsNaN(old.Methods[0].Window.Lo) {
		t.Fatalf("a file with null: %v", err)
	}
	back, err := eval.LoadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeJSON(t, back), js) {
		t.Fatal("round trip differs")
	}
	if !math.IsNaN(back.Methods[0].Window.Lo) {
		t.Fatal(`"NaN" not decoded as NaN`)
	}
	var sb strings.Builder
	if err := res.WriteSummaryTable(&sb); err != nil {
		t.Fatal(err)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	windows := markovWindows(9, 30, 20, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{
		Reference: "CTW-ish bigram", Labels: map[string]string{"dataset": "test", "seed": "9"},
	})
	if err != nil {
		t.Fatal(err)
	}
	js := encodeJSON(t, res)
	back, err := eval.LoadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if back.Labels["dataset"] != "test" || back.Reference != res.Reference || back.N != res.N {
		t.Fatalf("round trip lost fields: %+v", back)
	}
	for m := range res.Methods {
		for i := range res.N {
			if back.Methods[m].Position[i] != res.Methods[m].Position[i] || back.Methods[m].Excess[i] != res.Methods[m].Excess[i] {
				t.Fatalf("method %d position %d differs after round trip", m, i+1)
			}
		}
		if back.Methods[m].Window != res.Methods[m].Window || back.Methods[m].ExcessSecondHalf != res.Methods[m].ExcessSecondHalf {
			t.Fatal("summary differs after round trip")
		}
	}
	if !bytes.Equal(encodeJSON(t, back), js) {
		t.Fatal("re-encoded JSON differs")
	}

	for _, tc := range []struct{ doc, want string }{
		{`{"format":"other"}`, "format"},
		{`not json`, "decoding"},
		{strings.Replace(string(js), `"reference":"CTW-ish bigram"`, `"reference":"nope"`, 1), "reference"},
		{strings.Replace(string(js), `"window_length":20`, `"window_length":21`, 1), "lengths"},
	} {
		if _, err := eval.LoadJSON(strings.NewReader(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("LoadJSON(%.30q): err %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestCSV(t *testing.T) {
	windows := markovWindows(10, 12, 9, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Reference: "CTW-ish bigram"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := res.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+3*9 {
		t.Fatalf("%d rows, want %d", len(rows), 1+3*9)
	}
	if strings.Join(rows[0], ",") != strings.Join(eval.CSVHeader, ",") {
		t.Fatalf("header %v", rows[0])
	}
	col := map[string]int{}
	for k, h := range rows[0] {
		col[h] = k
	}
	for _, row := range rows[1:] {
		m := res.Method(row[col["method"]])
		if m == nil {
			t.Fatalf("unknown method %q", row[0])
		}
		pos, _ := strconv.Atoi(row[col["position"]])
		iv, ex := m.Position[pos-1], m.Excess[pos-1]
		get := func(c string) float64 {
			v, err := strconv.ParseFloat(row[col[c]], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		if get("mean_nats") != iv.Mean || get("ci_lo_nats") != iv.Lo || get("ci_hi_nats") != iv.Hi || get("sd_nats") != iv.SD {
			t.Fatalf("row %v does not match %+v", row, iv)
		}
		if math.Abs(get("mean_bits")-iv.Mean/math.Ln2) > 1e-15 {
			t.Fatalf("bits column %v", row)
		}
		if get("excess_nats") != ex.Mean || get("excess_ci_hi_nats") != ex.Hi {
			t.Fatalf("excess columns %v", row)
		}
		if row[col["reference"]] != "CTW-ish bigram" {
			t.Fatalf("reference column %q", row[col["reference"]])
		}
	}
}

func TestSummaryTable(t *testing.T) {
	windows := markovWindows(11, 25, 30, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{Reference: "CTW-ish bigram"})
	if err != nil {
		t.Fatal(err)
	}
	s := res.String()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) != 2+3 {
		t.Fatalf("table has %d lines:\n%s", len(lines), s)
	}
	for _, want := range []string{"uniform", "unigram", "CTW-ish bigram *", "(reference)", "±", "student-t, df=24", "second half (16..30)"} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
	// Columns are aligned: "±" of the window column at the same rune offset.
	col := -1
	for _, l := range lines[2:] {
		c := strings.Index(l, "±")
		c = len([]rune(l[:c]))
		if col >= 0 && c != col {
			t.Fatalf("misaligned table:\n%s", s)
		}
		col = c
	}
	var bad eval.Result
	if err := bad.WriteSummaryTable(&bytes.Buffer{}); err == nil {
		t.Fatal("empty result accepted")
	}
	if err := bad.WriteCSV(&bytes.Buffer{}); err == nil {
		t.Fatal("empty result accepted")
	}
}

func BenchmarkEvaluate(b *testing.B) {
	windows := markovWindows(12, 64, 1536, 3)
	preds := preds3()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := eval.Evaluate(context.Background(), windows, 3, preds, eval.Config{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(64*1536*len(preds))*float64(b.N)/b.Elapsed().Seconds(), "predictions/s")
}

func BenchmarkWriteJSON(b *testing.B) {
	windows := markovWindows(13, 16, 1536, 3)
	res, err := eval.Evaluate(context.Background(), windows, 3, preds3(), eval.Config{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var buf bytes.Buffer
		if err := res.WriteJSON(&buf); err != nil {
			b.Fatal(err)
		}
	}
}

// onProgress is an events.Sink that hands the progress of the windows to f.
type onProgress func(done, total int)

func (f onProgress) Progress(_ string, done, total int) { f(done, total) }
func (onProgress) Warn(string)                          {}
func (onProgress) Log(string)                           {}
