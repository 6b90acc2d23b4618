package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// simdSets are this build's non-portable sets that this CPU can run, for
// the per-kernel tests; TestKernelSets reports the others as skipped.
func simdSets() []*Set {
	var out []*Set
	for _, s := range allSets {
		if s != portableSet && s.usable {
			out = append(out, s)
		}
	}
	return out
}

// TestKernelSets reports, for every known set, whether it is tested on
// this machine: sets that cannot run here are skipped with the reason,
// never passed silently. For every usable set it checks the GEMM against
// the naive kernel and each vector kernel the set has against the
// portable Go version (the per-kernel tests check each set's accuracy
// against float64 references).
func TestKernelSets(t *testing.T) {
	for _, info := range Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			s, err := Lookup(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			checkSetAgainstPortable(t, s)
		})
	}
}

// TestLookupAndEnv checks Lookup, Best, Usable and FromEnv: a set is a
// value (nothing global changes when one is looked up), unusable and
// unknown names are errors, and VOMC_KERNELS is read by FromEnv.
func TestLookupAndEnv(t *testing.T) {
	def := Default()
	p, err := Lookup("portable")
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "portable" || p.vec.exp != nil {
		t.Fatalf("Lookup(portable) = %s", p.Name())
	}
	if _, ok := p.GEMM(0).(*Blocked); !ok {
		t.Fatalf("portable GEMM is %T", p.GEMM(0))
	}
	if _, err := Lookup("sse9"); err == nil {
		t.Fatal("Lookup of an unknown set succeeded")
	}
	for _, info := range Sets() {
		s, err := Lookup(info.Name)
		if info.Usable != (err == nil) {
			t.Errorf("Lookup(%s) = %v, usable %v", info.Name, err, info.Usable)
		}
		if err == nil && s.Name() != info.Name {
			t.Errorf("Lookup(%s) = %s", info.Name, s.Name())
		}
	}
	if u := Usable(); len(u) == 0 || u[0] != Best() || u[len(u)-1] != portableSet {
		t.Errorf("Usable() = %v, Best %s", u, Best().Name())
	}
	t.Setenv(EnvVar, "nosuchset")
	if s, err := FromEnv(); err == nil || s != Best() {
		t.Errorf("FromEnv accepted VOMC_KERNELS=nosuchset (%v, %v)", s, err)
	}
	for _, info := range Sets() {
		t.Setenv(EnvVar, info.Name)
		s, err := FromEnv()
		if info.Usable != (err == nil) {
			t.Errorf("VOMC_KERNELS=%s: %v, usable %v", info.Name, err, info.Usable)
		}
		if err == nil && s.Name() != info.Name {
			t.Errorf("VOMC_KERNELS=%s selected %s", info.Name, s.Name())
		}
	}
	t.Setenv(EnvVar, "")
	if s, err := FromEnv(); err != nil || s != Best() {
		t.Errorf("FromEnv without VOMC_KERNELS = %v, %v; want %s", s, err, Best().Name())
	}
	if Default() != def || Active() != def.Name() {
		t.Errorf("Default changed from %s to %s", def.Name(), Default().Name())
	}
}

// checkSetAgainstPortable runs s's GEMM and vector kernels on random data
// and compares them with the portable versions (float32 tolerance).
func checkSetAgainstPortable(t *testing.T, s *Set) {
	r := rand.New(rand.NewPCG(11, uint64(len(s.name))))
	near := func(what string, got, want []float32, tol float64) {
		t.Helper()
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > tol*(1+math.Abs(float64(want[i]))) || math.IsNaN(float64(got[i])) {
				t.Fatalf("%s: element %d = %g, portable %g", what, i, got[i], want[i])
			}
		}
	}
	for _, sh := range [][3]int{{1, 1, 1}, {13, 33, 17}, {96, 192, 64}, {7, 300, 600}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				a, b := randSlice(r, m*k), randSlice(r, k*n)
				lda, ldb := k, n
				if ta {
					lda = m
				}
				if tb {
					ldb = k
				}
				c0 := randSlice(r, m*n)
				want, got := append([]float32(nil), c0...), append([]float32(nil), c0...)
				Naive{}.Gemm(ta, tb, m, n, k, a, lda, b, ldb, 1, want, n)
				s.gemm(0).Gemm(ta, tb, m, n, k, a, lda, b, ldb, 1, got, n)
				near(fmt.Sprintf("gemm %v ta=%v tb=%v", sh, ta, tb), got, want, 1e-4*math.Sqrt(float64(k)))
			}
		}
	}
	v := s.vec
	for _, n := range []int{1, 7, 8, 16, 37, 100, 1000} {
		x := randSlice(r, n)
		if v.exp != nil {
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			v.exp(&got[0], n)
			for i := range want {
				want[i] = Exp32(want[i])
			}
			near("exp", got, want, 1e-6)
		}
		if v.softmax != nil && v.softmaxBackward != nil {
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			m1, s1 := v.softmax(&got[0], n, 0.7)
			m2, s2 := softmaxGo(want, 0.7)
			near("softmax", got, want, 1e-6)
			near("softmax max/sum", []float32{m1, s1}, []float32{m2, s2}, 1e-6)
			dp := randSlice(r, n)
			dg, dw := append([]float32(nil), dp...), append([]float32(nil), dp...)
			v.softmaxBackward(&got[0], &dg[0], n, 0.7)
			softmaxBackwardGo(want, dw, 0.7)
			near("softmax backward", dg, dw, 1e-5)
		}
		if v.scaledExp != nil {
			got, want := append([]float32(nil), x...), append([]float32(nil), x...)
			v.scaledExp(&got[0], n, 0.5, 0.25)
			for i := range want {
				want[i] = Exp32(0.5*want[i] - 0.25)
			}
			near("scaled exp", got, want, 1e-6)
		}
		if v.geluForward != nil && v.geluBackward != nil {
			got, want := make([]float32, n), make([]float32, n)
			v.geluForward(&got[0], &x[0], n)
			geluForwardGo(want, x)
			near("gelu", got, want, 1e-6)
			dout := randSlice(r, n)
			dg, dw := make([]float32, n), make([]float32, n)
			v.geluBackward(&dg[0], &x[0], &dout[0], n)
			geluBackwardGo(dw, x, dout)
			near("gelu backward", dg, dw, 1e-5)
		}
		if v.add != nil {
			y := randSlice(r, n)
			got, want := make([]float32, n), make([]float32, n)
			v.add(&got[0], &x[0], &y[0], n)
			for i := range want {
				want[i] = x[i] + y[i]
			}
			near("add", got, want, 0)
		}
	}
	if v.transpose != nil {
		rows, cols := 37, 21
		src := randSlice(r, rows*cols)
		got, want := make([]float32, rows*cols), make([]float32, rows*cols)
		v.transpose(&got[0], rows, &src[0], cols, rows, cols)
		transposeGo(want, rows, src, cols, rows, cols)
		near("transpose", got, want, 0)
	}
	if v.layernorm != nil && v.layernormBackward != nil {
		for _, c := range []int{1, 8, 13, 64, 130} {
			rows := 5
			inp, w, b := randSlice(r, rows*c), randSlice(r, c), randSlice(r, c)
			og, ow := make([]float32, rows*c), make([]float32, rows*c)
			mg, mw, rg, rw := make([]float32, rows), make([]float32, rows), make([]float32, rows), make([]float32, rows)
			v.layernorm(&og[0], &mg[0], &rg[0], &inp[0], &w[0], &b[0], rows, c, 1/float32(c), 1e-5)
			layernormGo(ow, mw, rw, inp, w, b, rows, c, 1e-5)
			near("layernorm", og, ow, 1e-4)
			dout := randSlice(r, rows*c)
			dig, diw := make([]float32, rows*c), make([]float32, rows*c)
			dwg, dww, dbg, dbw := make([]float32, c), make([]float32, c), make([]float32, c), make([]float32, c)
			v.layernormBackward(&dig[0], &dwg[0], &dbg[0], &dout[0], &inp[0], &w[0], &mw[0], &rw[0], rows, c, 1/float32(c))
			layernormBackwardGo(diw, dww, dbw, dout, inp, w, mw, rw, rows, c)
			near("layernorm backward dinp", dig, diw, 1e-3)
			near("layernorm backward dw", dwg, dww, 1e-4)
			near("layernorm backward db", dbg, dbw, 1e-5)
		}
	}
}
