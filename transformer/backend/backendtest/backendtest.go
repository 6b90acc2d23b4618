// Package backendtest is the conformance suite of the transformer engine's
// backends: Run checks every operation of a backend.Backend against
// float64 references written from the definitions in package backend, and
// every backward operation against central differences of its forward
// reference. The CPU backend runs it for every kernel set this machine has
// (backend/cpu's tests); a GPU backend runs the same suite.
package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
)

// Tolerances of the float32 backends against the float64 references:
// forward results must be within fwdTol·(1 + |want|), backward results
// within bwdTol·(1 + max|want|) (relative to the largest gradient: float32
// round-off accumulates over sums of many terms).
const (
	fwdTol = 2e-5
	bwdTol = 2e-4
)

// harness holds a backend and a random source.
type harness struct {
	t  *testing.T
	be backend.Backend
	r  *rand.Rand
}

func (h *harness) rand(n int, std float64) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(std * h.r.NormFloat64())
	}
	return s
}

// up uploads host data into a fresh buffer.
func (h *harness) up(x []float32) backend.Tensor {
	t := backend.Whole(h.be.Alloc(len(x)))
	h.be.Upload(t, x)
	return t
}

// down downloads t.
func (h *harness) down(t backend.Tensor) []float32 {
	x := make([]float32, t.Len)
	h.be.Download(x, t)
	return x
}

func (h *harness) tokens(x []byte) backend.Tokens {
	t := h.be.AllocTokens(len(x))
	h.be.UploadTokens(t, x)
	return t
}

func (h *harness) near(what string, got []float32, want []float64, tol float64, relMax bool) {
	h.t.Helper()
	if len(got) != len(want) {
		h.t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i, w := range want {
		bound := tol * (1 + math.Abs(w))
		if relMax {
			bound = tol * (1 + scale)
		}
		if d := math.Abs(float64(got[i]) - w); !(d <= bound) {
			h.t.Fatalf("%s: element %d = %.9g, reference %.9g (|Δ| %.3g > %.3g)", what, i, got[i], w, d, bound)
		}
	}
}

func f64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// Run runs the conformance suite on be.
func Run(t *testing.T, be backend.Backend) {
	for _, c := range []struct {
		name string
		f    func(*harness)
	}{
		{"memory", memory},
		{"encoder", encoder},
		{"layernorm", layernorm},
		{"matmul", matmul},
		{"attention", attention},
		{"activation", activation},
		{"add", add},
		{"crossentropy", crossEntropy},
		{"optimizer", optimizer},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f(&harness{t: t, be: be, r: rand.New(rand.NewPCG(7, uint64(len(c.name))))})
		})
	}
}

func memory(h *harness) {
	x := h.rand(100, 1)
	t := h.up(x)
	got := h.down(t.Slice(10, 20))
	h.near("download of a slice", got, f64(x[10:30]), 0, false)
	y := backend.Whole(h.be.Alloc(20))
	h.be.Copy(y, t.Slice(50, 20))
	h.near("copy", h.down(y), f64(x[50:70]), 0, false)
	h.be.Zero(t.Slice(0, 50))
	got = h.down(t)
	for i := 0; i < 50; i++ {
		if got[i] != 0 {
			h.t.Fatalf("zero: element %d = %v", i, got[i])
		}
	}
	h.near("zero leaves the rest", got[50:], f64(x[50:]), 0, false)
	if z := h.down(backend.Whole(h.be.Alloc(8))); z[3] != 0 {
		h.t.Fatal("Alloc is not zeroed")
	}
}

// dirDeriv checks a backward op: for a scalar L = ⟨dout, f(x)⟩, the
// gradient g that the backward op gives must match the central
// difference (L(x + εv) − L(x − εv))/2ε ≈ ⟨g, v⟩ along random directions v,
// where L is computed by the float64 reference forward fref.
func (h *harness) dirDeriv(what string, x []float32, g []float32, fref func(x []float64) float64) {
	h.t.Helper()
	xv := f64(x)
	const eps = 1e-4
	for trial := 0; trial < 3; trial++ {
		v := make([]float64, len(x))
		dot := 0.0
		for i := range v {
			v[i] = h.r.NormFloat64()
			dot += float64(g[i]) * v[i]
		}
		xp, xm := make([]float64, len(x)), make([]float64, len(x))
		for i := range xv {
			xp[i], xm[i] = xv[i]+eps*v[i], xv[i]-eps*v[i]
		}
		fd := (fref(xp) - fref(xm)) / (2 * eps)
		if d := math.Abs(dot - fd); d > 2e-3*math.Abs(fd)+1e-3 {
			h.t.Fatalf("%s: directional derivative %.8g, central difference %.8g", what, dot, fd)
		}
	}
}

func encoder(h *harness) {
	B, T, C, A := 2, 5, 6, 4
	wte, pos := h.rand(A*C, 1), h.rand((T+2)*C, 1)
	tok := []byte{0, 1, 2, 3, 0, 3, 3, 2, 1, 0}
	out := backend.Whole(h.be.Alloc(B * T * C))
	h.be.EncoderForward(out, h.tokens(tok), h.up(wte), h.up(pos), B, T, C)
	want := make([]float64, B*T*C)
	for r := 0; r < B*T; r++ {
		for i := 0; i < C; i++ {
			want[r*C+i] = float64(wte[int(tok[r])*C+i]) + float64(pos[(r%T)*C+i])
		}
	}
	h.near("encoder forward", h.down(out), want, fwdTol, false)
	dout := h.rand(B*T*C, 1)
	dwte0, dpos0 := h.rand(A*C, 1), h.rand((T+2)*C, 1)
	dwte, dpos := h.up(dwte0), h.up(dpos0)
	h.be.EncoderBackward(dwte, dpos, h.up(dout), h.tokens(tok), B, T, C)
	wantTE, wantPos := f64(dwte0), f64(dpos0)
	for r := 0; r < B*T; r++ {
		for i := 0; i < C; i++ {
			wantTE[int(tok[r])*C+i] += float64(dout[r*C+i])
			wantPos[(r%T)*C+i] += float64(dout[r*C+i])
		}
	}
	h.near("encoder backward dwte (accumulates)", h.down(dwte), wantTE, fwdTol, false)
	h.near("encoder backward dpos (accumulates)", h.down(dpos), wantPos, fwdTol, false)
	dwte2 := h.up(dwte0)
	h.be.EncoderBackward(dwte2, backend.Tensor{}, h.up(dout), h.tokens(tok), B, T, C)
	h.near("encoder backward without dpos", h.down(dwte2), wantTE, fwdTol, false)
}

func refLayerNorm(x, w, b []float64, rows, C int) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < rows; r++ {
		row := x[r*C : (r+1)*C]
		m, v := 0.0, 0.0
		for _, a := range row {
			m += a
		}
		m /= float64(C)
		for _, a := range row {
			v += (a - m) * (a - m)
		}
		v /= float64(C)
		rs := 1 / math.Sqrt(v+1e-5)
		for i, a := range row {
			out[r*C+i] = (a-m)*rs*w[i] + b[i]
		}
	}
	return out
}

func dot(a []float64, b []float32) float64 {
	s := 0.0
	for i, v := range a {
		s += v * float64(b[i])
	}
	return s
}

func layernorm(h *harness) {
	for _, C := range []int{1, 7, 16, 33, 64} {
		rows := 9
		x, w, b := h.rand(rows*C, 2), h.rand(C, 1), h.rand(C, 1)
		for i := range x[:C] {
			x[i] += 100 // a row with a large common offset
		}
		out, mean, rstd := backend.Whole(h.be.Alloc(rows*C)), backend.Whole(h.be.Alloc(rows)), backend.Whole(h.be.Alloc(rows))
		xt, wt, bt := h.up(x), h.up(w), h.up(b)
		h.be.LayerNormForward(out, mean, rstd, xt, wt, bt, rows, C)
		xf, wf, bf := f64(x), f64(w), f64(b)
		h.near(fmt.Sprintf("layernorm C=%d", C), h.down(out), refLayerNorm(xf, wf, bf, rows, C), 1e-4, false)
		if C == 1 {
			continue // the output is b: no dependence on x
		}
		dout := h.rand(rows*C, 1)
		dinp, dw, db := backend.Whole(h.be.Alloc(rows*C)), backend.Whole(h.be.Alloc(C)), backend.Whole(h.be.Alloc(C))
		h.be.LayerNormBackward(dinp, dw, db, h.up(dout), xt, wt, mean, rstd, rows, C)
		h.dirDeriv(fmt.Sprintf("layernorm dinp C=%d", C), x, h.down(dinp), func(x []float64) float64 { return dot(refLayerNorm(x, wf, bf, rows, C), dout) })
		h.dirDeriv(fmt.Sprintf("layernorm dw C=%d", C), w, h.down(dw), func(w []float64) float64 { return dot(refLayerNorm(xf, w, bf, rows, C), dout) })
		h.dirDeriv(fmt.Sprintf("layernorm db C=%d", C), b, h.down(db), func(b []float64) float64 { return dot(refLayerNorm(xf, wf, b, rows, C), dout) })
	}
}

func refMatmul(x, w, bias []float64, rows, C, OC int) []float64 {
	out := make([]float64, rows*OC)
	for r := 0; r < rows; r++ {
		for o := 0; o < OC; o++ {
			s := 0.0
			if bias != nil {
				s = bias[o]
			}
			for i := 0; i < C; i++ {
				s += x[r*C+i] * w[o*C+i]
			}
			out[r*OC+o] = s
		}
	}
	return out
}

func matmul(h *harness) {
	for _, sh := range [][3]int{{1, 1, 1}, {7, 5, 3}, {37, 24, 72}, {130, 64, 3}} {
		rows, C, OC := sh[0], sh[1], sh[2]
		x, w, bias := h.rand(rows*C, 1), h.rand(OC*C, 1), h.rand(OC, 1)
		xf, wf, bf := f64(x), f64(w), f64(bias)
		xt, wt := h.up(x), h.up(w)
		for _, withBias := range []bool{true, false} {
			out := backend.Whole(h.be.Alloc(rows * OC))
			bt, bref := h.up(bias), bf
			if !withBias {
				bt, bref = backend.Tensor{}, nil
			}
			h.be.MatmulForward(out, xt, wt, bt, rows, C, OC)
			h.near(fmt.Sprintf("matmul %v bias=%v", sh, withBias), h.down(out), refMatmul(xf, wf, bref, rows, C, OC), fwdTol*math.Sqrt(float64(C)), false)
		}
		dout := h.rand(rows*OC, 1)
		for _, set := range []bool{false, true} {
			d0 := h.rand(rows*C, 1)
			dinp, dw, db := h.up(d0), backend.Whole(h.be.Alloc(OC*C)), backend.Whole(h.be.Alloc(OC))
			h.be.MatmulBackward(dinp, dw, db, h.up(dout), xt, wt, rows, C, OC, set)
			gi := h.down(dinp)
			if !set {
				for i := range gi {
					gi[i] -= d0[i] // accumulated onto d0
				}
			}
			what := fmt.Sprintf("matmul %v setDinp=%v", sh, set)
			h.dirDeriv(what+" dinp", x, gi, func(x []float64) float64 { return dot(refMatmul(x, wf, bf, rows, C, OC), dout) })
			h.dirDeriv(what+" dw", w, h.down(dw), func(w []float64) float64 { return dot(refMatmul(xf, w, bf, rows, C, OC), dout) })
			h.dirDeriv(what+" dbias", bias, h.down(db), func(b []float64) float64 { return dot(refMatmul(xf, wf, b, rows, C, OC), dout) })
		}
	}
}

func refAttention(qkv []float64, B, T, C, NH int) []float64 {
	hs := C / NH
	out := make([]float64, B*T*C)
	at := func(b, t, part, hh, i int) float64 { return qkv[(b*T+t)*3*C+part*C+hh*hs+i] }
	for b := 0; b < B; b++ {
		for hh := 0; hh < NH; hh++ {
			for t := 0; t < T; t++ {
				s := make([]float64, t+1)
				mx := math.Inf(-1)
				for t2 := range s {
					for i := 0; i < hs; i++ {
						s[t2] += at(b, t, 0, hh, i) * at(b, t2, 1, hh, i)
					}
					s[t2] /= math.Sqrt(float64(hs))
					mx = math.Max(mx, s[t2])
				}
				sum := 0.0
				for t2 := range s {
					s[t2] = math.Exp(s[t2] - mx)
					sum += s[t2]
				}
				for t2 := range s {
					for i := 0; i < hs; i++ {
						out[(b*T+t)*C+hh*hs+i] += s[t2] / sum * at(b, t2, 2, hh, i)
					}
				}
			}
		}
	}
	return out
}

func attention(h *harness) {
	for _, sh := range [][4]int{{1, 1, 8, 2}, {2, 13, 16, 4}, {1, 50, 12, 3}, {2, 100, 32, 2}} {
		B, T, C, NH := sh[0], sh[1], sh[2], sh[3]
		qkv := h.rand(B*T*3*C, 1)
		qf := f64(qkv)
		qt := h.up(qkv)
		out, lse := backend.Whole(h.be.Alloc(B*T*C)), backend.Whole(h.be.Alloc(B*NH*T))
		h.be.AttentionForward(out, lse, qt, B, T, C, NH)
		want := refAttention(qf, B, T, C, NH)
		what := fmt.Sprintf("attention B=%d T=%d C=%d NH=%d", B, T, C, NH)
		h.near(what, h.down(out), want, 1e-4, false)
		out2 := backend.Whole(h.be.Alloc(B * T * C))
		h.be.AttentionForward(out2, backend.Tensor{}, qt, B, T, C, NH)
		h.near(what+" without lse", h.down(out2), want, 1e-4, false)
		dout := h.rand(B*T*C, 1)
		d0 := h.rand(len(qkv), 1)
		dqkv := h.up(d0)
		h.be.AttentionBackward(dqkv, h.up(dout), qt, lse, B, T, C, NH)
		g := h.down(dqkv)
		for i := range g {
			g[i] -= d0[i]
		}
		h.dirDeriv(what+" backward", qkv, g, func(x []float64) float64 { return dot(refAttention(x, B, T, C, NH), dout) })
	}
}

func refAct(act backend.Activation, x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		if act == backend.ReLU {
			out[i] = math.Max(v, 0)
		} else {
			out[i] = v * 0.5 * (1 + math.Erf(v/math.Sqrt2))
		}
	}
	return out
}

func activation(h *harness) {
	for _, act := range []backend.Activation{backend.ReLU, backend.GELU} {
		n := 3000
		x := h.rand(n, 2)
		for i, v := range x {
			if math.Abs(float64(v)) < 1e-2 {
				x[i] = 0.5 // keep ReLU's kink away from the differences
			}
		}
		xt := h.up(x)
		out := backend.Whole(h.be.Alloc(n))
		h.be.ActivationForward(act, out, xt)
		h.near(fmt.Sprintf("activation %d", act), h.down(out), refAct(act, f64(x)), 1e-6, false)
		dout := h.rand(n, 1)
		dinp := h.up(h.rand(n, 1)) // overwritten
		h.be.ActivationBackward(act, dinp, xt, h.up(dout))
		h.dirDeriv(fmt.Sprintf("activation %d backward (overwrites)", act), x, h.down(dinp), func(x []float64) float64 { return dot(refAct(act, x), dout) })
	}
}

func add(h *harness) {
	n := 1001
	a, b := h.rand(n, 1), h.rand(n, 1)
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(a[i] + b[i])
	}
	at, bt := h.up(a), h.up(b)
	out := backend.Whole(h.be.Alloc(n))
	h.be.Add(out, at, bt)
	h.near("add", h.down(out), want, 0, false)
	h.be.Add(at, at, bt)
	h.near("add in place", h.down(at), want, 0, false)
}

func refCE(logits []float64, tok []byte, B, T, A int) (probs []float64, losses []float64, sum float64) {
	probs, losses = make([]float64, len(logits)), make([]float64, B*T)
	for r := 0; r < B*T; r++ {
		l := logits[r*A : (r+1)*A]
		mx := math.Inf(-1)
		for _, v := range l {
			mx = math.Max(mx, v)
		}
		z := 0.0
		for _, v := range l {
			z += math.Exp(v - mx)
		}
		for i, v := range l {
			probs[r*A+i] = math.Exp(v-mx) / z
		}
		if r%T != T-1 {
			losses[r] = math.Log(z) + mx - l[tok[r+1]]
			sum += losses[r]
		}
	}
	return probs, losses, sum
}

func crossEntropy(h *harness) {
	B, T, A := 3, 7, 5
	logits := h.rand(B*T*A, 3)
	tok := make([]byte, B*T)
	for i := range tok {
		tok[i] = byte(h.r.IntN(A))
	}
	tk := h.tokens(tok)
	lt := h.up(logits)
	probs, losses := backend.Whole(h.be.Alloc(B*T*A)), backend.Whole(h.be.Alloc(B*T))
	sum := h.be.CrossEntropyForward(probs, losses, lt, tk, B, T, A)
	wp, wl, ws := refCE(f64(logits), tok, B, T, A)
	h.near("cross-entropy probs", h.down(probs), wp, 1e-6, false)
	h.near("cross-entropy losses", h.down(losses), wl, 1e-5, false)
	if math.Abs(sum-ws) > 1e-5*math.Abs(ws) {
		h.t.Fatalf("cross-entropy sum %v, reference %v", sum, ws)
	}
	dl := h.up(h.rand(B*T*A, 1)) // overwritten
	const scale = 0.37
	h.be.CrossEntropyBackward(dl, probs, tk, scale, B, T, A)
	h.dirDeriv("cross-entropy backward", logits, h.down(dl), func(x []float64) float64 {
		_, _, s := refCE(x, tok, B, T, A)
		return scale * s
	})
}

func optimizer(h *harness) {
	n := 5000
	g := h.rand(n, 1)
	gt := h.up(g)
	ss := 0.0
	for _, v := range g {
		ss += float64(v) * float64(v)
	}
	if got := h.be.SumSquares(gt); math.Abs(got-ss) > 1e-9*ss {
		h.t.Fatalf("SumSquares %v, reference %v", got, ss)
	}
	h.be.Scale(gt, 0.5)
	want := make([]float64, n)
	for i, v := range g {
		want[i] = float64(v * 0.5)
	}
	h.near("scale", h.down(gt), want, 0, false)

	p, m, v := h.rand(n, 1), h.rand(n, 0.1), h.rand(n, 0.1)
	for i := range v {
		v[i] *= v[i]
	}
	st := backend.AdamWStep{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, T: 3}
	pt, mt, vt := h.up(p), h.up(m), h.up(v)
	h.be.AdamW(pt, h.up(g), mt, vt, st)
	wp, wm, wv := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range p {
		gi := float64(g[i])
		wm[i] = 0.9*float64(m[i]) + 0.1*gi
		wv[i] = 0.999*float64(v[i]) + 0.001*gi*gi
		mh := wm[i] / (1 - math.Pow(0.9, 3))
		vh := wv[i] / (1 - math.Pow(0.999, 3))
		wp[i] = float64(p[i])*(1-0.01*0.1) - 0.01*mh/(math.Sqrt(vh)+1e-8)
	}
	h.near("adamw params", h.down(pt), wp, 1e-6, false)
	h.near("adamw m", h.down(mt), wm, 1e-6, false)
	h.near("adamw v", h.down(vt), wv, 1e-6, false)
}
