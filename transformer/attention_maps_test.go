package transformer

import (
	"math"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// attentionMaps is the float64 reference of Model.AttentionMaps: the
// layer loop of refModel.forward (one window), keeping every head's
// softmax weights [l][h][i][j] (j ≤ i).
func (r *refModel) attentionMaps(x []byte) [][][][]float64 {
	c := r.cfg
	E, T := c.Embed, len(x)
	h := make([][]float64, T)
	for t := range h {
		h[t] = make([]float64, E)
		for i := range E {
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
			h[t][i] = r.t["wte"][int(x[t])*E+i] + pe
		}
	}
	maps := make([][][][]float64, c.Layers)
	for l := 0; l < c.Layers; l++ {
		p := func(s string) []float64 { return r.t["h."+itoa(l)+"."+s] }
		NH := c.Heads[l]
		hs := E / NH
		qkv := make([][]float64, T)
		for t := range T {
			u := h[t]
			if c.LayerNorm {
				u = refLN(u, p("ln1.weight"), p("ln1.bias"))
			}
			qkv[t] = refLinear(p("attn.qkv.weight"), p("attn.qkv.bias"), u)
		}
		maps[l] = make([][][]float64, NH)
		for m := range NH {
			maps[l][m] = make([][]float64, T)
		}
		h2 := make([][]float64, T)
		for t := range T {
			y := make([]float64, E)
			for m := range NH {
				w := make([]float64, T)
				mx := math.Inf(-1)
				for t2 := 0; t2 <= t; t2++ {
					s := 0.0
					for i := range hs {
						s += qkv[t][m*hs+i] * qkv[t2][E+m*hs+i]
					}
					w[t2] = s / math.Sqrt(float64(hs))
					mx = math.Max(mx, w[t2])
				}
				z := 0.0
				for t2 := 0; t2 <= t; t2++ {
					w[t2] = math.Exp(w[t2] - mx)
					z += w[t2]
				}
				for t2 := 0; t2 <= t; t2++ {
					w[t2] /= z
					for i := range hs {
						y[m*hs+i] += w[t2] * qkv[t2][2*E+m*hs+i]
					}
				}
				maps[l][m][t] = w
			}
			h2[t] = refAdd(h[t], refLinear(p("attn.proj.weight"), p("attn.proj.bias"), y))
		}
		h = h2
		if c.FeedForward {
			for t := range T {
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
	return maps
}

// TestAttentionMaps compares the maps with the float64 reference (random
// models with sharp attention, every architecture variant, T up to 100:
// several of the engine's row blocks), and checks the causal zeros and
// that every row sums to 1.
func TestAttentionMaps(t *testing.T) {
	type tc struct {
		cfg Config
		T   int
	}
	var cases []tc
	for _, cfg := range tinyConfigs() {
		cases = append(cases, tc{cfg, 7}, tc{cfg, 3})
	}
	big := Config{Layers: 3, Heads: []int{4, 2, 1}, Embed: 16, Context: 100, Alphabet: 3,
		FeedForward: true, LayerNorm: true, Activation: GELU, Positional: Learned}
	cases = append(cases, tc{big, 100}, tc{big, 61})
	for ci, c := range cases {
		m := randomModel(t, c.cfg, uint64(ci+1), 0.5)
		x := randomInputs(uint64(ci+11), c.T, c.cfg.Alphabet)
		for _, k := range []kernels.Kernel{nil, &kernels.Blocked{}} {
			setKernel(m, k)
			got, err := m.AttentionMaps(x)
			if err != nil {
				t.Fatal(err)
			}
			want := newRef(c.cfg, toF64(liveParams(m))).attentionMaps(x)
			if len(got) != c.cfg.Layers {
				t.Fatalf("case %d: %d layers, want %d", ci, len(got), c.cfg.Layers)
			}
			sharp := 0.0
			for l := range got {
				if len(got[l]) != c.cfg.Heads[l] {
					t.Fatalf("case %d layer %d: %d heads, want %d", ci, l, len(got[l]), c.cfg.Heads[l])
				}
				for h, g := range got[l] {
					if len(g) != c.T*c.T {
						t.Fatalf("case %d: map of %d entries, want %d", ci, len(g), c.T*c.T)
					}
					for i := range c.T {
						sum := 0.0
						for j := range c.T {
							v := float64(g[i*c.T+j])
							if j > i {
								if v != 0 {
									t.Fatalf("case %d l%d h%d: weight %g above the diagonal at (%d,%d)", ci, l, h, v, i, j)
								}
								continue
							}
							sum += v
							sharp = math.Max(sharp, v*float64(min(i, 1)))
							if w := want[l][h][i][j]; math.Abs(v-w) > 2e-5+1e-4*w {
								t.Fatalf("case %d l%d h%d (%d,%d): %g, reference %g", ci, l, h, i, j, v, w)
							}
						}
						if math.Abs(sum-1) > 1e-5 {
							t.Fatalf("case %d l%d h%d row %d sums to %g", ci, l, h, i, sum)
						}
					}
				}
			}
			if c.T > 3 && sharp < 0.6 {
				t.Errorf("case %d: largest off-first-row weight %g: the test model's attention is too flat to test much", ci, sharp)
			}
		}
	}
}

// TestAttentionMapsErrors checks the window validation.
func TestAttentionMapsErrors(t *testing.T) {
	m, err := NewOn(cpu.NewDefault(), tinyConfigs()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]byte{nil, make([]byte, m.Config.Context+1), {0, 1, 3}} {
		if _, err := m.AttentionMaps(x); err == nil {
			t.Errorf("window %v: no error", x)
		}
	}
}
