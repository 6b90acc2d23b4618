// Package backendtest is the conformance suite of the transformer engine's
// backends: Run checks every operation of a backend.Backend against
// float64 references written from the definitions in package backend,
// every backward operation against central differences of its forward
// reference, the lifetime methods (Alloc errors, Free, Close), and that
// every op's results are bit-identical whatever the number of threads.
// The CPU backend runs it for every kernel set this machine has
// (backend/cpu's tests); a GPU backend runs the same suite.
package backendtest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
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

// alloc returns a fresh buffer of n elements (the test fails if it
// cannot be had).
func (h *harness) alloc(n int) backend.Tensor {
	h.t.Helper()
	t, err := backend.AllocTensor(h.be, n)
	if err != nil {
		h.t.Fatalf("Alloc(%d): %v", n, err)
	}
	return t
}

// up uploads host data into a fresh buffer.
func (h *harness) up(x []float32) backend.Tensor {
	t := h.alloc(len(x))
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
	h.t.Helper()
	t, err := h.be.AllocTokens(len(x))
	if err != nil {
		h.t.Fatalf("AllocTokens(%d): %v", len(x), err)
	}
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

// Run runs the conformance suite on backends made by open: one for the
// ops (closed at the end), fresh ones for the lifetime checks.
func Run(t *testing.T, open func() (backend.Backend, error)) {
	be, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := be.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	for _, c := range []struct {
		name string
		f    func(*harness)
	}{
		{"memory", memory},
		{"free", free},
		{"allocerrors", allocErrors},
		{"encoder", encoder},
		{"layernorm", layernorm},
		{"matmul", matmul},
		{"attention", attention},
		{"activation", activation},
		{"add", add},
		{"crossentropy", crossEntropy},
		{"optimizer", optimizer},
		{"threads", threads},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f(&harness{t: t, be: be, r: rand.New(rand.NewPCG(7, uint64(len(c.name))))})
		})
	}
	t.Run("close", func(t *testing.T) { closing(t, open) })
}

func memory(h *harness) {
	x := h.rand(100, 1)
	t := h.up(x)
	got := h.down(t.Slice(10, 20))
	h.near("download of a slice", got, f64(x[10:30]), 0, false)
	y := h.alloc(20)
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
	if z := h.down(h.alloc(8)); z[3] != 0 {
		h.t.Fatal("Alloc is not zeroed")
	}
}

// foreign is a buffer and symbol storage of no backend.
type foreign struct{}

func (foreign) Len() int { return 1 }

// panics reports whether f panics.
func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// free checks Free and FreeTokens: a freed buffer cannot be used or freed
// again, nil is nothing to free, another backend's storage is refused,
// and freeing does not disturb other buffers.
func free(h *harness) {
	x := h.rand(64, 1)
	keep, gone := h.up(x), h.up(x)
	if err := h.be.Free(gone.Buf); err != nil {
		h.t.Fatalf("Free: %v", err)
	}
	if err := h.be.Free(gone.Buf); !errors.Is(err, backend.ErrFreed) {
		h.t.Fatalf("second Free: %v, want ErrFreed", err)
	}
	if !panics(func() { h.be.Upload(gone, x) }) {
		h.t.Fatal("Upload into a freed buffer did not panic")
	}
	if !panics(func() { h.be.Zero(gone.Slice(1, 3)) }) {
		h.t.Fatal("an op on a view of a freed buffer did not panic")
	}
	h.near("a buffer beside a freed one", h.down(keep), f64(x), 0, false)
	if err := h.be.Free(nil); err != nil {
		h.t.Fatalf("Free(nil): %v", err)
	}
	if err := h.be.Free(foreign{}); !errors.Is(err, backend.ErrForeign) {
		h.t.Fatalf("Free of a foreign buffer: %v, want ErrForeign", err)
	}
	tok := h.tokens([]byte{1, 2, 3})
	if err := h.be.FreeTokens(tok); err != nil {
		h.t.Fatalf("FreeTokens: %v", err)
	}
	if err := h.be.FreeTokens(tok); !errors.Is(err, backend.ErrFreed) {
		h.t.Fatalf("second FreeTokens: %v, want ErrFreed", err)
	}
	if err := h.be.FreeTokens(nil); err != nil {
		h.t.Fatalf("FreeTokens(nil): %v", err)
	}
	if err := h.be.FreeTokens(foreign{}); !errors.Is(err, backend.ErrForeign) {
		h.t.Fatalf("FreeTokens of foreign tokens: %v, want ErrForeign", err)
	}
	// many allocations freed in turn (256 MiB in all)
	for i := 0; i < 16; i++ {
		b := h.alloc(1 << 22)
		if err := h.be.Free(b.Buf); err != nil {
			h.t.Fatalf("Free of allocation %d: %v", i, err)
		}
	}
	// FreeAll skips absent tensors and repeated buffers
	a, b := h.alloc(8), h.alloc(8)
	if err := backend.FreeAll(h.be, a, backend.Tensor{}, a.Slice(2, 3), b); err != nil {
		h.t.Fatalf("FreeAll: %v", err)
	}
	if err := h.be.Free(b.Buf); !errors.Is(err, backend.ErrFreed) {
		h.t.Fatalf("Free after FreeAll: %v, want ErrFreed", err)
	}
}

// allocErrors checks that impossible allocations are errors, not panics:
// a negative size, and sizes beyond any memory (ErrOutOfMemory).
func allocErrors(h *harness) {
	if b, err := h.be.Alloc(-1); err == nil {
		h.t.Fatalf("Alloc(-1) = %v, want an error", b)
	}
	if b, err := h.be.AllocTokens(-1); err == nil {
		h.t.Fatalf("AllocTokens(-1) = %v, want an error", b)
	}
	for _, n := range []int{math.MaxInt, math.MaxInt / 4, math.MaxInt / 64, 1 << 50} {
		if b, err := h.be.Alloc(n); !errors.Is(err, backend.ErrOutOfMemory) {
			h.t.Fatalf("Alloc(%d) = %v, %v; want ErrOutOfMemory", n, b, err)
		}
		if b, err := h.be.AllocTokens(n); !errors.Is(err, backend.ErrOutOfMemory) {
			h.t.Fatalf("AllocTokens(%d) = %v, %v; want ErrOutOfMemory", n, b, err)
		}
	}
	z := h.alloc(0)
	if z.Len != 0 {
		h.t.Fatalf("Alloc(0) has %d elements", z.Len)
	}
	if err := h.be.Free(z.Buf); err != nil {
		h.t.Fatalf("Free of an empty buffer: %v", err)
	}
	// the backend still works after the failures
	x := h.rand(10, 1)
	h.near("upload after failed allocations", h.down(h.up(x)), f64(x), 0, false)
}

// closing checks Close on a fresh backend: later allocations fail with
// ErrClosed, and a second Close does nothing.
func closing(t *testing.T, open func() (backend.Backend, error)) {
	be, err := open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := be.Alloc(16)
	if err != nil {
		t.Fatal(err)
	}
	if err := be.Free(b); err != nil {
		t.Fatal(err)
	}
	if _, err := be.Alloc(16); err != nil {
		t.Fatal(err) // left for Close to release
	}
	if err := be.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := be.Alloc(16); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("Alloc after Close: %v, want ErrClosed", err)
	}
	if _, err := be.AllocTokens(16); !errors.Is(err, backend.ErrClosed) {
		t.Fatalf("AllocTokens after Close: %v, want ErrClosed", err)
	}
	if err := be.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
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
	out := h.alloc(B * T * C)
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
		out, mean, rstd := h.alloc(rows*C), h.alloc(rows), h.alloc(rows)
		xt, wt, bt := h.up(x), h.up(w), h.up(b)
		h.be.LayerNormForward(out, mean, rstd, xt, wt, bt, rows, C)
		xf, wf, bf := f64(x), f64(w), f64(b)
		h.near(fmt.Sprintf("layernorm C=%d", C), h.down(out), refLayerNorm(xf, wf, bf, rows, C), 1e-4, false)
		if C == 1 {
			continue // the output is b: no dependence on x
		}
		dout := h.rand(rows*C, 1)
		dinp, dw, db := h.alloc(rows*C), h.alloc(C), h.alloc(C)
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
			out := h.alloc(rows * OC)
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
			dinp, dw, db := h.up(d0), h.alloc(OC*C), h.alloc(OC)
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

// refWeights is the float64 reference of AttentionWeights: (B,NH,T,T).
func refWeights(qkv []float64, B, T, C, NH int) []float64 {
	hs := C / NH
	out := make([]float64, B*NH*T*T)
	at := func(b, t, part, hh, i int) float64 { return qkv[(b*T+t)*3*C+part*C+hh*hs+i] }
	for b := 0; b < B; b++ {
		for hh := 0; hh < NH; hh++ {
			for t := 0; t < T; t++ {
				row := out[((b*NH+hh)*T+t)*T:][:t+1]
				mx := math.Inf(-1)
				for t2 := range row {
					for i := 0; i < hs; i++ {
						row[t2] += at(b, t, 0, hh, i) * at(b, t2, 1, hh, i)
					}
					row[t2] /= math.Sqrt(float64(hs))
					mx = math.Max(mx, row[t2])
				}
				sum := 0.0
				for t2 := range row {
					row[t2] = math.Exp(row[t2] - mx)
					sum += row[t2]
				}
				for t2 := range row {
					row[t2] /= sum
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
		out, lse := h.alloc(B*T*C), h.alloc(B*NH*T)
		h.be.AttentionForward(out, lse, qt, B, T, C, NH)
		want := refAttention(qf, B, T, C, NH)
		what := fmt.Sprintf("attention B=%d T=%d C=%d NH=%d", B, T, C, NH)
		h.near(what, h.down(out), want, 1e-4, false)
		out2 := h.alloc(B * T * C)
		h.be.AttentionForward(out2, backend.Tensor{}, qt, B, T, C, NH)
		h.near(what+" without lse", h.down(out2), want, 1e-4, false)
		wts := h.up(h.rand(B*NH*T*T, 1)) // overwritten, zeros above the diagonal included
		h.be.AttentionWeights(wts, qt, B, T, C, NH)
		h.near(what+" weights", h.down(wts), refWeights(qf, B, T, C, NH), 1e-5, false)
		dout := h.rand(B*T*C, 1)
		d0 := h.rand(len(qkv), 1)
		for i := range d0 { // AttentionBackward sets dqkv: what it held must not count
			d0[i] = float32(math.NaN())
		}
		dqkv := h.up(d0)
		h.be.AttentionBackward(dqkv, h.up(dout), qt, lse, B, T, C, NH)
		g := h.down(dqkv)
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
		out := h.alloc(n)
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
	out := h.alloc(n)
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
	probs, losses := h.alloc(B*T*A), h.alloc(B*T)
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

// threadCounts are the GOMAXPROCS values under which threads runs every
// op; the first is the reference.
var threadCounts = []int{1, 2, 3, 5}

// threads checks that every op gives bit-identical results whatever the
// number of threads: the same inputs (sized so that the CPU backend splits
// every op it parallelises into several parts) under GOMAXPROCS 1, 2, 3
// and 5.
func threads(h *harness) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	var ref []namedResult
	for _, procs := range threadCounts {
		runtime.GOMAXPROCS(procs)
		got := h.allOps()
		if ref == nil {
			ref = got
			continue
		}
		for i, r := range got {
			want := ref[i]
			for j := range r.v {
				if math.Float32bits(r.v[j]) != math.Float32bits(want.v[j]) {
					h.t.Fatalf("%s with GOMAXPROCS %d: element %d = %.9g, with %d %.9g", r.name, procs, j, r.v[j], threadCounts[0], want.v[j])
				}
			}
			if math.Float64bits(r.sum) != math.Float64bits(want.sum) {
				h.t.Fatalf("%s with GOMAXPROCS %d: %.17g, with %d %.17g", r.name, procs, r.sum, threadCounts[0], want.sum)
			}
		}
	}
}

// namedResult is an op's output downloaded to the host (v), or a
// returned sum.
type namedResult struct {
	name string
	v    []float32
	sum  float64
}

// allOps runs every op of the interface on inputs drawn from a fixed seed
// and returns every output; the buffers are freed.
func (h *harness) allOps() []namedResult {
	saved := h.r
	h.r = rand.New(rand.NewPCG(99, 1))
	defer func() { h.r = saved }()
	r := &opsRun{h: h}
	defer func() {
		if err := backend.FreeAll(h.be, r.bufs...); err != nil {
			h.t.Fatal(err)
		}
	}()
	r.encoder()
	r.layernorm()
	r.matmul()
	r.attention()
	r.elementwise()
	r.crossEntropy()
	r.optimiser()
	r.memory()
	return r.out
}

// opsRun is one run of allOps: the outputs kept so far, in order, and the
// buffers to free at its end.
type opsRun struct {
	h    *harness
	out  []namedResult
	bufs []backend.Tensor
}

// keep downloads ts and appends them to the outputs as name[0], name[1], ….
func (r *opsRun) keep(name string, ts ...backend.Tensor) {
	for i, t := range ts {
		r.out = append(r.out, namedResult{name: fmt.Sprintf("%s[%d]", name, i), v: r.h.down(t)})
	}
}

// up uploads x into a buffer freed at the end of the run.
func (r *opsRun) up(x []float32) backend.Tensor { t := r.h.up(x); r.bufs = append(r.bufs, t); return t }

// alloc allocates n values, freed at the end of the run.
func (r *opsRun) alloc(n int) backend.Tensor { t := r.h.alloc(n); r.bufs = append(r.bufs, t); return t }

// tokens uploads n random tokens of an alphabet of A symbols.
func (r *opsRun) tokens(n, A int) backend.Tokens {
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(r.h.r.IntN(A))
	}
	return r.h.tokens(x)
}

// encoder runs EncoderForward and EncoderBackward.
func (r *opsRun) encoder() {
	h := r.h
	B, T, C, A := 4, 64, 32, 5
	tok := r.tokens(B*T, A)
	wte, pos := r.up(h.rand(A*C, 1)), r.up(h.rand(T*C, 1))
	o := r.alloc(B * T * C)
	h.be.EncoderForward(o, tok, wte, pos, B, T, C)
	dwte, dpos := r.up(h.rand(A*C, 1)), r.up(h.rand(T*C, 1))
	h.be.EncoderBackward(dwte, dpos, r.up(h.rand(B*T*C, 1)), tok, B, T, C)
	r.keep("encoder", o, dwte, dpos)
}

// layernorm runs LayerNormForward and LayerNormBackward on 700 rows, 3
// chunks of the CPU backend.
func (r *opsRun) layernorm() {
	h := r.h
	rows, C := 700, 48
	x, w, b := r.up(h.rand(rows*C, 2)), r.up(h.rand(C, 1)), r.up(h.rand(C, 1))
	o, mean, rstd := r.alloc(rows*C), r.alloc(rows), r.alloc(rows)
	h.be.LayerNormForward(o, mean, rstd, x, w, b, rows, C)
	dx, dw, db := r.up(h.rand(rows*C, 1)), r.up(h.rand(C, 1)), r.up(h.rand(C, 1))
	h.be.LayerNormBackward(dx, dw, db, r.up(h.rand(rows*C, 1)), x, w, mean, rstd, rows, C)
	r.keep("layernorm", o, mean, rstd, dx, dw, db)
}

// matmul runs MatmulForward and MatmulBackward (setting and adding to
// dinp) on products large enough to be split by rows and by columns, and
// on a small one.
func (r *opsRun) matmul() {
	h := r.h
	for _, sh := range [][3]int{{300, 64, 96}, {40, 64, 500}, {3, 5, 7}} {
		rows, C, OC := sh[0], sh[1], sh[2]
		x, w, bias := r.up(h.rand(rows*C, 1)), r.up(h.rand(OC*C, 1)), r.up(h.rand(OC, 1))
		o := r.alloc(rows * OC)
		h.be.MatmulForward(o, x, w, bias, rows, C, OC)
		dout := r.up(h.rand(rows*OC, 1))
		for _, set := range []bool{false, true} {
			dx, dw, db := r.up(h.rand(rows*C, 1)), r.up(h.rand(OC*C, 1)), r.up(h.rand(OC, 1))
			h.be.MatmulBackward(dx, dw, db, dout, x, w, rows, C, OC, set)
			r.keep(fmt.Sprintf("matmul %v setDinp=%v", sh, set), dx, dw, db)
		}
		r.keep(fmt.Sprintf("matmul %v", sh), o)
	}
}

// attention runs AttentionForward, AttentionBackward and AttentionWeights
// on 8 (b, h) pairs of several row blocks each.
func (r *opsRun) attention() {
	h := r.h
	B, T, C, NH := 2, 150, 32, 4
	qkv := r.up(h.rand(B*T*3*C, 1))
	o, lse := r.alloc(B*T*C), r.alloc(B*NH*T)
	h.be.AttentionForward(o, lse, qkv, B, T, C, NH)
	dqkv := r.up(h.rand(B*T*3*C, 1))
	h.be.AttentionBackward(dqkv, r.up(h.rand(B*T*C, 1)), qkv, lse, B, T, C, NH)
	wts := r.alloc(B * NH * T * T)
	h.be.AttentionWeights(wts, qkv, B, T, C, NH)
	r.keep("attention", o, lse, dqkv, wts)
}

// elementwise runs ActivationForward and ActivationBackward of ReLU and
// GELU, then Add (into a new buffer and in place), on 40000 values, 3
// chunks of the CPU backend.
func (r *opsRun) elementwise() {
	h := r.h
	n := 40000
	for _, act := range []backend.Activation{backend.ReLU, backend.GELU} {
		x := r.up(h.rand(n, 2))
		o, d := r.alloc(n), r.alloc(n)
		h.be.ActivationForward(act, o, x)
		h.be.ActivationBackward(act, d, x, r.up(h.rand(n, 1)))
		r.keep(fmt.Sprintf("activation %d", act), o, d)
	}
	a, b := r.up(h.rand(n, 1)), r.up(h.rand(n, 1))
	o := r.alloc(n)
	h.be.Add(o, a, b)
	h.be.Add(a, a, b)
	r.keep("add", o, a)
}

// crossEntropy runs CrossEntropyForward (keeping its returned sum) and
// CrossEntropyBackward.
func (r *opsRun) crossEntropy() {
	h := r.h
	B, T, A := 4, 64, 7
	tok := r.tokens(B*T, A)
	logits := r.up(h.rand(B*T*A, 3))
	probs, losses := r.alloc(B*T*A), r.alloc(B*T)
	sum := h.be.CrossEntropyForward(probs, losses, logits, tok, B, T, A)
	r.out = append(r.out, namedResult{name: "cross-entropy sum", sum: sum})
	dl := r.alloc(B * T * A)
	h.be.CrossEntropyBackward(dl, probs, tok, 0.25, B, T, A)
	r.keep("cross-entropy", probs, losses, dl)
}

// optimiser runs SumSquares, Scale and AdamW on 20000 parameters, 5
// chunks of the CPU backend.
func (r *opsRun) optimiser() {
	h := r.h
	m := 20000
	g := r.up(h.rand(m, 1))
	r.out = append(r.out, namedResult{name: "sum of squares", sum: h.be.SumSquares(g)})
	h.be.Scale(g, 0.75)
	v0 := h.rand(m, 0.1)
	for i := range v0 {
		v0[i] *= v0[i]
	}
	p, mm, vv := r.up(h.rand(m, 1)), r.up(h.rand(m, 0.1)), r.up(v0)
	h.be.AdamW(p, g, mm, vv, backend.AdamWStep{LR: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.1, T: 7})
	r.keep("optimiser", g, p, mm, vv)
}

// memory runs Copy from a slice and Zero of a slice.
func (r *opsRun) memory() {
	x := r.up(r.h.rand(1000, 1))
	y := r.alloc(600)
	r.h.be.Copy(y, x.Slice(300, 600))
	r.h.be.Zero(x.Slice(100, 50))
	r.keep("memory", x, y)
}
