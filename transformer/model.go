package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vomc/vomc/transformer/kernels"
)

// Model is a transformer: its configuration and trained parameters. After
// training it is treated as immutable, and then it is safe for concurrent
// use as a predict.Predictor (every forward pass uses its own buffers).
type Model struct {
	// Config is the architecture.
	Config Config
	// Params is the flat parameter vector (float32, laid out as
	// Config.Layout).
	Params []float32
	// Kernel computes the matrix products (kernels.Default when nil).
	Kernel kernels.Kernel

	p   params
	pos []float32 // positional table (N, E): wpe, or the sinusoidal table
}

// New returns a model with freshly initialised parameters (GPT-2 style):
// weights N(0, 0.02²), the two residual output projections of each layer
// N(0, (0.02/√(2L))²), biases 0, LayerNorm gains 1. The draw is
// deterministic given seed.
func New(cfg Config, seed uint64) (*Model, error) {
	m, err := FromParams(cfg, make([]float32, 0))
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(seed, 0x7261_6e73_666f_726d))
	resid := 0.02 / math.Sqrt(2*float64(max(cfg.Layers, 1)))
	for _, t := range cfg.Layout() {
		s := m.Params[t.Offset : t.Offset+t.Size]
		switch {
		case len(t.Shape) == 1 && (hasSuffix(t.Name, "ln1.weight") || hasSuffix(t.Name, "ln2.weight") || t.Name == "lnf.weight"):
			for i := range s {
				s[i] = 1
			}
		case len(t.Shape) == 1:
			// biases stay 0
		default:
			std := 0.02
			if hasSuffix(t.Name, "attn.proj.weight") || hasSuffix(t.Name, "mlp.proj.weight") {
				std = resid
			}
			for i := range s {
				s[i] = float32(std * r.NormFloat64())
			}
		}
	}
	return m, nil
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// FromParams wraps an existing parameter vector (length cfg.NumParams(), or
// empty to allocate zeros). The model keeps flat; it does not copy it.
func FromParams(cfg Config, flat []float32) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.NumParams()
	if len(flat) == 0 {
		flat = make([]float32, n)
	}
	if len(flat) != n {
		return nil, fmt.Errorf("transformer: %d parameters, config needs %d", len(flat), n)
	}
	cfg.Heads = append([]int(nil), cfg.Heads...)
	m := &Model{Config: cfg, Params: flat}
	m.p = cfg.views(flat)
	if cfg.Positional == Sinusoidal {
		m.pos = SinusoidalTable(cfg.Context, cfg.Embed)
	} else {
		m.pos = m.p.wpe
	}
	return m, nil
}

// SinusoidalTable returns the fixed (N, E) positional table of Vaswani et
// al.: row pos, column 2i is sin(pos·ω_i), column 2i+1 is cos(pos·ω_i), with
// ω_i = 10000^(−2i/E) and pos 0-based.
func SinusoidalTable(N, E int) []float32 {
	t := make([]float32, N*E)
	for pos := 0; pos < N; pos++ {
		for j := 0; j < E; j++ {
			w := math.Pow(10000, -float64(j/2*2)/float64(E))
			if j%2 == 0 {
				t[pos*E+j] = float32(math.Sin(float64(pos) * w))
			} else {
				t[pos*E+j] = float32(math.Cos(float64(pos) * w))
			}
		}
	}
	return t
}

func (m *Model) kernel() kernels.Kernel {
	if m.Kernel != nil {
		return m.Kernel
	}
	return kernels.Default
}

// layerBufs are one layer's activations (or their gradients). Absent
// sub-layers leave their buffers nil; without LayerNorm, ln1 and ln2 alias
// the layer input and res2.
type layerBufs struct {
	ln1, ln1Mean, ln1Rstd []float32 // (B,T,C), (B,T), (B,T)
	qkv                   []float32 // (B,T,3C)
	atty                  []float32 // (B,T,C) attention output, heads concatenated
	lse                   []float32 // (B,NH,T) log-sum-exp of each row's attention scores (forward only)
	res2                  []float32 // (B,T,C) input + attention projection
	ln2, ln2Mean, ln2Rstd []float32
	fch, fcha             []float32 // (B,T,4C) pre- and post-activation
	res3                  []float32 // (B,T,C) res2 + feed-forward output
}

// bufs are all activations of a forward pass (or their gradients).
type bufs struct {
	encoded               []float32 // (B,T,C)
	layers                []layerBufs
	lnf, lnfMean, lnfRstd []float32 // (B,T,C), (B,T), (B,T)
	logits, probs, losses []float32 // (B,T,A), (B,T,A), (B,T)
}

// Activations holds every activation buffer, and (when made for training)
// every activation-gradient buffer, of forward/backward passes over up to
// MaxB windows of up to MaxT symbols. Make one per (batch, context) and
// reuse it; it is not safe for concurrent use.
type Activations struct {
	// MaxB and MaxT are the capacity.
	MaxB, MaxT int
	act, grad  bufs
	training   bool
	// state of the last Forward
	B, T   int
	inputs []byte
	// views of the last gradient vector given to Backward (cached: making
	// them allocates)
	gv     params
	gvData *float32
	gvLen  int
}

// NewActivations allocates buffers for batches of up to maxB windows of up
// to maxT ≤ N symbols; with training, also the attention rows' log-sum-exps
// (O(B·heads·T): the backward pass recomputes the attention weights, so no
// O(B·heads·T²) matrix is kept) and the gradient buffers Backward needs.
// All buffers are O(B·T·E).
func (m *Model) NewActivations(maxB, maxT int, training bool) *Activations {
	if maxT > m.Config.Context {
		panic(fmt.Sprintf("transformer: context %d longer than the model's N = %d", maxT, m.Config.Context))
	}
	a := &Activations{MaxB: maxB, MaxT: maxT, training: training}
	a.act = m.allocBufs(maxB, maxT, false, training)
	if training {
		a.grad = m.allocBufs(maxB, maxT, true, true)
	}
	a.inputs = make([]byte, maxB*maxT)
	return a
}

func (m *Model) allocBufs(B, T int, grad, training bool) bufs {
	c := m.Config
	BT, C, A := B*T, c.Embed, c.Alphabet
	f := func(n int) []float32 { return make([]float32, n) }
	var s bufs
	s.encoded = f(BT * C)
	s.layers = make([]layerBufs, c.Layers)
	prev := s.encoded
	for l := range s.layers {
		lb := &s.layers[l]
		if c.LayerNorm {
			lb.ln1 = f(BT * C)
			if !grad {
				lb.ln1Mean, lb.ln1Rstd = f(BT), f(BT)
			}
		} else {
			lb.ln1 = prev
		}
		lb.qkv = f(BT * 3 * C)
		lb.atty = f(BT * C)
		if !grad && training {
			lb.lse = f(B * c.Heads[l] * T)
		}
		lb.res2 = f(BT * C)
		prev = lb.res2
		if c.FeedForward {
			if c.LayerNorm {
				lb.ln2 = f(BT * C)
				if !grad {
					lb.ln2Mean, lb.ln2Rstd = f(BT), f(BT)
				}
			} else {
				lb.ln2 = lb.res2
			}
			lb.fch, lb.fcha = f(BT*4*C), f(BT*4*C)
			lb.res3 = f(BT * C)
			prev = lb.res3
		}
	}
	if c.LayerNorm {
		s.lnf = f(BT * C)
		if !grad {
			s.lnfMean, s.lnfRstd = f(BT), f(BT)
		}
	} else {
		s.lnf = prev
	}
	s.logits = f(BT * A)
	if !grad {
		s.probs, s.losses = f(BT*A), f(BT)
	}
	return s
}

// layerOut returns the output of layer l (its res3, or res2 without FF).
func (lb *layerBufs) out() []float32 {
	if lb.res3 != nil {
		return lb.res3
	}
	return lb.res2
}

// Forward runs the model on B windows of T symbols (inputs, row-major
// (B,T), symbols < A) and returns the summed next-symbol cross-entropy in
// nats over the B·(T−1) targets (position t predicts inputs[b,t+1]). The
// probabilities of every position, including the last, are left in the
// activations (see Probs).
func (m *Model) Forward(a *Activations, inputs []byte, B, T int) float64 {
	c := m.Config
	if B > a.MaxB || T > a.MaxT || len(inputs) != B*T {
		panic(fmt.Sprintf("transformer: Forward on (%d,%d) with %d inputs, buffers hold (%d,%d)", B, T, len(inputs), a.MaxB, a.MaxT))
	}
	k := m.kernel()
	a.B, a.T = B, T
	copy(a.inputs, inputs)
	BT, C, A := B*T, c.Embed, c.Alphabet
	s, p := &a.act, &m.p
	encoderForward(s.encoded, inputs, p.wte, m.pos, B, T, C)
	x := s.encoded
	for l := range s.layers {
		lb, lp := &s.layers[l], &p.layers[l]
		if c.LayerNorm {
			layernormForward(lb.ln1, lb.ln1Mean, lb.ln1Rstd, x, lp.ln1w, lp.ln1b, BT, C)
			matmulForward(k, lb.qkv, lb.ln1, lp.qkvw, lp.qkvb, BT, C, 3*C)
		} else {
			matmulForward(k, lb.qkv, x, lp.qkvw, lp.qkvb, BT, C, 3*C)
		}
		attentionForward(k, lb.atty, lb.lse, lb.qkv, B, T, C, c.Heads[l])
		matmulForward(k, lb.res2, lb.atty, lp.projw, lp.projb, BT, C, C)
		residualForward(lb.res2[:BT*C], x[:BT*C], lb.res2)
		x = lb.res2
		if c.FeedForward {
			ffIn := x
			if c.LayerNorm {
				layernormForward(lb.ln2, lb.ln2Mean, lb.ln2Rstd, x, lp.ln2w, lp.ln2b, BT, C)
				ffIn = lb.ln2
			}
			matmulForward(k, lb.fch, ffIn, lp.fcw, lp.fcb, BT, C, 4*C)
			if c.Activation == ReLU {
				reluForward(lb.fcha[:BT*4*C], lb.fch[:BT*4*C])
			} else {
				geluForward(lb.fcha[:BT*4*C], lb.fch[:BT*4*C])
			}
			matmulForward(k, lb.res3, lb.fcha, lp.fcprojw, lp.fcprojb, BT, 4*C, C)
			residualForward(lb.res3[:BT*C], x[:BT*C], lb.res3)
			x = lb.res3
		}
	}
	if c.LayerNorm {
		layernormForward(s.lnf, s.lnfMean, s.lnfRstd, x, p.lnfw, p.lnfb, BT, C)
		x = s.lnf
	}
	matmulForward(k, s.logits, x, p.headw, p.headb, BT, C, A)
	return crossEntropyForward(s.probs, s.losses, s.logits, inputs, B, T, A)
}

// Probs returns the (B,T,A) next-symbol probabilities of the last Forward:
// row (b,t) is P(x_{t+2} | x_1..x_{t+1}) of window b (0-based t).
func (a *Activations) Probs() []float32 { return a.act.probs[:a.B*a.T*a.alphabet()] }

func (a *Activations) alphabet() int { return len(a.act.probs) / (a.MaxB * a.MaxT) }

// Logits returns the (B,T,A) logits of the last Forward.
func (a *Activations) Logits() []float32 {
	return a.act.logits[:a.B*a.T*a.alphabet()]
}

// Losses returns the (B,T) per-position losses in nats of the last Forward
// (0 at the last position of each window).
func (a *Activations) Losses() []float32 { return a.act.losses[:a.B*a.T] }

// Backward back-propagates the last Forward on a and ACCUMULATES into grads
// (a flat vector laid out like Params) the gradient of scale·Σ losses.
// scale = 1/(B·(T−1)) gives the gradient of the mean per-symbol loss;
// scale = 1/B that of the paper's window-summed loss averaged over the
// batch. The caller zeroes grads between steps.
func (m *Model) Backward(a *Activations, grads []float32, scale float32) {
	if !a.training {
		panic("transformer: Backward on inference activations")
	}
	c := m.Config
	k := m.kernel()
	B, T := a.B, a.T
	BT, C, A := B*T, c.Embed, c.Alphabet
	inputs := a.inputs[:BT]
	s, d, p := &a.act, &a.grad, &m.p
	if len(grads) == 0 || a.gvData != &grads[0] || a.gvLen != len(grads) {
		a.gv, a.gvLen = c.views(grads), len(grads)
		if len(grads) > 0 {
			a.gvData = &grads[0]
		}
	}
	g := a.gv
	zeroBufs(d, BT, c)

	crossEntropyBackward(d.logits, s.probs, inputs, scale, B, T, A)
	x := s.encoded
	dx := d.encoded
	if L := len(s.layers); L > 0 {
		x, dx = s.layers[L-1].out(), d.layers[L-1].out()
	}
	if c.LayerNorm {
		matmulBackward(k, d.lnf, g.headw, g.headb, d.logits, s.lnf, p.headw, BT, C, A)
		layernormBackward(dx, g.lnfw, g.lnfb, d.lnf, x, p.lnfw, s.lnfMean, s.lnfRstd, BT, C)
	} else {
		matmulBackward(k, dx, g.headw, g.headb, d.logits, x, p.headw, BT, C, A)
	}
	for l := len(s.layers) - 1; l >= 0; l-- {
		lb, db, lp, lg := &s.layers[l], &d.layers[l], &p.layers[l], &g.layers[l]
		xin, dxin := s.encoded, d.encoded
		if l > 0 {
			xin, dxin = s.layers[l-1].out(), d.layers[l-1].out()
		}
		if c.FeedForward {
			// res3 = res2 + proj(act(fc(ln2(res2))))
			// fcha and fch get no other contribution: overwritten, not
			// cleared by zeroBufs
			matmulBackwardSet(k, db.fcha, lg.fcprojw, lg.fcprojb, db.res3, lb.fcha, lp.fcprojw, BT, 4*C, C)
			if c.Activation == ReLU {
				reluBackwardSet(db.fch[:BT*4*C], lb.fch[:BT*4*C], db.fcha)
			} else {
				geluBackwardSet(db.fch[:BT*4*C], lb.fch[:BT*4*C], db.fcha)
			}
			matmulBackward(k, db.ln2, lg.fcw, lg.fcb, db.fch, lb.ln2, lp.fcw, BT, C, 4*C)
			if c.LayerNorm {
				layernormBackward(db.res2, lg.ln2w, lg.ln2b, db.ln2, lb.res2, lp.ln2w, lb.ln2Mean, lb.ln2Rstd, BT, C)
			}
			addInto(db.res2[:BT*C], db.res3)
		}
		// res2 = x + proj(attn(qkv(ln1(x))))
		matmulBackward(k, db.atty, lg.projw, lg.projb, db.res2, lb.atty, lp.projw, BT, C, C)
		attentionBackward(k, db.qkv, db.atty, lb.qkv, lb.lse, B, T, C, c.Heads[l])
		matmulBackward(k, db.ln1, lg.qkvw, lg.qkvb, db.qkv, lb.ln1, lp.qkvw, BT, C, 3*C)
		if c.LayerNorm {
			layernormBackward(dxin, lg.ln1w, lg.ln1b, db.ln1, xin, lp.ln1w, lb.ln1Mean, lb.ln1Rstd, BT, C)
		}
		addInto(dxin[:BT*C], db.res2)
	}
	var dwpe []float32
	if c.Positional == Learned {
		dwpe = g.wpe
	}
	encoderBackward(g.wte, dwpe, d.encoded, inputs, B, T, C)
}

// addInto accumulates dst += src (the residual branch of residualBackward
// whose other branch shares its gradient buffer).
func addInto(dst, src []float32) {
	kernels.Add(dst, dst, src)
}

// zeroBufs clears the first BT rows of every gradient buffer.
func zeroBufs(d *bufs, BT int, c Config) {
	C := c.Embed
	clear(d.encoded[:BT*C])
	for l := range d.layers {
		lb := &d.layers[l]
		for _, s := range [][]float32{lb.ln1, lb.atty, lb.res2, lb.ln2, lb.res3} {
			if s != nil {
				clear(s[:BT*C])
			}
		}
		clear(lb.qkv[:BT*3*C])
		// fch and fcha are overwritten by Backward (matmulBackwardSet,
		// geluBackwardSet/reluBackwardSet)
	}
	clear(d.lnf[:BT*C])
}
