package source

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/vomc/vomc/predict"
)

func TestRNG(t *testing.T) {
	a, b := RNG(1, 2), RNG(1, 2)
	for range 10 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("RNG not reproducible")
		}
	}
	seen := map[uint64]bool{}
	for seed := range uint64(4) {
		for stream := range uint64(4) {
			v := RNG(seed, stream).Uint64()
			if seen[v] {
				t.Fatalf("RNG(%d,%d) repeats another stream", seed, stream)
			}
			seen[v] = true
		}
	}
}

// TestGenerateFlatEqualsWalk checks that the flat-table and tree-walking
// generators give identical sequences from identical random numbers.
func TestGenerateFlatEqualsWalk(t *testing.T) {
	priors := []Prior{
		PaperPrior(5),
		{A: 2, Depths: []int{8}, Lambda: 0.3, Alpha: []float64{0.5}},
		{A: 40, Depths: []int{2}, Lambda: 0.5, Alpha: []float64{0.2}}, // binary search
		{A: 3, Depths: []int{4}, Lambda: 0.3, Leaves: Sparse},
		{A: 5, Depths: []int{0}, Lambda: 0.5, Alpha: []float64{1}},
	}
	for i, p := range priors {
		for k := range 5 {
			tr := mustSample(t, p, uint64(10*i+k))
			flat, err := NewSampler(tr)
			if err != nil {
				t.Fatal(err)
			}
			walk, err := newSampler(tr, true)
			if err != nil {
				t.Fatal(err)
			}
			if !flat.Flat() || (tr.Depth() > 0 && walk.Flat()) {
				t.Fatal("sampler modes")
			}
			init := make([]byte, tr.D)
			for j := range init {
				init[j] = byte(j % tr.A)
			}
			x, err := flat.Generate(RNG(5, uint64(k)), 5000, init)
			if err != nil {
				t.Fatal(err)
			}
			y, err := walk.Generate(RNG(5, uint64(k)), 5000, init)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x, y) {
				t.Fatalf("prior %d tree %d: flat and walk generators differ", i, k)
			}
			// Every symbol had positive probability.
			ll, err := tr.LogLikelihood(x, init)
			if err != nil || math.IsInf(ll, 0) || math.IsNaN(ll) {
				t.Fatalf("log-likelihood %v, %v", ll, err)
			}
		}
	}
}

// TestGenerateFrequencies checks the empirical next-symbol frequencies after
// each leaf context of the paper's Fig. 1 tree against p_s (z-tests).
func TestGenerateFrequencies(t *testing.T) {
	tr := fig1(t)
	for _, walk := range []bool{false, true} {
		s, err := newSampler(tr, walk)
		if err != nil {
			t.Fatal(err)
		}
		const n = 300000
		x, err := s.Generate(RNG(6, 0), n, nil)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[*Node][]int{}
		hist := append([]byte{0, 0}, x...)
		for j := range x {
			leaf, err := tr.LeafFor(hist[:j+2])
			if err != nil {
				t.Fatal(err)
			}
			if counts[leaf] == nil {
				counts[leaf] = make([]int, 3)
			}
			counts[leaf][x[j]]++
		}
		if len(counts) != 5 {
			t.Fatalf("visited %d leaves", len(counts))
		}
		for leaf, c := range counts {
			m := c[0] + c[1] + c[2]
			for a := range 3 {
				p := leaf.P[a]
				se := math.Sqrt(p * (1 - p) / float64(m))
				if f := float64(c[a]) / float64(m); math.Abs(f-p) > 5*se+1e-12 {
					t.Errorf("walk=%v: leaf %v: symbol %d frequency %.4f over %d, want %.4f", walk, leaf.P, a, f, m, p)
				}
			}
		}
	}
}

func TestGenerateInit(t *testing.T) {
	tr := fig1(t)
	a, err := tr.Generate(RNG(1, 1), 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.Generate(RNG(1, 1), 100, []byte{0, 0})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tr.Generate(RNG(1, 1), 100, []byte{2, 1, 0, 0}) // longer init: only the tail matters
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) || len(a) != 100 {
		t.Error("nil init is not the dummy context of zeros")
	}
	// A deterministic tree: after (…,0) always 1, after (…,1) always 0.
	det, err := FromLeaves(2, 1, []Leaf{{[]byte{0}, []float64{0, 1}}, {[]byte{1}, []float64{1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := det.Generate(RNG(0, 0), 6, []byte{1})
	if !bytes.Equal(x, []byte{0, 1, 0, 1, 0, 1}) {
		t.Errorf("deterministic source gave %v", x)
	}
	for _, c := range []struct {
		n    int
		init []byte
		want string
	}{
		{-1, nil, "length -1"},
		{5, []byte{0}, "at least its depth 2"},
		{5, []byte{0, 3}, "symbol 3 at position 1"},
	} {
		if _, err := tr.Generate(RNG(0, 0), c.n, c.init); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%d, %v) = %v, want %q", c.n, c.init, err, c.want)
		}
	}
	s, _ := NewSampler(tr)
	if _, err := s.Generate(nil, 5, nil); err == nil {
		t.Error("nil rng accepted")
	}
	if err := s.Fill(nil, make([]byte, 3), nil); err == nil {
		t.Error("nil rng accepted by Fill")
	}
	if _, err := (&Tree{A: 2}).Generate(RNG(0, 0), 5, nil); err == nil {
		t.Error("invalid tree generated")
	}
	x, err = tr.Generate(RNG(0, 0), 0, nil)
	if err != nil || len(x) != 0 {
		t.Error("n = 0")
	}
	if s.AlphabetSize() != 3 || s.Depth() != 2 {
		t.Error("sampler accessors")
	}
}

// TestFillContinues checks that filling in two halves with the first
// half's tail as the next init gives the same as one call.
func TestFillContinues(t *testing.T) {
	tr := mustSample(t, PaperPrior(5), 77)
	s, _ := NewSampler(tr)
	whole := make([]byte, 1000)
	if err := s.Fill(RNG(3, 3), whole, nil); err != nil {
		t.Fatal(err)
	}
	rng := RNG(3, 3)
	a := make([]byte, 400)
	b := make([]byte, 600)
	s.Fill(rng, a, nil)
	s.Fill(rng, b, append(make([]byte, tr.D), a...))
	if !bytes.Equal(whole, append(a, b...)) {
		t.Error("continuing from a tail differs")
	}
}

func TestOracle(t *testing.T) {
	tr := mustSample(t, PaperPrior(4), 3)
	o, err := NewOracle(tr)
	if err != nil {
		t.Fatal(err)
	}
	if o.AlphabetSize() != 3 || !strings.HasPrefix(o.Name(), "Oracle(") {
		t.Error(o.Name())
	}
	x, _ := tr.Generate(RNG(4, 4), 3000, nil)
	loss := make([]float64, len(x))
	total, err := predict.LogLoss(o, x, loss)
	if err != nil {
		t.Fatal(err)
	}
	ll, err := tr.LogLikelihood(x, nil)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(total+ll) > 1e-9*math.Abs(ll) {
		t.Errorf("oracle log-loss %v, −log-likelihood %v", total, -ll)
	}
	if _, err := NewOracle(&Tree{}); err == nil {
		t.Error("oracle of an invalid tree")
	}
	if _, err := tr.LogLikelihood([]byte{7}, nil); err == nil {
		t.Error("bad symbol accepted")
	}
}

func benchTree(b *testing.B, p Prior, stream uint64) *Tree {
	for ; ; stream++ {
		tr, err := p.Sample(RNG(1, stream))
		if err != nil {
			b.Fatal(err)
		}
		if tr.Depth() == p.Depths[0] {
			return tr
		}
	}
}

func benchGenerate(b *testing.B, tr *Tree, walk bool) {
	s, err := newSampler(tr, walk)
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 1<<16)
	rng := RNG(1, 1)
	b.SetBytes(int64(len(dst)))
	b.ResetTimer()
	for b.Loop() {
		if err := s.Fill(rng, dst, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(dst))/b.Elapsed().Seconds()/1e6, "Msym/s")
}

// BenchmarkGenerate measures symbols per second (1 byte = 1 symbol, so MB/s
// is millions of symbols per second).
func BenchmarkGenerate(b *testing.B) {
	b.Run("paper_A3_D5_flat", func(b *testing.B) { benchGenerate(b, benchTree(b, PaperPrior(5), 0), false) })
	b.Run("paper_A3_D5_walk", func(b *testing.B) { benchGenerate(b, benchTree(b, PaperPrior(5), 0), true) })
	b.Run("A2_D20_flat", func(b *testing.B) {
		benchGenerate(b, benchTree(b, Prior{A: 2, Depths: []int{20}, Lambda: 0.2, Alpha: []float64{0.5}}, 0), false)
	})
	b.Run("A2_D40_walk", func(b *testing.B) {
		benchGenerate(b, benchTree(b, Prior{A: 2, Depths: []int{40}, Lambda: 0.3, Alpha: []float64{0.5}}, 0), false)
	})
	b.Run("A256_D1_flat", func(b *testing.B) {
		benchGenerate(b, benchTree(b, Prior{A: 256, Depths: []int{1}, Lambda: 0.1, Alpha: []float64{0.5}}, 0), false)
	})
}

// BenchmarkSample measures drawing a tree from the paper's prior (A=3,
// D=5, λ=0.15, α=0.5).
func BenchmarkSample(b *testing.B) {
	p := PaperPrior(5)
	rng := RNG(1, 1)
	for b.Loop() {
		if _, err := p.Sample(rng); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGuidedSearch checks the guide-table search against a plain scan of
// the CDF, including u at and next to the guide boundaries j/A.
func TestGuidedSearch(t *testing.T) {
	for _, p := range []Prior{
		{A: 17, Depths: []int{1}, Lambda: 0.5, Alpha: []float64{0.05}},
		{A: 255, Depths: []int{1}, Lambda: 0.5, Leaves: Sparse, SparseZero: 0.9},
		{A: 256, Depths: []int{0}, Lambda: 0.5, Alpha: []float64{1}},
	} {
		for k := range 5 {
			tr := mustSample(t, p, uint64(k))
			s, err := NewSampler(tr)
			if err != nil {
				t.Fatal(err)
			}
			rng := RNG(9, uint64(k))
			fA := float64(p.A)
			for off := 0; off < len(s.cdf); off += p.A {
				c := s.cdf[off : off+p.A]
				var us []float64
				for j := range p.A {
					b := float64(j) / fA
					us = append(us, b, math.Nextafter(b, 0), math.Nextafter(b, 1))
				}
				for _, v := range c {
					us = append(us, v, math.Nextafter(v, 0))
				}
				for range 200 {
					us = append(us, rng.Float64())
				}
				us = append(us, math.Nextafter(1, 0))
				for _, u := range us {
					if u < 0 || u >= 1 {
						continue
					}
					want := 0
					for u >= c[want] {
						want++
					}
					if got := s.guided(off, u, fA); got != want {
						t.Fatalf("A=%d u=%v: guided search %d, scan %d", p.A, u, got, want)
					}
				}
			}
		}
	}
}
