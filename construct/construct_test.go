package construct

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/source"
)

// iid returns n uniform symbols.
func iid(rng *rand.Rand, A, n int) []byte {
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(rng.IntN(A))
	}
	return x
}

// fromTree returns n symbols of a context tree drawn from π_CTW(D, λ, α)
// (the sources CTW is Bayes-optimal for), from the dummy context 0^D.
func fromTree(t testing.TB, rng *rand.Rand, A, D, n int, lambda, alpha float64, sparse bool) []byte {
	t.Helper()
	pr := source.Prior{A: A, Depths: []int{D}, Lambda: lambda, Alpha: []float64{alpha}, Leaves: source.Dirichlet}
	if sparse {
		pr.Leaves = source.Sparse
	}
	tree, err := pr.Sample(rng)
	if err != nil {
		t.Fatal(err)
	}
	x, err := tree.Generate(rng, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestHardLimitMatchesCTW is the main claim: in the hard-attention limit
// the construction's output equals CTW's predictive distribution at every
// position — the first D+1 positions (dummy context), positions whose
// suffixes were never seen, and the prediction after the last symbol.
func TestHardLimitMatchesCTW(t *testing.T) {
	t.Parallel()
	priors := []struct{ lambda, alpha float64 }{{0.15, 0.5}, {0.6, 1}, {0.05, 0.2}}
	worst := 0.0
	for D := 1; D <= 5; D++ {
		for A := 2; A <= 4; A++ {
			rng := rand.New(rand.NewPCG(uint64(10*D+A), 7))
			pr := priors[(D+A)%len(priors)]
			cfg := Config{A: A, D: D, Lambda: pr.lambda, Alpha: pr.alpha}
			seqs := map[string][]byte{
				"iid":    iid(rng, A, 150),
				"tree":   fromTree(t, rng, A, D, 150, 0.15, 0.5, false),
				"sparse": fromTree(t, rng, A, D, 150, 0.15, 0.5, true),
				"short":  iid(rng, A, D),
				"empty":  nil,
			}
			for name, x := range seqs {
				e, err := MaxError(cfg, x)
				if err != nil {
					t.Fatal(err)
				}
				worst = max(worst, e)
				if !(e <= 1e-9) {
					t.Errorf("D=%d A=%d λ=%g α=%g %s: max |P_TF − P_CTW| = %.3g", D, A, pr.lambda, pr.alpha, name, e)
				}
			}
		}
	}
	t.Logf("max error over all cases: %.3g", worst)
}

// TestCountsRecovered checks layer 2 against brute-force counting: the
// path-node counts n_{i,s_{i,l}} (the paper's recovery n = i·g·Πg←,
// including never-seen suffixes, whose g is arbitrary) and the added
// context-node counts.
func TestCountsRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, A := range []int{2, 3} {
		D := 3
		x := iid(rng, A, 80)
		c, err := Build(Config{A: A, D: D, Lambda: 0.15, Alpha: 0.5, N: len(x) + D + 1})
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := c.Run(x, true)
		y := append(make([]byte, D), x...) // padded: y[k] = x_{k−D+1}
		for j := 0; j <= len(x); j++ {
			h3 := tr.Stages[D+j].H[2]
			for l := 0; l <= D; l++ {
				want := make([]float64, A)
				wantCtx := make([]float64, A)
				for k := D; k < D+j; k++ { // symbol y[k] = x_{k−D+1}, counted at time j
					match, matchCtx := true, true
					for r := 1; r <= l; r++ {
						if y[k-r] != y[D+j-r] {
							match = false
						}
						if y[k-r] != y[D+j-1-r] {
							matchCtx = false
						}
					}
					if match {
						want[y[k]]++
					}
					if matchCtx && j > 0 {
						wantCtx[y[k]]++
					}
				}
				for a := 0; a < A; a++ {
					if got := c.Layout.Sub(h3, "n", l)[a]; math.Abs(got-want[a]) > 1e-9 {
						t.Fatalf("A=%d j=%d l=%d: n(%d) = %v, want %v", A, j, l, a, got, want[a])
					}
					if got := c.Layout.Sub(h3, "n_ctx", l)[a]; math.Abs(got-wantCtx[a]) > 1e-9 {
						t.Fatalf("A=%d j=%d l=%d: n~(%d) = %v, want %v", A, j, l, a, got, wantCtx[a])
					}
				}
			}
		}
	}
}

// TestLiteralInductionIsInexact documents the paper's bug: copying ℓ^w of
// the latest position whose own suffix matches misses the symbol that
// followed that occurrence, so the literal layers deviate from CTW.
func TestLiteralInductionIsInexact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	x := iid(rng, 3, 100)
	cfg := Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, LiteralInduction: true}
	e, err := MaxError(cfg, x)
	if err != nil {
		t.Fatal(err)
	}
	if e < 1e-2 {
		t.Errorf("literal induction: max error %.3g, expected a visible deviation", e)
	}
	t.Logf("literal induction max error: %.3g", e)
}

// TestErrorDecreasesWithC: with finite temperature c the error falls to the
// hard-limit level as c grows.
func TestErrorDecreasesWithC(t *testing.T) {
	x := []byte{0, 1, 2, 0, 1, 1, 2}
	cfg := Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5}
	cs := LogSpace(1, 1e4, 17)
	errs, err := ErrorVsC(cfg, x, cs)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(cs); k++ {
		if errs[k] > errs[k-1]+1e-15 {
			t.Errorf("error rose from %.3g at c=%.3g to %.3g at c=%.3g", errs[k-1], cs[k-1], errs[k], cs[k])
		}
	}
	if errs[0] < 1e-2 || errs[len(errs)-1] > 1e-12 {
		t.Errorf("error %.3g at c=1, %.3g at c=1e4: want large, then ≤ 1e-12", errs[0], errs[len(errs)-1])
	}
	// A longer random sequence: once c is large against N² (the positional
	// gap is cπ²/(2N²)) the error falls monotonically to rounding level.
	rng := rand.New(rand.NewPCG(1, 2))
	y := iid(rng, 3, 40)
	cfg.D = 3 // N = 44
	cs = LogSpace(3e3, 3e4, 6)
	errs, err = ErrorVsC(cfg, y, cs)
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(cs); k++ {
		if errs[k] > errs[k-1]+1e-15 {
			t.Errorf("n=40: error rose from %.3g at c=%.3g to %.3g at c=%.3g", errs[k-1], cs[k-1], errs[k], cs[k])
		}
	}
	if errs[len(errs)-1] > 1e-9 {
		t.Errorf("n=40: error %.3g at c=%.3g", errs[len(errs)-1], cs[len(cs)-1])
	}
	t.Logf("n=40 errors %v", errs)
}

// TestPredictorLogLoss runs the construction through vomc's harness
// (predict.LogLoss) beside CTW: the per-symbol losses coincide.
func TestPredictorLogLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 1))
	cfg := Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5}
	x := fromTree(t, rng, 3, 3, 400, 0.15, 0.5, false)
	tf, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tf.Name() != "TF-construct(D=3)" {
		t.Errorf("name %q", tf.Name())
	}
	cp, _ := New(Config{A: 3, D: 3, Lambda: 0.15, Alpha: 0.5, C: 50})
	if cp.Name() != "TF-construct(D=3,c=50)" {
		t.Errorf("name %q", cp.Name())
	}
	ref, err := ctwPredictor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l1, l2 := make([]float64, len(x)), make([]float64, len(x))
	tot1, err := predict.LogLoss(tf, x, l1)
	if err != nil {
		t.Fatal(err)
	}
	tot2, err := predict.LogLoss(ref, x, l2)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(tot1-tot2) > 1e-9 {
		t.Errorf("total log-loss %v (TF) vs %v (CTW)", tot1, tot2)
	}
	for i := range l1 {
		if math.Abs(l1[i]-l2[i]) > 1e-9 {
			t.Fatalf("position %d: loss %v vs %v", i, l1[i], l2[i])
		}
	}
	t.Logf("log-loss TF %.9f CTW %.9f nats", tot1, tot2)
}

func ctwPredictor(cfg Config) (predict.Predictor, error) {
	return ctw.New(cfg.CTWConfig())
}

// TestStateMatchesSequence: the sequential State (key/value cache, model
// rebuilt when the sequence outgrows the positional period) gives the same
// distributions as PredictSequence.
func TestStateMatchesSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 9))
	x := iid(rng, 3, 90) // outgrows the initial period 64
	p, _ := New(Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5})
	seq := make([]float64, len(x)*3)
	if err := predict.Sequence(p, x, seq); err != nil {
		t.Fatal(err)
	}
	st := p.NewState()
	d := make([]float64, 3)
	for i, s := range x {
		st.Predict(d)
		for a := range d {
			if math.Abs(d[a]-seq[i*3+a]) > 1e-12 {
				t.Fatalf("position %d: state %v, sequence %v", i, d, seq[i*3:i*3+3])
			}
		}
		st.Observe(s)
	}
}

// TestFeatures checks the Fig. 8 feature variants against the layout and
// brute-force statistics.
func TestFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	A, D := 3, 2
	x := iid(rng, A, 30)
	c, err := Build(Config{A: A, D: D, Lambda: 0.15, Alpha: 0.5, N: 64})
	if err != nil {
		t.Fatal(err)
	}
	wantDim := map[Variant]int{TF20: 3*(D+1)*A + 3, WithoutCounts: 2 * (D + 1) * A,
		TotalCountsOnly: 2*(D+1)*A + 1, WithAllCounts: 3*(D+1)*A + 1}
	for v, dim := range wantDim {
		pv, err := ParseVariant(v.String())
		if err != nil || pv != v {
			t.Fatalf("ParseVariant(%q) = %v, %v", v.String(), pv, err)
		}
		rows, err := c.Features(x, v)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(x) || len(rows[0]) != dim || len(c.FeatureNames(v)) != dim {
			t.Fatalf("%v: %d rows of %d (names %d), want %d of %d", v, len(rows), len(rows[0]), len(c.FeatureNames(v)), len(x), dim)
		}
		for j, r := range rows {
			// g_{i,()} is the empirical distribution of x_1..x_j.
			for a := 0; a < A && j > 0; a++ {
				k := 0
				for _, s := range x[:j] {
					if int(s) == a {
						k++
					}
				}
				if got := r[(D+1)*A+a]; math.Abs(got-float64(k)/float64(j)) > 1e-12 {
					t.Fatalf("%v row %d: g_()(%d) = %v, want %v", v, j, a, got, float64(k)/float64(j))
				}
			}
			if v == TotalCountsOnly || v == WithAllCounts {
				if r[len(r)-1] != float64(j) {
					t.Fatalf("%v row %d: count %v", v, j, r[len(r)-1])
				}
			}
			if v == WithAllCounts {
				sum := 0.0
				for _, n := range r[2*(D+1)*A : 2*(D+1)*A+A] {
					sum += n
				}
				if math.Abs(sum-float64(j)) > 1e-9 {
					t.Fatalf("row %d: root counts sum to %v", j, sum)
				}
			}
		}
	}
	if _, err := ParseVariant("nonsense"); err == nil {
		t.Error("ParseVariant accepted nonsense")
	}
}

// TestSafetensors writes the weights and reads them back.
func TestSafetensors(t *testing.T) {
	c, err := Build(Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, N: 16})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := c.WriteSafetensors(&buf); err != nil {
		t.Fatal(err)
	}
	hl := int(buf.Bytes()[0]) | int(buf.Bytes()[1])<<8
	if (hl % 8) != 0 {
		t.Errorf("header length %d not a multiple of 8", hl)
	}
	ts, meta, err := ReadSafetensorsTensors(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(meta["config"], `"D":2`) || meta["hard"] != "true" {
		t.Errorf("metadata %v", meta)
	}
	want := c.Tensors()
	if len(ts) != len(want) {
		t.Fatalf("%d tensors, want %d", len(ts), len(want))
	}
	for _, w := range want {
		got := ts[w.Name]
		if got == nil || got.Rows != w.Mat.Rows || got.Cols != w.Mat.Cols {
			t.Fatalf("tensor %s missing or misshaped", w.Name)
		}
		for i := range got.Data {
			if got.Data[i] != w.Mat.Data[i] {
				t.Fatalf("tensor %s differs at %d", w.Name, i)
			}
		}
	}
	// Layer 1 head 1 is Rot(1): its query maps (cos, sin) of pos_i to pos_{i−1}.
	q := ts["layers.1.heads.1.W_Q"]
	pb := c.Layout.Block("pos").Offset
	if math.Abs(q.At(1, pb+1)-math.Cos(math.Pi/16)) > 1e-15 || math.Abs(q.At(2, pb+1)+math.Sin(math.Pi/16)) > 1e-15 {
		t.Errorf("layer 1 head 1 W_Q is not Rot(1)")
	}
}

func TestValidate(t *testing.T) {
	bad := []Config{
		{A: 1, D: 2, Lambda: 0.15, Alpha: 0.5},
		{A: 3, D: 0, Lambda: 0.15, Alpha: 0.5},
		{A: 3, D: 2, Lambda: 1, Alpha: 0.5},
		{A: 3, D: 2, Lambda: 0.15, Alpha: 0},
		{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, C: -1},
	}
	for _, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	c, _ := Build(Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, N: 8})
	if _, err := c.Run(make([]byte, 10), false); err == nil {
		t.Error("Run accepted more positions than N")
	}
	if _, err := c.Run([]byte{3}, false); err == nil {
		t.Error("Run accepted symbol 3 with A=3")
	}
}

// TestTraceAndSummary exercises the printers used by `vomc construct --show`.
func TestTraceAndSummary(t *testing.T) {
	x := []byte{0, 1, 2, 0, 1, 1, 2}
	c, err := Build(Config{A: 3, D: 2, Lambda: 0.15, Alpha: 0.5, N: 10})
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := c.Run(x, true)
	var sb strings.Builder
	if err := c.WriteSummary(&sb); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteTrace(&sb, x, tr); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"lw_ctx", "layer 3", "δ_{i,1}", "ω_CTW", "←BOS", "n=[2 1 1]"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
	if err := c.WriteTrace(&sb, x, &Trace{}); err == nil {
		t.Error("WriteTrace accepted a trace without stages")
	}
}
