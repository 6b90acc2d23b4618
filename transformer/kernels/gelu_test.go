package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestGelu compares the GELU kernels (portable and SIMD) with float64
// exact-erf GELU and its derivative on a grid over [−12, 12], random
// points and every tail length: |Φ error| ≤ 3e-7, so |out error| ≤
// 3e-7·|x| + 1 ulp and the derivative error ≤ 3e-7·(1 + |x|).
func TestGelu(t *testing.T) {
	var xs []float32
	for x := -12.0; x <= 12; x += 1.0 / 512 {
		xs = append(xs, float32(x))
	}
	r := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 1<<16; i++ {
		xs = append(xs, float32(3*r.NormFloat64()))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-20, -1e-20, 50, -50, 1e6, -1e6)
	type impl struct {
		name string
		fwd  func(out, inp []float32)
		bwd  func(dinp, inp, dout []float32)
	}
	impls := []impl{{"go", geluForwardGo, geluBackwardGo}, {"dispatch", Best().GeluForward, Best().GeluBackward}}
	for _, s := range simdSets() {
		if f, b := s.vec.geluForward, s.vec.geluBackward; f != nil && b != nil {
			impls = append(impls, impl{s.name,
				func(out, inp []float32) { f(&out[0], &inp[0], len(inp)) },
				func(dinp, inp, dout []float32) { b(&dinp[0], &inp[0], &dout[0], len(inp)) }})
		}
	}
	for _, im := range impls {
		out := make([]float32, len(xs))
		im.fwd(out, xs)
		din := make([]float32, len(xs))
		dout := make([]float32, len(xs))
		for i := range din {
			din[i] = 0.25
			dout[i] = 1
		}
		im.bwd(din, xs, dout)
		worstF, worstB := 0.0, 0.0
		for i, x32 := range xs {
			x := float64(x32)
			phi := 0.5 * (1 + math.Erf(x/math.Sqrt2))
			want := x * phi
			ef := math.Abs(float64(out[i])-want) / (3e-7*math.Abs(x) + 6e-8*math.Abs(want) + 1e-30)
			wantD := phi + x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi) + 0.25
			eb := math.Abs(float64(din[i])-wantD) / (3e-7 * (1 + math.Abs(x)))
			worstF, worstB = math.Max(worstF, ef), math.Max(worstB, eb)
			if !(ef <= 1) || !(eb <= 1) {
				t.Fatalf("%s: x=%v: gelu %v (want %v), 0.25+gelu' %v (want %v)", im.name, x, out[i], want, din[i], wantD)
			}
		}
		t.Logf("%s: worst error/bound forward %.3f, backward %.3f", im.name, worstF, worstB)
		for n := 1; n <= 40; n++ {
			in := make([]float32, n+1)
			o := make([]float32, n+1)
			o[n] = 9
			in[n] = 1
			im.fwd(o[:n], in[:n])
			im.bwd(o[:n], in[:n], in[:n])
			for i := 0; i < n; i++ {
				if o[i] != 0 {
					t.Fatalf("%s n=%d: o[%d] = %v", im.name, n, i, o[i])
				}
			}
			if o[n] != 9 {
				t.Fatalf("%s n=%d: wrote past the end", im.name, n)
			}
		}
	}
}

// TestGeluBackwardSet checks that GeluBackwardSet (every set, and each
// SIMD set's write kernel) equals GeluBackward into a cleared slice, ignores
// what dinp held, and touches nothing past the n values, for every tail
// length.
func TestGeluBackwardSet(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	sets := append([]*Set{portableSet}, simdSets()...)
	for _, s := range sets {
		for n := 1; n <= 70; n++ {
			x, dout := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], dout[i] = float32(3*r.NormFloat64()), float32(r.NormFloat64())
			}
			want := make([]float32, n)
			s.GeluBackward(want, x, dout)
			got := make([]float32, n+1)
			for i := range got {
				got[i] = float32(math.NaN())
			}
			got[n] = 9
			s.GeluBackwardSet(got[:n], x, dout)
			for i := 0; i < n; i++ {
				if got[i] != want[i] {
					t.Fatalf("%s n=%d: GeluBackwardSet[%d] = %v, GeluBackward into zeros %v", s.name, n, i, got[i], want[i])
				}
			}
			if got[n] != 9 {
				t.Fatalf("%s n=%d: wrote past the end", s.name, n)
			}
		}
	}
}

// TestGeluLengths compares each SIMD set's GELU kernels with the portable
// ones on random inputs of every length 1..100 (whole pairs of vectors,
// one more whole vector, the masked tail, in every combination): the same
// function within float32 rounding of the two evaluations (1e-6·(1 + |x|)
// absolute), nothing written past n, and dinp's previous values added to
// (GeluBackward) or ignored (GeluBackwardSet).
func TestGeluLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	for _, s := range simdSets() {
		fwd, bwd, set := s.vec.geluForward, s.vec.geluBackward, s.vec.geluBackwardSet
		if fwd == nil || bwd == nil || set == nil {
			continue
		}
		for n := 1; n <= 100; n++ {
			x, dout, d0 := make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], dout[i], d0[i] = float32(3*r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
			}
			wantF, wantB := make([]float32, n), append([]float32(nil), d0...)
			geluForwardGo(wantF, x)
			geluBackwardGo(wantB, x, dout)
			wantS := make([]float32, n)
			geluBackwardGo(wantS, x, dout)
			gotF := append(make([]float32, n), 9)
			gotB := append(append([]float32(nil), d0...), 9)
			gotS := make([]float32, n+1)
			for i := range gotS {
				gotS[i] = float32(math.NaN())
			}
			gotS[n] = 9
			fwd(&gotF[0], &x[0], n)
			bwd(&gotB[0], &x[0], &dout[0], n)
			set(&gotS[0], &x[0], &dout[0], n)
			for i := 0; i < n; i++ {
				tol := 1e-6 * (1 + math.Abs(float64(x[i]))) * (1 + math.Abs(float64(dout[i])))
				for _, c := range []struct {
					what      string
					got, want float32
				}{{"forward", gotF[i], wantF[i]}, {"backward", gotB[i], wantB[i]}, {"backward (set)", gotS[i], wantS[i]}} {
					if d := math.Abs(float64(c.got) - float64(c.want)); !(d <= tol) {
						t.Fatalf("%s %s n=%d: [%d] (x=%v) = %v, portable %v", s.name, c.what, n, i, x[i], c.got, c.want)
					}
				}
			}
			if gotF[n] != 9 || gotB[n] != 9 || gotS[n] != 9 {
				t.Fatalf("%s n=%d: wrote past the end", s.name, n)
			}
		}
	}
}
