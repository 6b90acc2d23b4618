package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// refAttention is a float64 reference of causal attention: the output
// (B,T,C) and, given dout, the gradient with respect to qkv (B,T,3C).
func refAttention(qkv, dout []float32, B, T, C, NH int) (out, dqkv []float64) {
	hs := C / NH
	scale := 1 / math.Sqrt(float64(hs))
	out = make([]float64, B*T*C)
	dqkv = make([]float64, B*T*3*C)
	at := func(b, t, part, h, i int) int { return (b*T+t)*3*C + part*C + h*hs + i }
	for b := 0; b < B; b++ {
		for h := 0; h < NH; h++ {
			for t := 0; t < T; t++ {
				s := make([]float64, t+1)
				m := math.Inf(-1)
				for t2 := 0; t2 <= t; t2++ {
					for i := 0; i < hs; i++ {
						s[t2] += float64(qkv[at(b, t, 0, h, i)]) * float64(qkv[at(b, t2, 1, h, i)])
					}
					s[t2] *= scale
					m = math.Max(m, s[t2])
				}
				sum := 0.0
				for t2 := range s {
					s[t2] = math.Exp(s[t2] - m)
					sum += s[t2]
				}
				dp := make([]float64, t+1)
				dot := 0.0
				for t2 := range s {
					s[t2] /= sum
					for i := 0; i < hs; i++ {
						out[(b*T+t)*C+h*hs+i] += s[t2] * float64(qkv[at(b, t2, 2, h, i)])
						g := float64(dout[(b*T+t)*C+h*hs+i])
						dp[t2] += g * float64(qkv[at(b, t2, 2, h, i)])
						dqkv[at(b, t2, 2, h, i)] += s[t2] * g
					}
					dot += s[t2] * dp[t2]
				}
				for t2 := range s {
					ds := s[t2] * (dp[t2] - dot) * scale
					for i := 0; i < hs; i++ {
						dqkv[at(b, t, 0, h, i)] += ds * float64(qkv[at(b, t2, 1, h, i)])
						dqkv[at(b, t2, 1, h, i)] += ds * float64(qkv[at(b, t, 0, h, i)])
					}
				}
			}
		}
	}
	return out, dqkv
}

// TestAttentionBlocks checks the blocked attention (several row blocks,
// partial last blocks, heads of 4..16) against the float64 reference with
// the portable, SIMD and naive kernels, and with the default backend (the
// fused kernels of head size 16 where its set has them), forward with and
// without kept weights, and backward (which sets dqkv: it is filled with NaN first).
func TestAttentionBlocks(t *testing.T) {
	ks := map[string]kernels.Kernel{"blocked": &kernels.Blocked{}, "naive": kernels.Naive{}}
	for _, info := range kernels.Sets() {
		if s, err := kernels.Lookup(info.Name); err == nil {
			ks[info.Name] = s.GEMM(0)
		}
	}
	ks["default"] = nil // kernels.Default() with its own attention (fused for head size 16 on avx512)
	r := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][4]int{{2, 1, 32, 2}, {2, 47, 32, 2}, {1, 48, 16, 4}, {2, 49, 32, 4}, {3, 100, 24, 3}, {1, 130, 64, 4}} {
		B, T, C, NH := sh[0], sh[1], sh[2], sh[3]
		qkv := make([]float32, B*T*3*C)
		for i := range qkv {
			qkv[i] = float32(r.NormFloat64())
		}
		dout := make([]float32, B*T*C)
		for i := range dout {
			dout[i] = float32(r.NormFloat64())
		}
		wantOut, wantD := refAttention(qkv, dout, B, T, C, NH)
		for name, k := range ks {
			t.Run(fmt.Sprintf("%s/B%d,T%d,C%d,NH%d", name, B, T, C, NH), func(t *testing.T) {
				be := withGemm(k)
				if k == nil { // the default backend: fused attention where the set has it
					be = cpu.New(kernels.Default())
				}
				out := make([]float32, B*T*C)
				lse := make([]float32, B*NH*T)
				be.AttentionForward(hostTensor(out), hostTensor(lse), hostTensor(qkv), B, T, C, NH)
				out2 := make([]float32, B*T*C)
				be.AttentionForward(hostTensor(out2), backend.Tensor{}, hostTensor(qkv), B, T, C, NH)
				for i, w := range wantOut {
					if d := math.Abs(float64(out[i]) - w); d > 1e-5*(1+math.Abs(w)) {
						t.Fatalf("out[%d] = %v, want %v", i, out[i], w)
					}
					if out2[i] != out[i] {
						t.Fatalf("out[%d] without weights %v, with %v", i, out2[i], out[i])
					}
				}
				dqkv := make([]float32, len(qkv))
				for i := range dqkv {
					dqkv[i] = float32(math.NaN()) // set, not read
				}
				be.AttentionBackward(hostTensor(dqkv), hostTensor(dout), hostTensor(qkv), hostTensor(lse), B, T, C, NH)
				for i, w := range wantD {
					if d := math.Abs(float64(dqkv[i]) - w); d > 2e-5*(1+math.Abs(w)) {
						t.Fatalf("dqkv[%d] = %v, want %v", i, dqkv[i], w)
					}
				}
			})
		}
	}
}

// TestKernelsAgree runs a forward and backward pass of a model whose
// attention spans several row blocks with every kernel set this CPU runs
// (GEMM and vector kernels),
// and compares the logits and gradients with those of the naive kernel.
func TestKernelsAgree(t *testing.T) {
	cfg := DefaultConfig(2, 4, 32, 100, 5)
	cfg.Heads = []int{4, 2}
	m := randomModel(t, cfg, 3, 0.1)
	B, T := 3, cfg.Context
	x := randomInputs(5, B*T, cfg.Alphabet)
	run := func(k kernels.Kernel, set string) ([]float32, []float32, float64) {
		if set != "" {
			if err := setKernelSet(m, set); err != nil {
				t.Fatal(err)
			}
		} else {
			setKernel(m, k)
		}
		acts := m.NewActivations(B, T, true)
		loss := m.Forward(acts, x, B, T)
		g := make([]float32, len(liveParams(m)))
		m.Backward(acts, hostTensor(g), 1/float32(B*(T-1)))
		return append([]float32(nil), acts.Logits()...), g, loss
	}
	defer func() { setKernel(m, nil) }()
	l0, g0, loss0 := run(kernels.Naive{}, "")
	for _, info := range kernels.Sets() {
		name := info.Name
		if !info.Usable {
			t.Logf("kernel set %s skipped: %s", name, info.Reason)
			continue
		}
		// the set's GEMM and its vector kernels
		l, g, loss := run(nil, name)
		if math.Abs(loss-loss0) > 1e-5*loss0 {
			t.Errorf("%s: loss %v, naive kernel %v", name, loss, loss0)
		}
		for i := range l {
			if d := math.Abs(float64(l[i] - l0[i])); d > 1e-5 {
				t.Fatalf("%s: logit %d = %v, naive kernel %v", name, i, l[i], l0[i])
			}
		}
		G := 0.0
		for _, v := range g0 {
			G = math.Max(G, math.Abs(float64(v)))
		}
		for i := range g {
			if d := math.Abs(float64(g[i] - g0[i])); d > 1e-3*math.Abs(float64(g0[i]))+1e-5*G {
				t.Fatalf("%s: gradient %d = %v, naive kernel %v", name, i, g[i], g0[i])
			}
		}
	}
}
