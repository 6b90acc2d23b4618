package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expInputs are the test points of the exp tests: a fine grid over the
// range whose results are normal floats, and random points.
func expInputs() []float32 {
	var xs []float32
	for x := -87.3; x <= 88.7; x += 1.0 / 1024 {
		xs = append(xs, float32(x))
	}
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 1<<18; i++ {
		xs = append(xs, float32(-87.3+176*r.Float64()))
	}
	return append(xs, 0, -0, 1e-8, -1e-8, float32(math.Ln2/2), -float32(math.Ln2/2))
}

// maxExpRelErr is the bound on Exp32's relative error in the normal range.
const maxExpRelErr = 2e-7

func TestExp32(t *testing.T) {
	type impl struct {
		name string
		f    func([]float32)
	}
	impls := []impl{{"go", func(x []float32) {
		for i, v := range x {
			x[i] = Exp32(v)
		}
	}}}
	for _, s := range simdSets() {
		if f := s.vec.exp; f != nil {
			impls = append(impls, impl{s.name, func(x []float32) { f(&x[0], len(x)) }})
		}
		if f := s.vec.scaledExp; f != nil {
			impls = append(impls, impl{s.name + "-scaled", func(x []float32) { f(&x[0], len(x), 1, 0) }})
		}
	}
	for _, im := range impls {
		xs := expInputs()
		got := append([]float32(nil), xs...)
		im.f(got)
		worst, at := 0.0, float32(0)
		for i, x := range xs {
			want := math.Exp(float64(x))
			if e := math.Abs(float64(got[i])-want) / want; e > worst {
				worst, at = e, x
			}
		}
		t.Logf("%s: max relative error %.3g at x = %v", im.name, worst, at)
		if worst > maxExpRelErr {
			t.Errorf("%s: max relative error %.3g at x = %v", im.name, worst, at)
		}
		// special values, and every tail length of the vector code
		sp := []float32{-104.5, -1e30, float32(math.Inf(-1)), -100, -95}
		im.f(sp)
		for i, want := range []float64{0, 0, 0, math.Exp(-100), math.Exp(-95)} {
			if math.Abs(float64(sp[i])-want) > 1e-3*want+1e-45 {
				t.Errorf("%s: special value %d: %v, want %v", im.name, i, sp[i], want)
			}
		}
		for n := 1; n <= 40; n++ {
			x := make([]float32, n+1)
			x[n] = 7
			im.f(x[:n])
			for i := 0; i < n; i++ {
				if x[i] != 1 {
					t.Fatalf("%s: n=%d: exp(0) = %v", im.name, n, x[i])
				}
			}
			if x[n] != 7 {
				t.Fatalf("%s: n=%d wrote past the end", im.name, n)
			}
		}
	}
	if !(Exp32(float32(math.NaN())) != Exp32(float32(math.NaN()))) || !math.IsInf(float64(Exp32(89)), 1) {
		t.Errorf("Exp32(NaN), Exp32(89) = %v, %v", Exp32(float32(math.NaN())), Exp32(89))
	}
}

type softmaxImpl struct {
	name     string
	fwd      func(x []float32, scale float32)
	backward func(p, dp []float32, scale float32)
}

func softmaxImpls() []softmaxImpl {
	out := []softmaxImpl{{"go", func(x []float32, s float32) { softmaxGo(x, s) }, softmaxBackwardGo},
		{"dispatch", func(x []float32, s float32) { Best().Softmax(x, s) }, Best().SoftmaxBackward}}
	for _, s := range simdSets() {
		if f, b := s.vec.softmax, s.vec.softmaxBackward; f != nil && b != nil {
			out = append(out, softmaxImpl{s.name,
				func(x []float32, s float32) { f(&x[0], len(x), s) },
				func(p, dp []float32, s float32) { b(&p[0], &dp[0], len(p), s) }})
		}
	}
	return out
}

// TestSoftmax compares both row kernels with float64 references on every
// length up to 70 and a few long rows, checking that nothing past the row
// is touched.
func TestSoftmax(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	lengths := []int{257, 512, 1000}
	for n := 1; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, im := range softmaxImpls() {
		for _, n := range lengths {
			scale := float32(0.25 + r.Float64())
			x := make([]float32, n+1)
			for i := range x {
				x[i] = float32(4 * r.NormFloat64())
			}
			x[n] = 123
			x0 := append([]float32(nil), x...)
			im.fwd(x[:n], scale)
			// reference
			m := math.Inf(-1)
			for _, v := range x0[:n] {
				m = math.Max(m, float64(v))
			}
			ref := make([]float64, n)
			s := 0.0
			for i, v := range x0[:n] {
				ref[i] = math.Exp(float64(scale) * (float64(v) - m))
				s += ref[i]
			}
			for i := range ref {
				ref[i] /= s
				if d := math.Abs(float64(x[i]) - ref[i]); d > 1e-6*ref[i]+1e-8 {
					t.Fatalf("%s n=%d: p[%d] = %v, want %v", im.name, n, i, x[i], ref[i])
				}
			}
			if x[n] != 123 {
				t.Fatalf("%s n=%d: wrote past the row", im.name, n)
			}
			// backward
			dp := make([]float32, n+1)
			for i := range dp {
				dp[i] = float32(r.NormFloat64())
			}
			dp[n] = 321
			dp0 := append([]float32(nil), dp...)
			im.backward(x[:n], dp[:n], scale)
			dot := 0.0
			for i := 0; i < n; i++ {
				dot += float64(x[i]) * float64(dp0[i])
			}
			for i := 0; i < n; i++ {
				want := float64(scale) * float64(x[i]) * (float64(dp0[i]) - dot)
				if d := math.Abs(float64(dp[i]) - want); d > 1e-6*(math.Abs(want)+float64(x[i])) {
					t.Fatalf("%s n=%d: ds[%d] = %v, want %v", im.name, n, i, dp[i], want)
				}
			}
			if dp[n] != 321 {
				t.Fatalf("%s n=%d: backward wrote past the row", im.name, n)
			}
		}
	}
}

// TestSoftmaxLSE checks that Softmax's log-sum-exp lets ScaledExp
// recompute the probabilities, and the log-sum-exp itself.
func TestSoftmaxLSE(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 1))
	for _, n := range []int{1, 5, 16, 17, 100, 513} {
		scale := float32(0.3 + r.Float64())
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(5 * r.NormFloat64())
		}
		y := append([]float32(nil), x...)
		lse := Best().Softmax(x, scale)
		m, s := math.Inf(-1), 0.0
		for _, v := range y {
			m = math.Max(m, float64(scale)*float64(v))
		}
		for _, v := range y {
			s += math.Exp(float64(scale)*float64(v) - m)
		}
		if want := m + math.Log(s); math.Abs(float64(lse)-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("n=%d: lse %v, want %v", n, lse, want)
		}
		Best().ScaledExp(y, scale, lse)
		for i := range y {
			if d := math.Abs(float64(y[i] - x[i])); d > 2e-6*float64(x[i])+1e-12 {
				t.Fatalf("n=%d: recomputed p[%d] = %v, softmax %v", n, i, y[i], x[i])
			}
		}
		z := append([]float32(nil), y...)
		for i := range z {
			z[i] = float32(r.NormFloat64())
		}
		want := make([]float64, n)
		for i, v := range z {
			want[i] = math.Exp(float64(scale)*float64(v) - 0.5)
		}
		Best().ScaledExp(z, scale, 0.5)
		for i := range z {
			if math.Abs(float64(z[i])-want[i]) > 3e-7*want[i] {
				t.Fatalf("ScaledExp: %v, want %v", z[i], want[i])
			}
		}
	}
}

// TestLnPos checks the log of Softmax's log-sum-exp against math.Log.
func TestLnPos(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	xs := []float32{1, 2, 0.5, float32(math.Sqrt2), float32(math.Sqrt2) * 1.0000001, 1536, 1e-30, 3e38, 1.17549435e-38}
	for i := 0; i < 1<<16; i++ {
		xs = append(xs, float32(math.Exp(r.Float64()*160-80)))
	}
	for _, x := range xs {
		want := math.Log(float64(x))
		got := float64(lnPos(x))
		ulp := math.Abs(float64(math.Nextafter32(float32(want), float32(math.Inf(1)))) - float64(float32(want)))
		if d := math.Abs(got - want); d > ulp+1e-9 {
			t.Fatalf("lnPos(%v) = %v, want %v", x, got, want)
		}
	}
}
