package synth

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestEncodingFeatures checks the features and model inputs of the Log and
// Linear encodings against the Paper encoding: TF 2-0's s, g, g← are
// unchanged and its position block is (1, j) → (1, ln(1+j)) or
// (1, j/Context), exactly the total-count input of "total counts only";
// the other variants' inputs equal Paper's with CountNorm log1p (Log) or
// scale (Linear).
func TestEncodingFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const A, D, C = 3, 2, 20
	x := randSeq(rng, 19, A)
	inputs := func(v Variant, enc, norm string) [][]float32 {
		m, err := NewOn(cpu.NewDefault(), Config{Variant: v, A: A, D: D, Context: C, Encoding: enc, CountNorm: norm}, 1)
		if err != nil {
			t.Fatal(err)
		}
		return refFeatures(m, x)
	}
	for _, enc := range []string{Log, Linear} {
		norm := map[string]string{Log: Log1p, Linear: Scale}[enc]
		e, err := NewExtractorEnc(A, D, 64, TF20, enc)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewExtractor(A, D, 64, TF20)
		if err != nil {
			t.Fatal(err)
		}
		if e.Dim() != p.Dim()-1 || e.Dim() != DimEnc(A, D, TF20, enc) {
			t.Fatalf("%s: Dim %d, paper %d", enc, e.Dim(), p.Dim())
		}
		got, _ := e.Features(x)
		want, _ := p.Features(x)
		n := e.Dim()
		for j := range got {
			for k := 0; k < n-2; k++ {
				if got[j][k] != want[j][k] {
					t.Fatalf("%s row %d column %d: %v, paper %v", enc, j, k, got[j][k], want[j][k])
				}
			}
			if got[j][n-2] != 1 || got[j][n-1] != float64(j) {
				t.Fatalf("%s row %d: position block %v, want (1, %d)", enc, j, got[j][n-2:], j)
			}
		}
		tf, tot := inputs(TF20, enc, ""), inputs(TotalCountsOnly, enc, "")
		for j := range tf {
			// refFeatures' row j is after j+1 symbols
			wantPos := math.Log1p(float64(j + 1))
			if enc == Linear {
				wantPos = float64(j+1) / C
			}
			if last := tf[j][len(tf[j])-1]; last != float32(wantPos) || last != tot[j][len(tot[j])-1] {
				t.Fatalf("%s row %d: TF 2-0 position input %v, want %v = total count input %v", enc, j, last, wantPos, tot[j][len(tot[j])-1])
			}
		}
		for _, v := range []Variant{WithoutCounts, TotalCountsOnly, WithAllCounts} {
			a, b := inputs(v, enc, ""), inputs(v, Paper, norm)
			for j := range a {
				for k := range a[j] {
					if a[j][k] != b[j][k] {
						t.Fatalf("%s %v row %d column %d: %v, paper/%s %v", enc, v, j, k, a[j][k], norm, b[j][k])
					}
				}
			}
		}
	}
	if _, err := NewExtractorEnc(A, D, 64, TF20, "cubic"); err == nil {
		t.Error("NewExtractorEnc accepted encoding cubic")
	}
	for _, c := range []Config{
		{Variant: TF20, A: A, D: D, Context: C, Encoding: Log, CountNorm: Scale},
		{Variant: WithAllCounts, A: A, D: D, Context: C, Encoding: Linear, CountNorm: Log1p},
		{Variant: TF20, A: A, D: D, Context: C, Encoding: "cubic"},
	} {
		if _, err := NewOn(cpu.NewDefault(), c, 1); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
}

// TestEncodingGradients runs the gradient and prediction checks of
// TestGradients / TestPredictionsMatchReference on models with the Log and
// Linear encodings (the count columns include TF 2-0's position there).
func TestEncodingGradients(t *testing.T) {
	saved := gradCases
	defer func() { gradCases, gradEnc = saved, nil }()
	gradCases = gradCases[:0:0]
	gradEnc = nil
	for _, c := range []struct {
		v     Variant
		embed int
		act   string
		enc   string
	}{{TF20, 0, GELU, Log}, {TF20, 4, ReLU, Linear}, {WithAllCounts, 0, GELU, Linear}, {TotalCountsOnly, 3, ReLU, Log}} {
		gradCases = append(gradCases, struct {
			v     Variant
			embed int
			act   string
		}{c.v, c.embed, c.act})
		gradEnc = append(gradEnc, c.enc)
	}
	t.Run("gradients", TestGradients)
	t.Run("predictions", TestPredictionsMatchReference)
}

// TestEncodingTrainDeterministic trains TF 2-0 under Log and Linear with
// GOMAXPROCS 1 and 3 (bit-identical), checks that it learns and that the
// file records the encoding (and reads it back), and that Paper is not
// written (files as before the encodings).
func TestEncodingTrainDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	train, val := order1(rng, 120, 32), order1(rng, 20, 32)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.LR, tc.LogEvery = 16, 5, 10, 1e-2, 5
	for _, enc := range []string{Log, Linear} {
		cfg := Config{Variant: TF20, A: 3, D: 2, Encoding: enc}
		m1 := trainOnProcs1And3(t, enc+": ", cfg, train, val, tc)
		if v := m1.Evaluate(val); !(v < 0.95) {
			t.Errorf("%s: validation loss %v, want < 0.95", enc, v)
		}
		if !strings.Contains(m1.Config.fileJSON(), `"encoding":"`+enc+`"`) {
			t.Errorf("%s: file config %s lacks the encoding", enc, m1.Config.fileJSON())
		}
		var buf bytes.Buffer
		if err := m1.Write(&buf); err != nil {
			t.Fatal(err)
		}
		m3, err := ReadOn(cpu.NewDefault(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		if m3.Config != m1.Config || m3.Config.Encoding != enc {
			t.Fatalf("%s: round trip config %+v, want %+v", enc, m3.Config, m1.Config)
		}
		sameParams(t, enc+": round trip", m1.HostParams(), m3.HostParams())
	}
	p := Config{Variant: TF20, A: 3, D: 2, Context: 16}.withDefaults()
	former := `{"variant":"tf20","alphabet":3,"D":2,"context":16,"pos_period":64,"embed":0,"hidden":` +
		strconv.Itoa(p.Hidden) + `,"activation":"gelu","count_norm":"log1p"}`
	if p.Encoding != Paper || p.fileJSON() != former {
		t.Errorf("paper config %+v: file config %s, want the former %s", p, p.fileJSON(), former)
	}
}
