package ctw

import (
	"math/rand/v2"
	"testing"
)

// benchData is 1e6 symbols of an A=3 order-2 chain (the `vomc bench` size).
func benchData(b *testing.B) []byte {
	b.Helper()
	return randomSeq(rand.New(rand.NewPCG(11, 11)), 3, 1_000_000)
}

var benchCfg = Config{A: 3, D: 5, Lambda: 0.15, Alpha: 0.5}

// BenchmarkCountsOnly is the floor: one counting pass over 1e6 symbols.
func BenchmarkCountsOnly(b *testing.B) {
	x := benchData(b)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if _, err := CountSequence(benchCfg, x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLogML is the log marginal likelihood of 1e6 symbols (A=3, D=5).
func BenchmarkLogML(b *testing.B) {
	x := benchData(b)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if _, err := LogMarginalLikelihood(benchCfg, x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSequential computes the full predictive distribution at every one
// of 1e6 positions with the fast blend form (bytes/s = symbols/s).
func BenchmarkSequential(b *testing.B) {
	x := benchData(b)
	p := make([]float64, 3)
	pr, _ := New(benchCfg)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		st := pr.NewCTWState()
		for _, a := range x {
			st.Predict(p)
			st.Observe(a)
		}
	}
}

// BenchmarkSequentialTheorem1 is the same with the literal log-domain form.
func BenchmarkSequentialTheorem1(b *testing.B) {
	x := benchData(b)[:200_000]
	p := make([]float64, 3)
	c := benchCfg
	c.Form = Theorem1
	pr, _ := New(c)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		st := pr.NewCTWState()
		for _, a := range x {
			st.Predict(p)
			st.Observe(a)
		}
	}
}

// BenchmarkCountsTrie counts 200 kB of word-like bytes at A=256, D=8: a trie
// (hash-map children), sized by its shape-only first pass.
func BenchmarkCountsTrie(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"the ", "context ", "tree ", "weighting ", "method ", "of ", "a ", "source ", "is ", "optimal.\n"}
	var x []byte
	for len(x) < 200_000 {
		x = append(x, words[rng.IntN(len(words))]...)
	}
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if _, err := CountSequence(Config{A: 256, D: 8, Lambda: 0.5, Alpha: 0.5, Init: Condition}, x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCountsTrieSmallA counts 1e6 symbols at A=3, D=16: a trie with
// inline child tables (too deep for the dense layout).
func BenchmarkCountsTrieSmallA(b *testing.B) {
	x := benchData(b)
	b.SetBytes(int64(len(x)))
	for b.Loop() {
		if _, err := CountSequence(Config{A: 3, D: 16, Lambda: 0.15, Alpha: 0.5}, x); err != nil {
			b.Fatal(err)
		}
	}
}
