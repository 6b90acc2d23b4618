package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAttn16ArgsLayout pins the field offsets that attngen.go writes into
// the assembly.
func TestAttn16ArgsLayout(t *testing.T) {
	var a attn16Args
	for _, c := range []struct {
		name     string
		got, off uintptr
	}{
		{"qt", unsafe.Offsetof(a.qt), 0}, {"ldt", unsafe.Offsetof(a.ldt), 8}, {"k", unsafe.Offsetof(a.k), 16},
		{"v", unsafe.Offsetof(a.v), 24}, {"ld", unsafe.Offsetof(a.ld), 32}, {"n", unsafe.Offsetof(a.n), 40},
		{"r0", unsafe.Offsetof(a.r0), 48}, {"nq", unsafe.Offsetof(a.nq), 56}, {"p", unsafe.Offsetof(a.p), 64},
		{"ds", unsafe.Offsetof(a.ds), 72}, {"out", unsafe.Offsetof(a.out), 80}, {"ldo", unsafe.Offsetof(a.ldo), 88},
		{"ml", unsafe.Offsetof(a.ml), 96}, {"dot", unsafe.Offsetof(a.dot), 104}, {"q", unsafe.Offsetof(a.q), 112},
		{"do", unsafe.Offsetof(a.do), 120}, {"dk", unsafe.Offsetof(a.dk), 128}, {"dv", unsafe.Offsetof(a.dv), 136},
		{"scale", unsafe.Offsetof(a.scale), 144}, {"acc", unsafe.Offsetof(a.acc), 152},
	} {
		if c.got != c.off {
			t.Errorf("attn16Args.%s at offset %d, attngen.go assumes %d", c.name, c.got, c.off)
		}
	}
}

// refAttention16 is causal attention of one head of size 16 in float64:
// out (T×16), lse (T) and, from dout, the gradients dq, dk, dv.
func refAttention16(q, k, v, dout []float64, T int) (out, lse, dq, dk, dv []float64) {
	const hs = 16
	scale := 1 / math.Sqrt(hs)
	out, lse = make([]float64, T*hs), make([]float64, T)
	dq, dk, dv = make([]float64, T*hs), make([]float64, T*hs), make([]float64, T*hs)
	for i := 0; i < T; i++ {
		s := make([]float64, i+1)
		m := math.Inf(-1)
		for j := range s {
			for d := 0; d < hs; d++ {
				s[j] += q[i*hs+d] * k[j*hs+d]
			}
			s[j] *= scale
			m = max(m, s[j])
		}
		var l float64
		for j := range s {
			s[j] = math.Exp(s[j] - m)
			l += s[j]
		}
		lse[i] = m + math.Log(l)
		dp := make([]float64, i+1)
		var dot float64
		for j := range s {
			s[j] /= l
			for d := 0; d < hs; d++ {
				out[i*hs+d] += s[j] * v[j*hs+d]
				dp[j] += dout[i*hs+d] * v[j*hs+d]
				dv[j*hs+d] += s[j] * dout[i*hs+d]
			}
			dot += s[j] * dp[j]
		}
		for j := range s {
			ds := scale * s[j] * (dp[j] - dot)
			for d := 0; d < hs; d++ {
				dq[i*hs+d] += ds * k[j*hs+d]
				dk[j*hs+d] += ds * q[i*hs+d]
			}
		}
	}
	return
}

// TestAttentionHead16 checks the fused kernels against refAttention16 on
// lengths with and without a partial block, rows strided as in the
// engine's qkv (ld > 16), and gradients that are set (what the buffers
// held is not read).
func TestAttentionHead16(t *testing.T) {
	ks := Best()
	if !ks.HasAttention16() {
		t.Skipf("kernel set %s has no fused attention (only avx512 has)", ks.Name())
	}
	r := rand.New(rand.NewPCG(16, 16))
	for _, T := range []int{1, 2, 15, 16, 17, 33, 47, 100, 256, 1024, 1536} {
		for _, st := range [][2]int{{16, 16}, {48, 16}, {200, 48}, {48, 64}} {
			ld, ldo := st[0], st[1]
			if T > 256 && ld != 48 {
				continue
			}
			t.Run(fmt.Sprintf("T%d_ld%d_ldo%d", T, ld, ldo), func(t *testing.T) { checkAttentionHead16(t, ks, r, T, ld, ldo) })
		}
	}
}

// checkAttentionHead16 checks one length T with rows of q, k, v, dq, dk
// and dv ld apart and rows of out and dout ldo apart, against
// refAttention16 within the engine's attention tolerances (relative 1e-5
// for the output and the log-sum-exp, 2e-5 for the gradients, as
// TestAttentionBlocks), with q and k of standard deviation 2 (peaked
// weights: long sums of a few large terms).
func checkAttentionHead16(t *testing.T, ks *Set, r *rand.Rand, T, ld, ldo int) {
	const hs = 16
	rows := func(sd float64, ld int) ([]float32, []float64) {
		x := make([]float32, (T-1)*ld+hs+3) // 3 floats past the last row: not touched
		x64 := make([]float64, T*hs)
		for i := range x {
			x[i] = float32(sd * r.NormFloat64())
		}
		for i := 0; i < T; i++ {
			for d := 0; d < hs; d++ {
				x64[i*hs+d] = float64(x[i*ld+d])
			}
		}
		return x, x64
	}
	q, q64 := rows(2, ld)
	k, k64 := rows(2, ld)
	v, v64 := rows(1, ld)
	do, do64 := rows(1, ldo)
	wOut, wLse, wdq, wdk, wdv := refAttention16(q64, k64, v64, do64, T)
	scale := float32(1 / math.Sqrt(hs))
	scratch := make([]float32, Attention16Scratch(T))
	for i := range scratch {
		scratch[i] = float32(math.NaN()) // the kernels must not read stale scratch
	}
	out := make([]float32, (T-1)*ldo+hs+3)
	for i := range out {
		out[i] = -7
	}
	lse := make([]float32, T)
	ks.AttentionHead16Forward(out, ldo, lse, q, k, v, ld, T, scale, scratch)
	near := func(what string, i int, got float32, want, tol float64) {
		t.Helper()
		if d := math.Abs(float64(got) - want); !(d <= tol*(1+math.Abs(want))) {
			t.Fatalf("%s[%d] = %v, want %v", what, i, got, want)
		}
	}
	for i := 0; i < T; i++ {
		near("lse", i, lse[i], wLse[i], 1e-5)
		for d := 0; d < hs; d++ {
			near("out", i*hs+d, out[i*ldo+d], wOut[i*hs+d], 1e-5)
		}
		if i < T-1 {
			for c := hs; c < ldo; c++ {
				if out[i*ldo+c] != -7 {
					t.Fatalf("out row %d column %d written", i, c)
				}
			}
		}
	}
	for _, c := range out[(T-1)*ldo+hs:] {
		if c != -7 {
			t.Fatal("out written past its last row")
		}
	}
	grad := func() []float32 { // the head's columns NaN: the kernel must not read them
		g := make([]float32, (T-1)*ld+hs+3)
		for i := range g {
			g[i] = 0.25
			if i < T*ld && i%ld < hs {
				g[i] = float32(math.NaN())
			}
		}
		return g
	}
	dq, dk, dv := grad(), grad(), grad()
	ks.AttentionHead16Backward(dq, dk, dv, do, ldo, q, k, v, ld, lse, T, scale, scratch)
	for _, g := range []struct {
		name string
		got  []float32
		want []float64
	}{{"dq", dq, wdq}, {"dk", dk, wdk}, {"dv", dv, wdv}} {
		for i := 0; i < T; i++ {
			for d := 0; d < hs; d++ {
				near(g.name, i*hs+d, g.got[i*ld+d], g.want[i*hs+d], 2e-5)
			}
			for c := hs; c < ld && i < T-1; c++ {
				if g.got[i*ld+c] != 0.25 {
					t.Fatalf("%s row %d column %d written", g.name, i, c)
				}
			}
		}
		for _, c := range g.got[(T-1)*ld+hs:] {
			if c != 0.25 {
				t.Fatalf("%s written past its last row", g.name)
			}
		}
	}
}

// TestAttentionHead16Prefix checks that a query's results do not depend on
// the length T (nor on the block it falls in): the first T' rows of a
// length-T run equal a length-T' run bit for bit, for outputs and
// gradients of keys and values summed over the same queries.
func TestAttentionHead16Prefix(t *testing.T) {
	ks := Best()
	if !ks.HasAttention16() {
		t.Skipf("kernel set %s has no fused attention", ks.Name())
	}
	r := rand.New(rand.NewPCG(3, 4))
	const T, hs = 70, 16
	x := func() []float32 {
		v := make([]float32, T*hs)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	q, k, v := x(), x(), x()
	scale := float32(0.25)
	full := make([]float32, T*hs)
	lseFull := make([]float32, T)
	ks.AttentionHead16Forward(full, hs, lseFull, q, k, v, hs, T, scale, make([]float32, Attention16Scratch(T)))
	for _, tp := range []int{1, 9, 16, 31, 32, 69} {
		part := make([]float32, tp*hs)
		lse := make([]float32, tp)
		ks.AttentionHead16Forward(part, hs, lse, q, k, v, hs, tp, scale, make([]float32, Attention16Scratch(tp)))
		for i := range part {
			if part[i] != full[i] {
				t.Fatalf("T'=%d: out[%d] = %v, with T=%d %v", tp, i, part[i], T, full[i])
			}
		}
		for i := range lse {
			if lse[i] != lseFull[i] {
				t.Fatalf("T'=%d: lse[%d] = %v, with T=%d %v", tp, i, lse[i], T, lseFull[i])
			}
		}
		// dq of the first T' queries from a dout that is zero past them
		do := x()
		clear(do[tp*hs:])
		dqF, dkF, dvF := make([]float32, T*hs), make([]float32, T*hs), make([]float32, T*hs)
		ks.AttentionHead16Backward(dqF, dkF, dvF, do, hs, q, k, v, hs, lseFull, T, scale, make([]float32, Attention16Scratch(T)))
		dqP, dkP, dvP := make([]float32, tp*hs), make([]float32, tp*hs), make([]float32, tp*hs)
		ks.AttentionHead16Backward(dqP, dkP, dvP, do, hs, q, k, v, hs, lse, tp, scale, make([]float32, Attention16Scratch(tp)))
		for i := 0; i < tp*hs; i++ {
			if dqP[i] != dqF[i] || dkP[i] != dkF[i] || dvP[i] != dvF[i] {
				t.Fatalf("T'=%d: gradients at %d differ from T=%d's: dq %v/%v dk %v/%v dv %v/%v", tp, i, T, dqP[i], dqF[i], dkP[i], dkF[i], dvP[i], dvF[i])
			}
		}
	}
}

// BenchmarkAttentionHead16 measures the fused kernels of one head on the
// C1 (T = 256) and C2 (T = 512) lengths, rows strided as in the engine's
// qkv (ld = 3·64). GFLOP/cpu-s counts the useful multiply-adds of the
// causal products, 2·16·T(T+1)/2 flops each: two in the forward (scores,
// weighted values), five in the backward (scores again, dP, dV, dK, dQ);
// the exponentials are not counted.
func BenchmarkAttentionHead16(b *testing.B) {
	ks := Best()
	if !ks.HasAttention16() {
		b.Skipf("kernel set %s has no fused attention", ks.Name())
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, T := range []int{256, 512} {
		const ld, hs = 192, 16
		x := func(sd float64) []float32 {
			v := make([]float32, T*ld)
			for i := range v {
				v[i] = float32(sd * r.NormFloat64())
			}
			return v
		}
		q, k, v, do := x(2), x(2), x(1), x(1)
		out, lse := make([]float32, T*hs), make([]float32, T)
		dq, dk, dv := make([]float32, T*ld), make([]float32, T*ld), make([]float32, T*ld)
		scratch := make([]float32, Attention16Scratch(T))
		scale := float32(0.25)
		ks.AttentionHead16Forward(out, hs, lse, q, k, v, ld, T, scale, scratch)
		product := 2 * 16 * float64(T) * float64(T+1) / 2
		for _, c := range []struct {
			name     string
			products int
			f        func()
		}{
			{"fwd", 2, func() { ks.AttentionHead16Forward(out, hs, lse, q, k, v, ld, T, scale, scratch) }},
			{"bwd", 5, func() { ks.AttentionHead16Backward(dq, dk, dv, do, hs, q, k, v, ld, lse, T, scale, scratch) }},
		} {
			b.Run(fmt.Sprintf("T%d/%s", T, c.name), func(b *testing.B) {
				t0 := cpuTime()
				for i := 0; i < b.N; i++ {
					c.f()
				}
				if cpu := cpuTime() - t0; cpu > 0 {
					b.ReportMetric(float64(c.products)*product*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/cpu-s")
				}
			})
		}
	}
}

// TestAttn16Exp2Poly checks the polynomial of 2^r, r ∈ [−½, ½], in the
// fused attention kernels (exp2Poly in attngen.go): its relative error is
// ≤ 2e-8 evaluated in float64 and ≤ 2 ulp of float32 with the kernels' float32
// Horner evaluation (fused multiply-adds), and the assembly loads exactly
// these coefficients: the attention kernels' (attngen.go) and the GELU
// kernels' (gelugen.go, a copy of them).
func TestAttn16Exp2Poly(t *testing.T) {
	coef := [6]uint32{0x3f317218, 0x3e75fdee, 0x3d635774, 0x3c1d96a7, 0x3aaf9f24, 0x3920fdc7}
	var c [6]float32
	for i, b := range coef {
		c[i] = math.Float32frombits(b)
	}
	worst64, worst32 := 0.0, 0.0
	const n = 1 << 18
	for i := 0; i <= n; i++ {
		r := float32(-0.5 + float64(i)/n)
		want := math.Exp2(float64(r))
		p64 := float64(c[5])
		for k := 4; k >= 0; k-- {
			p64 = p64*float64(r) + float64(c[k])
		}
		p64 = p64*float64(r) + 1
		p32 := c[5]
		for k := 4; k >= 0; k-- {
			p32 = float32(math.FMA(float64(p32), float64(r), float64(c[k])))
		}
		p32 = float32(math.FMA(float64(p32), float64(r), 1))
		worst64 = max(worst64, math.Abs(p64/want-1))
		worst32 = max(worst32, math.Abs(float64(p32)/want-1))
	}
	t.Logf("relative error: %.3g (float64), %.3g = %.2f ulp (float32)", worst64, worst32, worst32*(1<<24))
	if worst64 > 2e-8 || worst32 > 2.0/(1<<24) {
		t.Errorf("2^r polynomial: relative error %.3g in float64 (want ≤ 2e-8), %.3g in float32 (want ≤ 2 ulp)", worst64, worst32)
	}
	if Best().Name() != "avx512" {
		return
	}
	for _, f := range []struct {
		file string
		n    int
	}{{"attention16_avx512_amd64.s", 2}, {"gelu_avx512_amd64.s", 3}} {
		src, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range coef {
			if want := fmt.Sprintf("MOVL $0x%08x, AX", b); strings.Count(string(src), want) != f.n {
				t.Errorf("%s loads %q %d times, want %d (once a kernel)", f.file, want, strings.Count(string(src), want), f.n)
			}
		}
	}
}
