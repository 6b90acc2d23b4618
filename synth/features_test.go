package synth

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/construct"
)

// TestFeaturesMatchConstruction compares the counted features with the
// construction's layer-2 output (hard limit) for all four variants, on
// random, highly repetitive and very short sequences, including row 0 and
// unseen suffixes.
func TestFeaturesMatchConstruction(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for D := 1; D <= 4; D++ {
		for A := 2; A <= 4; A++ {
			N := 64
			c, err := construct.Build(construct.Config{A: A, D: D, Lambda: 0.15, Alpha: 0.5, N: N})
			if err != nil {
				t.Fatal(err)
			}
			var seqs [][]byte
			for _, n := range []int{0, 1, 2, D, D + 1, 20, 45} {
				x := make([]byte, n)
				for i := range x {
					x[i] = byte(rng.IntN(A))
				}
				seqs = append(seqs, x)
			}
			// few distinct symbols: many unseen suffixes and partial ties
			x := make([]byte, 40)
			for i := range x {
				if rng.IntN(5) == 0 {
					x[i] = byte(rng.IntN(A))
				}
			}
			seqs = append(seqs, x)
			for v := TF20; v <= WithAllCounts; v++ {
				e, err := NewExtractor(A, D, N, v)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := e.Dim(), len(c.FeatureNames(v)); got != want {
					t.Fatalf("A=%d D=%d %v: Dim %d, construction has %d features", A, D, v, got, want)
				}
				for _, x := range seqs {
					want, err := c.Features(x, v)
					if err != nil {
						t.Fatal(err)
					}
					got, err := e.Features(x)
					if err != nil {
						t.Fatal(err)
					}
					if len(got) != len(want) {
						t.Fatalf("A=%d D=%d %v n=%d: %d rows, want %d", A, D, v, len(x), len(got), len(want))
					}
					names := c.FeatureNames(v)
					for j := range want {
						for k := range want[j] {
							d := math.Abs(got[j][k] - want[j][k])
							worst = max(worst, d)
							if d > 1e-12 {
								t.Fatalf("A=%d D=%d %v x=%v row %d %s: got %v, construction %v", A, D, v, x, j, names[k], got[j][k], want[j][k])
							}
						}
					}
				}
			}
		}
	}
	t.Logf("max |Δ| = %.3g", worst)
}

func TestParseVariant(t *testing.T) {
	for v := TF20; v <= WithAllCounts; v++ {
		got, err := ParseVariant(ShortName(v))
		if err != nil || got != v {
			t.Errorf("ParseVariant(%q) = %v, %v", ShortName(v), got, err)
		}
		if got, err := ParseVariant(Label(v)); err != nil || got != v {
			t.Errorf("ParseVariant(%q) = %v, %v", Label(v), got, err)
		}
	}
	if _, err := ParseVariant("bogus"); err == nil {
		t.Error("ParseVariant accepted bogus")
	}
}

// TestExtractorCounts checks Counts against the counts block of
// WithAllCounts's Row at every position of random sequences, from an
// extractor of another variant.
func TestExtractorCounts(t *testing.T) {
	for _, tc := range []struct{ A, D int }{{2, 1}, {3, 3}, {4, 2}} {
		rng := rand.New(rand.NewPCG(uint64(tc.A), uint64(tc.D)))
		all, err := NewExtractor(tc.A, tc.D, 200, WithAllCounts)
		if err != nil {
			t.Fatal(err)
		}
		other, err := NewExtractor(tc.A, tc.D, 200, TF20)
		if err != nil {
			t.Fatal(err)
		}
		lo, _ := CountColumns(tc.A, tc.D, WithAllCounts)
		row, got := make([]float64, all.Dim()), make([]float64, tc.A)
		for j := range 150 {
			s := byte(rng.IntN(tc.A))
			if j%3 == 0 {
				s = 0 // repeats, so that long suffixes recur
			}
			all.Push(s)
			other.Push(s)
			all.Row(row)
			for l := 0; l <= tc.D; l++ {
				other.Counts(l, got)
				for a := range tc.A {
					if want := row[lo+l*tc.A+a]; got[a] != want {
						t.Fatalf("A=%d D=%d j=%d l=%d a=%d: Counts %g, Row %g", tc.A, tc.D, j+1, l, a, got[a], want)
					}
				}
			}
		}
	}
}
