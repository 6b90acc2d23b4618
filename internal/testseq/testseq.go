// Package testseq provides the test sequences and benchmark driver shared by
// the tests of the sequence predictors (kn, markov, ppm). It is an ordinary
// (non-test) package so that the tests of several packages can import it.
package testseq

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/vomc/vomc/predict"
)

// FixedOrderSource draws n symbols from a random order-d Markov chain over
// 0..A−1 whose transition rows are Dirichlet(1) draws; the chain starts from
// the zero-padded context 0^d. Deterministic in seed.
func FixedOrderSource(A, d, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	nctx := 1
	for i := 0; i < d; i++ {
		nctx *= A
	}
	rows := make([]float64, nctx*A)
	for c := 0; c < nctx; c++ {
		row := rows[c*A : (c+1)*A]
		sum := 0.0
		for a := range row {
			row[a] = r.ExpFloat64()
			sum += row[a]
		}
		for a := range row {
			row[a] /= sum
		}
	}
	x := make([]byte, n)
	id := 0
	for i := range x {
		row := rows[id*A : (id+1)*A]
		u := r.Float64()
		a := 0
		for a < A-1 && u >= row[a] {
			u -= row[a]
			a++
		}
		x[i] = byte(a)
		if nctx > 1 {
			id = (id*A + a) % nctx
		}
	}
	return x
}

// TextStream returns n bytes of English text: the start of the Calgary
// corpus's book1 when the shared data is present, otherwise a deterministic
// synthetic word stream. The corpus path is relative to the working
// directory of the test, which is the directory of a top-level package such
// as kn (../../shared/data/corpus/calgary/book1).
func TextStream(n int) []byte {
	if b, err := os.ReadFile("../../shared/data/corpus/calgary/book1"); err == nil && len(b) >= n {
		return b[:n]
	}
	words := []string{"the", "of", "and", "to", "a", "in", "that", "is", "was", "he",
		"for", "it", "with", "as", "his", "on", "be", "at", "by", "had", "markov",
		"context", "tree", "weighting", "prediction", "partial", "matching", "order"}
	r := rand.New(rand.NewPCG(7, 11))
	out := make([]byte, 0, n+16)
	for len(out) < n {
		w := words[r.IntN(len(words))]
		if r.IntN(12) == 0 {
			out = append(out, byte('A'+r.IntN(26)))
		}
		out = append(out, w...)
		switch r.IntN(10) {
		case 0:
			out = append(out, ", "...)
		case 1:
			out = append(out, ".\n"...)
		default:
			out = append(out, ' ')
		}
	}
	return out[:n]
}

// BenchSequence runs p over x once per benchmark iteration and reports the
// cost per symbol (one Predict and one Observe) as the metric "ns/symbol".
func BenchSequence(b *testing.B, p predict.Predictor, x []byte) {
	dist := make([]float64, p.AlphabetSize())
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st := p.NewState()
		for _, s := range x {
			st.Predict(dist)
			st.Observe(s)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/symbol")
}

// AlmostEqual reports whether |a − b| ≤ tol.
func AlmostEqual(a, b, tol float64) bool { return math.Abs(a-b) <= tol }
