package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestAdd checks every usable set's Add on every length up to 200 (all
// tails of the vector loop), in place and not, and AddRows against a
// plain loop.
func TestAdd(t *testing.T) {
	for _, ks := range Usable() {
		t.Run(ks.Name(), func(t *testing.T) { testAdd(t, ks) })
	}
}

func testAdd(t *testing.T, ks *Set) {
	r := rand.New(rand.NewPCG(6, 6))
	for n := 0; n <= 200; n++ {
		a, b := randSlice(r, n+1), randSlice(r, n+1)
		dst := make([]float32, n+1)
		dst[n] = 5
		ks.Add(dst, a[:n], b)
		for i := 0; i < n; i++ {
			if dst[i] != a[i]+b[i] {
				t.Fatalf("n=%d: dst[%d] = %v, want %v", n, i, dst[i], a[i]+b[i])
			}
		}
		if dst[n] != 5 {
			t.Fatalf("n=%d: wrote past the end", n)
		}
		want := make([]float32, n)
		for i := range want {
			want[i] = a[i] + b[i]
		}
		ks.Add(a, a[:n], b)
		for i := range want {
			if a[i] != want[i] {
				t.Fatalf("n=%d in place: a[%d] = %v, want %v", n, i, a[i], want[i])
			}
		}
	}
	m := randSlice(r, 7*40)
	dst := randSlice(r, 33)
	want := append([]float32(nil), dst...)
	for row := 0; row < 7; row++ {
		for j := 0; j < 33; j++ {
			want[j] += m[row*40+j]
		}
	}
	ks.AddRows(dst, m, 7, 33, 40)
	for j := range want {
		if dst[j] != want[j] {
			t.Fatalf("AddRows: %d: %v, want %v", j, dst[j], want[j])
		}
	}
}

// TestAddRows checks AddRows of every set against adding the rows one by
// one with Add's portable loop, bit for bit (the same additions in the same
// order), on widths around the 16- and 64-column blocks, and that nothing
// past the columns or the last row is touched.
func TestAddRows(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	sets := append([]*Set{portableSet}, simdSets()...)
	for _, s := range sets {
		for _, cols := range []int{1, 15, 16, 17, 63, 64, 65, 130, 192, 256} {
			for _, rows := range []int{1, 2, 7} {
				ld := cols + 5
				m := make([]float32, (rows-1)*ld+cols+3)
				for i := range m {
					m[i] = float32(r.NormFloat64())
				}
				want := make([]float32, cols+1)
				for i := range want[:cols] {
					want[i] = float32(r.NormFloat64())
				}
				want[cols] = 7
				got := append([]float32(nil), want...)
				for row := 0; row < rows; row++ {
					for j := 0; j < cols; j++ {
						want[j] += m[row*ld+j]
					}
				}
				s.AddRows(got, m, rows, cols, ld)
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("%s rows=%d cols=%d: dst[%d] = %v, want %v", s.name, rows, cols, j, got[j], want[j])
					}
				}
			}
		}
	}
}
