package compress

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/vomc/vomc/ppm"
	"github.com/vomc/vomc/predict"
)

func sampleText(t *testing.T) []byte {
	if x, err := os.ReadFile(corpusDir + "/calgary/paper2"); err == nil {
		return x[:40000]
	}
	// Without the corpus: 40 kB of words drawn at random (seeded) from a
	// vocabulary of 400 random words, so that the text is text-like: neither
	// trivial nor incompressible.
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 400)
	for i := range words {
		w := make([]byte, 2+rng.IntN(8))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(w)
	}
	var b bytes.Buffer
	for b.Len() < 40000 {
		b.WriteString(words[rng.IntN(len(words))])
		if rng.IntN(9) == 0 {
			b.WriteString(", ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:40000]
}

// The predictor's probabilities are the coder's: −Σ log2 p equals the
// compressed payload up to the coder's overhead.
func TestPPMPredictorMatchesCoder(t *testing.T) {
	x := sampleText(t)
	for _, meth := range []ppm.Method{ppm.MethodC, ppm.MethodD} {
		c := PPMConfig{Order: 4, Method: meth, MemMB: 64}
		pred, err := PPMPredictor(c)
		if err != nil {
			t.Fatal(err)
		}
		st := pred.NewState()
		p := make([]float64, 256)
		bits := 0.0
		for i, s := range x {
			st.Predict(p)
			sum := 0.0
			for _, v := range p {
				sum += v
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("position %d: probabilities sum to %v", i, sum)
			}
			bits += -math.Log2(p[s])
			st.Observe(s)
		}
		m, _ := PPM(c)
		z, err := EncodeBytes(x, m)
		if err != nil {
			t.Fatal(err)
		}
		payload := float64(8 * (len(z) - 20 - 3 - 4))
		if payload < bits-8 || payload > bits*1.002+64 {
			t.Fatalf("%v: coder %0.f bits, predictor %.0f bits", meth, payload, bits)
		}
	}
}

func TestHalfLogLoss(t *testing.T) {
	x := sampleText(t)
	pred, _ := PPMPredictor(PPMConfig{Order: 3, Method: ppm.MethodD, MemMB: 64})
	frozenBits, frozen, err := HalfLogLoss(pred, x)
	if err != nil || !frozen {
		t.Fatalf("frozen=%v err=%v", frozen, err)
	}
	p3, _ := ppm.New(256, 3, ppm.Options{Method: ppm.MethodD, Exclusion: true, UpdateExclusion: true})
	learnBits, frozen2, err := HalfLogLoss(unfreezable{p3}, x)
	if err != nil || frozen2 {
		t.Fatalf("frozen=%v err=%v", frozen2, err)
	}
	t.Logf("frozen %.4f bits/symbol, learning %.4f bits/symbol", frozenBits, learnBits)
	if !(frozenBits > 1 && frozenBits < 6) || !(learnBits > 1 && learnBits < 6) {
		t.Fatalf("implausible losses %v %v", frozenBits, learnBits)
	}
	// Frozen on the second half cannot be better than learning through it
	// by much on homogeneous text; mostly it is worse.
	if frozenBits < learnBits-0.5 {
		t.Fatalf("frozen %.3f much better than learning %.3f", frozenBits, learnBits)
	}
	if _, _, err := HalfLogLoss(pred, []byte{1}); err == nil {
		t.Fatal("1 symbol: no error")
	}
}

// unfreezable hides the Freeze method of a predictor's states, so that
// HalfLogLoss must let them keep learning.
type unfreezable struct{ predict.Predictor }

type learningState struct{ predict.State }

func (u unfreezable) NewState() predict.State { return learningState{u.Predictor.NewState()} }
