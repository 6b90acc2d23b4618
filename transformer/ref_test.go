package transformer

import (
	"math"
)

// refModel is an independent float64 reference of the architecture,
// written with plain loops straight from the definitions; it shares only
// Config.Layout (tensor names and offsets) with the engine. It is used for
// the logits comparison and as the loss of the finite-difference checks.
type refModel struct {
	cfg Config
	t   map[string][]float64
	// encDelta, when non-nil, is added to the embedding output (B,T,E), so
	// that finite differences can probe the gradient with respect to it.
	encDelta []float64
	// weights, when non-nil, may replace the attention weights of head m
	// of layer l at query t of window x (T symbols): a non-nil result
	// (t+1 weights) is used in place of the softmax.
	weights func(l, m, t int, x []byte) []float64
}

func newRef(cfg Config, flat []float64) *refModel {
	r := &refModel{cfg: cfg, t: map[string][]float64{}}
	for _, ti := range cfg.Layout() {
		r.t[ti.Name] = flat[ti.Offset : ti.Offset+ti.Size]
	}
	return r
}

func toF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// linear returns W·x + b for W [out, in] row-major.
func refLinear(W, b, x []float64) []float64 {
	out := make([]float64, len(b))
	in := len(x)
	for o := range out {
		s := b[o]
		for i := 0; i < in; i++ {
			s += W[o*in+i] * x[i]
		}
		out[o] = s
	}
	return out
}

func refLN(x, w, b []float64) []float64 {
	n := float64(len(x))
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= n
	v2 := 0.0
	for _, v := range x {
		v2 += (v - m) * (v - m)
	}
	v2 /= n
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = (v-m)/math.Sqrt(v2+1e-5)*w[i] + b[i]
	}
	return out
}

func refAdd(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// forward returns the logits [b][t][a] of B windows of T symbols and the
// summed cross-entropy over the B·(T−1) targets.
func (r *refModel) forward(x []byte, B, T int) ([][][]float64, float64) {
	c := r.cfg
	E, A := c.Embed, c.Alphabet
	logits := make([][][]float64, B)
	total := 0.0
	for b := 0; b < B; b++ {
		h := make([][]float64, T)
		for t := 0; t < T; t++ {
			h[t] = make([]float64, E)
			for i := 0; i < E; i++ {
				var pe float64
				if c.Positional == Learned {
					pe = r.t["wpe"][t*E+i]
				} else {
					w := math.Pow(10000, -float64(i-i%2)/float64(E))
					if i%2 == 0 {
						pe = math.Sin(float64(t) * w)
					} else {
						pe = math.Cos(float64(t) * w)
					}
				}
				h[t][i] = r.t["wte"][int(x[b*T+t])*E+i] + pe
				if r.encDelta != nil {
					h[t][i] += r.encDelta[(b*T+t)*E+i]
				}
			}
		}
		for l := 0; l < c.Layers; l++ {
			p := func(s string) []float64 { return r.t["h."+itoa(l)+"."+s] }
			NH := c.Heads[l]
			hs := E / NH
			qkv := make([][]float64, T)
			for t := 0; t < T; t++ {
				u := h[t]
				if c.LayerNorm {
					u = refLN(u, p("ln1.weight"), p("ln1.bias"))
				}
				qkv[t] = refLinear(p("attn.qkv.weight"), p("attn.qkv.bias"), u)
			}
			h2 := make([][]float64, T)
			for t := 0; t < T; t++ {
				y := make([]float64, E)
				for m := 0; m < NH; m++ {
					sc := make([]float64, t+1)
					mx := math.Inf(-1)
					for t2 := 0; t2 <= t; t2++ {
						s := 0.0
						for i := 0; i < hs; i++ {
							s += qkv[t][m*hs+i] * qkv[t2][E+m*hs+i]
						}
						sc[t2] = s / math.Sqrt(float64(hs))
						mx = math.Max(mx, sc[t2])
					}
					z := 0.0
					for t2 := range sc {
						sc[t2] = math.Exp(sc[t2] - mx)
						z += sc[t2]
					}
					if r.weights != nil {
						if w := r.weights(l, m, t, x[b*T:(b+1)*T]); w != nil {
							sc, z = w, 1
						}
					}
					for t2 := range sc {
						for i := 0; i < hs; i++ {
							y[m*hs+i] += sc[t2] / z * qkv[t2][2*E+m*hs+i]
						}
					}
				}
				h2[t] = refAdd(h[t], refLinear(p("attn.proj.weight"), p("attn.proj.bias"), y))
			}
			h = h2
			if c.FeedForward {
				for t := 0; t < T; t++ {
					u := h[t]
					if c.LayerNorm {
						u = refLN(u, p("ln2.weight"), p("ln2.bias"))
					}
					f := refLinear(p("mlp.fc.weight"), p("mlp.fc.bias"), u)
					for i, v := range f {
						if c.Activation == ReLU {
							f[i] = math.Max(v, 0)
						} else {
							f[i] = 0.5 * v * (1 + math.Erf(v/math.Sqrt2))
						}
					}
					h[t] = refAdd(h[t], refLinear(p("mlp.proj.weight"), p("mlp.proj.bias"), f))
				}
			}
		}
		logits[b] = make([][]float64, T)
		for t := 0; t < T; t++ {
			u := h[t]
			if c.LayerNorm {
				u = refLN(u, r.t["lnf.weight"], r.t["lnf.bias"])
			}
			lg := refLinear(r.t["head.weight"], r.t["head.bias"], u)
			logits[b][t] = lg
			if t < T-1 {
				mx := math.Inf(-1)
				for _, v := range lg {
					mx = math.Max(mx, v)
				}
				z := 0.0
				for _, v := range lg {
					z += math.Exp(v - mx)
				}
				total += math.Log(z) + mx - lg[int(x[b*T+t+1])]
			}
		}
		_ = A
	}
	return logits, total
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + itoa(i%10)
}
