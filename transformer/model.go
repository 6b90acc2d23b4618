package transformer

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/vomc/vomc/transformer/backend"
)

// Model is a transformer: its configuration and its parameters, which
// live on the model's backend (host memory for the CPU backend, device
// memory for a GPU backend); HostParams and SetParams copy them explicitly.
// After training it is treated as immutable, and then it is safe for
// concurrent use as a predict.Predictor (every forward pass uses its own
// buffers) where its backend is (the CPU backend is).
type Model struct {
	// Config is the architecture.
	Config Config

	be     backend.Backend
	params backend.Tensor      // the flat parameter vector, laid out by Config.Layout
	p      params              // views of params
	pos    backend.Tensor      // positional table (N, E): wpe, or the sinusoidal table
	pool   *pool[*Activations] // one window's activations (attention maps)
	ipool  *pool[*Inference]   // forward-only buffers (prediction)
}

// NewOn returns a model on the backend be, chosen by the caller (nil: an
// error, ErrNoBackend), with freshly initialised parameters (GPT-2 style):
// weights N(0, 0.02²), the two residual output projections of each layer
// N(0, (0.02/√(2L))²), biases 0, LayerNorm gains 1. The draw is
// deterministic given seed; the parameters are drawn on the host and
// uploaded, so every backend starts from the same bytes.
func NewOn(be backend.Backend, cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	flat := InitParams(cfg, seed)
	return FromParamsOn(be, cfg, flat)
}

// InitParams returns the initial parameter vector of NewOn(be, cfg, seed) on the
// host (cfg must be valid).
func InitParams(cfg Config, seed uint64) []float32 {
	flat := make([]float32, cfg.NumParams())
	r := rand.New(rand.NewPCG(seed, 0x7261_6e73_666f_726d))
	resid := 0.02 / math.Sqrt(2*float64(max(cfg.Layers, 1)))
	for _, t := range cfg.Layout() {
		s := flat[t.Offset : t.Offset+t.Size]
		switch {
		case len(t.Shape) == 1 && (strings.HasSuffix(t.Name, "ln1.weight") || strings.HasSuffix(t.Name, "ln2.weight") || t.Name == "lnf.weight"):
			for i := range s {
				s[i] = 1
			}
		case len(t.Shape) == 1:
			// biases stay 0
		default:
			std := 0.02
			if strings.HasSuffix(t.Name, "attn.proj.weight") || strings.HasSuffix(t.Name, "mlp.proj.weight") {
				std = resid
			}
			for i := range s {
				s[i] = float32(std * r.NormFloat64())
			}
		}
	}
	return flat
}

// ErrNoBackend is the error of a model asked for without a backend: the
// backend is chosen once, at the top (a command's, or a test's), and
// passed down; no library makes one of its own.
var ErrNoBackend = errors.New("transformer: no backend given (the caller chooses one, e.g. cpu.New(kernels.Default()))")

// FromParamsOn returns a model on the backend be (nil: ErrNoBackend) with
// the parameter vector flat (length cfg.NumParams(), or empty for zeros),
// which it copies. An allocation the backend cannot make is an error.
func FromParamsOn(be backend.Backend, cfg Config, flat []float32) (*Model, error) {
	if be == nil {
		return nil, ErrNoBackend
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := cfg.NumParams()
	if len(flat) != 0 && len(flat) != n {
		return nil, fmt.Errorf("transformer: %d parameters, config needs %d", len(flat), n)
	}
	if l, ok := be.(backend.HeadSizeLimiter); ok {
		for i, h := range cfg.Heads {
			if hs := cfg.Embed / h; hs > l.MaxHeadSize() {
				return nil, fmt.Errorf("transformer: layer %d's head size %d (E=%d / %d heads) is above the %d that backend %s supports", i+1, hs, cfg.Embed, h, l.MaxHeadSize(), be.Name())
			}
		}
	}
	m := &Model{Config: cfg, be: be, pool: new(pool[*Activations]), ipool: new(pool[*Inference])}
	m.Config.Heads = append([]int(nil), cfg.Heads...)
	if err := m.allocParams(flat); err != nil {
		m.Free()
		return nil, fmt.Errorf("transformer: parameters of %s: %w", cfg, err)
	}
	return m, nil
}

func (m *Model) allocParams(flat []float32) error {
	be, cfg := m.be, m.Config
	var err error
	if m.params, err = backend.AllocTensor(be, cfg.NumParams()); err != nil {
		return err
	}
	if len(flat) != 0 {
		be.Upload(m.params, flat)
	}
	m.p = cfg.views(m.params)
	if cfg.Positional == Sinusoidal {
		if m.pos, err = backend.AllocTensor(be, cfg.Context*cfg.Embed); err != nil {
			return err
		}
		be.Upload(m.pos, SinusoidalTable(cfg.Context, cfg.Embed))
	} else {
		m.pos = m.p.wpe
	}
	return nil
}

// Free releases the model's buffers on its backend — parameters,
// positional table, the pooled activations and forward-only buffers — and closes the
// backend when the model made it; the model must not be used afterwards
// (nor while a prediction runs). Models that are simply dropped are
// released by the garbage collector on the CPU backend; a GPU backend
// needs Free.
func (m *Model) Free() error {
	var errs []error
	for _, a := range m.pool.drain() {
		errs = append(errs, a.Free())
	}
	for _, in := range m.ipool.drain() {
		errs = append(errs, in.Free())
	}
	errs = append(errs, backend.FreeAll(m.be, m.params, m.pos))
	err := errors.Join(errs...)
	m.params, m.pos, m.p = backend.Tensor{}, backend.Tensor{}, params{}
	return err
}

// Backend returns the backend the model's buffers live on.
func (m *Model) Backend() backend.Backend { return m.be }

// NumParams is the length of the parameter vector.
func (m *Model) NumParams() int { return m.params.Len }

// ParamTensor is the flat parameter vector on the model's backend (laid
// out by Config.Layout).
func (m *Model) ParamTensor() backend.Tensor { return m.params }

// WindowLimits is the context N (the longest window) and the alphabet size
// A.
func (m *Model) WindowLimits() (maxT, alphabet int) { return m.Config.Context, m.Config.Alphabet }

// CheckpointConfig identifies a transformer in a checkpoint: the empty
// format (the checkpoint's own) and Config.String().
func (m *Model) CheckpointConfig() (format, config string) { return "", m.Config.String() }

// HostParams returns a host copy of the flat parameter vector (laid out by
// Config.Layout).
func (m *Model) HostParams() []float32 { return backend.ToHost(m.be, m.params) }

// SetParams copies flat (length NumParams) into the model's parameters.
func (m *Model) SetParams(flat []float32) error {
	return backend.FromHost(m.be, m.params, flat, "transformer: parameters")
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

func (c Config) activation() backend.Activation {
	if c.Activation == ReLU {
		return backend.ReLU
	}
	return backend.GELU
}

// layerBufs are one layer's activations (or their gradients). Absent
// sub-layers leave their buffers absent; without LayerNorm, ln1 and ln2
// alias the layer input and res2.
type layerBufs struct {
	ln1, ln1Mean, ln1Rstd backend.Tensor // (B,T,C), (B,T), (B,T)
	qkv                   backend.Tensor // (B,T,3C)
	atty                  backend.Tensor // (B,T,C) attention output, heads concatenated
	lse                   backend.Tensor // (B,NH,T) log-sum-exp of each row's attention scores (forward only)
	res2                  backend.Tensor // (B,T,C) input + attention projection
	ln2, ln2Mean, ln2Rstd backend.Tensor
	fch, fcha             backend.Tensor // (B,T,4C) pre- and post-activation
	res3                  backend.Tensor // (B,T,C) res2 + feed-forward output
}

// bufs are all activations of a forward pass (or their gradients).
type bufs struct {
	encoded               backend.Tensor // (B,T,C)
	layers                []layerBufs
	lnf, lnfMean, lnfRstd backend.Tensor // (B,T,C), (B,T), (B,T)
	logits, probs, losses backend.Tensor // (B,T,A), (B,T,A), (B,T)
}

// Activations holds every activation buffer, and (when made for training)
// every activation-gradient buffer, of forward/backward passes over up to
// MaxB windows of up to MaxT symbols, on the model's backend. Make one per
// (batch, context) and reuse it; it is not safe for concurrent use. Free
// releases it.
type Activations struct {
	// MaxB and MaxT are the capacity.
	MaxB, MaxT      int
	act, grad       bufs
	actBuf, gradBuf backend.Tensor // the one allocation behind act, grad
	training        bool
	be              backend.Backend
	A               int
	// state of the last Forward
	B, T   int
	tokens backend.Tokens
	// host copies made by Probs, Logits, Losses, ProbRow
	hostProbs, hostLogits, hostLosses, hostRow []float32
	// views of the last gradient vector given to Backward (cached)
	gv    params
	gvKey backend.Tensor
}

// AllocActivations allocates buffers for batches of up to maxB windows of
// up to maxT ≤ N symbols; with training, also the attention rows'
// log-sum-exps (O(B·heads·T): the backward pass recomputes the attention
// weights, so no O(B·heads·T²) matrix is kept) and the gradient buffers
// Backward needs. All buffers are O(B·T·E). An allocation the backend
// cannot make (out of memory) is an error.
func (m *Model) AllocActivations(maxB, maxT int, training bool) (*Activations, error) {
	if maxT > m.Config.Context {
		return nil, fmt.Errorf("transformer: context %d longer than the model's N = %d", maxT, m.Config.Context)
	}
	if maxB < 1 || maxT < 1 {
		return nil, fmt.Errorf("transformer: activations for %d windows of %d symbols", maxB, maxT)
	}
	a := &Activations{MaxB: maxB, MaxT: maxT, training: training, be: m.be, A: m.Config.Alphabet}
	err := m.allocBufs(&a.act, &a.actBuf, maxB, maxT, false, training)
	if err == nil && training {
		err = m.allocBufs(&a.grad, &a.gradBuf, maxB, maxT, true, true)
	}
	if err == nil {
		a.tokens, err = m.be.AllocTokens(maxB * maxT)
	}
	if err != nil {
		a.Free()
		return nil, fmt.Errorf("transformer: activations for %d windows of %d symbols: %w", maxB, maxT, err)
	}
	return a, nil
}

// NewActivations is AllocActivations for callers that treat a failed
// allocation as fatal: it panics with the error (which the CPU backend
// gives only when the host is out of memory).
func (m *Model) NewActivations(maxB, maxT int, training bool) *Activations {
	a, err := m.AllocActivations(maxB, maxT, training)
	if err != nil {
		panic(err)
	}
	return a
}

// Free releases the activations' buffers; a must not be used afterwards.
func (a *Activations) Free() error {
	err := backend.FreeAll(a.be, a.actBuf, a.gradBuf)
	if terr := a.be.FreeTokens(a.tokens); err == nil {
		err = terr
	}
	a.actBuf, a.gradBuf, a.tokens = backend.Tensor{}, backend.Tensor{}, nil
	a.act, a.grad = bufs{}, bufs{}
	return err
}

// ActivationFloats returns the number of float32 elements NewActivations
// allocates for (maxB, maxT, training): the activation memory is 4 bytes
// times this.
func (c Config) ActivationFloats(maxB, maxT int, training bool) int {
	n := 0
	count := func(sz int) backend.Tensor { n += sz; return backend.Tensor{} }
	c.layoutBufs(maxB, maxT, false, training, count)
	if training {
		c.layoutBufs(maxB, maxT, true, true, count)
	}
	return n
}

// allocBufs lays out the buffers of one pass in one allocation (*whole):
// sub-tensors are views of it.
func (m *Model) allocBufs(s *bufs, whole *backend.Tensor, B, T int, grad, training bool) error {
	total := 0
	m.Config.layoutBufs(B, T, grad, training, func(n int) backend.Tensor { total += n; return backend.Tensor{} })
	var err error
	if *whole, err = backend.AllocTensor(m.be, total); err != nil {
		return err
	}
	off := 0
	*s = m.Config.layoutBufs(B, T, grad, training, func(n int) backend.Tensor {
		t := whole.Slice(off, n)
		off += n
		return t
	})
	return nil
}

// layoutBufs lays out the buffers of one pass, taking each from f.
func (c Config) layoutBufs(B, T int, grad, training bool, f func(n int) backend.Tensor) bufs {
	BT, C, A := B*T, c.Embed, c.Alphabet
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

// out returns the output of the layer (its res3, or res2 without FF).
func (lb *layerBufs) out() backend.Tensor {
	if !lb.res3.Absent() {
		return lb.res3
	}
	return lb.res2
}

// pre returns the first n elements of t, or t itself when absent.
func pre(t backend.Tensor, n int) backend.Tensor {
	if t.Absent() {
		return t
	}
	return t.Prefix(n)
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
	be := m.be
	a.B, a.T = B, T
	be.UploadTokens(a.tokens, inputs)
	BT, C, A := B*T, c.Embed, c.Alphabet
	s, p := &a.act, &m.p
	tok := a.tokens
	be.EncoderForward(s.encoded, tok, p.wte, m.pos, B, T, C)
	x := s.encoded
	for l := range s.layers {
		lb, lp := &s.layers[l], &p.layers[l]
		if c.LayerNorm {
			be.LayerNormForward(lb.ln1, lb.ln1Mean, lb.ln1Rstd, x, lp.ln1w, lp.ln1b, BT, C)
			be.MatmulForward(lb.qkv, lb.ln1, lp.qkvw, lp.qkvb, BT, C, 3*C)
		} else {
			be.MatmulForward(lb.qkv, x, lp.qkvw, lp.qkvb, BT, C, 3*C)
		}
		be.AttentionForward(lb.atty, pre(lb.lse, B*c.Heads[l]*T), lb.qkv, B, T, C, c.Heads[l])
		be.MatmulForward(lb.res2, lb.atty, lp.projw, lp.projb, BT, C, C)
		be.Add(lb.res2.Prefix(BT*C), x, lb.res2)
		x = lb.res2
		if c.FeedForward {
			ffIn := x
			if c.LayerNorm {
				be.LayerNormForward(lb.ln2, lb.ln2Mean, lb.ln2Rstd, x, lp.ln2w, lp.ln2b, BT, C)
				ffIn = lb.ln2
			}
			be.MatmulForward(lb.fch, ffIn, lp.fcw, lp.fcb, BT, C, 4*C)
			be.ActivationForward(c.activation(), lb.fcha.Prefix(BT*4*C), lb.fch.Prefix(BT*4*C))
			be.MatmulForward(lb.res3, lb.fcha, lp.fcprojw, lp.fcprojb, BT, 4*C, C)
			be.Add(lb.res3.Prefix(BT*C), x, lb.res3)
			x = lb.res3
		}
	}
	if c.LayerNorm {
		be.LayerNormForward(s.lnf, s.lnfMean, s.lnfRstd, x, p.lnfw, p.lnfb, BT, C)
		x = s.lnf
	}
	be.MatmulForward(s.logits, x, p.headw, p.headb, BT, C, A)
	return be.CrossEntropyForward(s.probs, s.losses, s.logits, tok, B, T, A)
}

// download copies the first n elements of t into *host (grown as needed).
func (a *Activations) download(host *[]float32, t backend.Tensor, n int) []float32 {
	if cap(*host) < n {
		*host = make([]float32, n)
	}
	*host = (*host)[:n]
	a.be.Download(*host, t.Prefix(n))
	return *host
}

// ProbRow returns a host copy of one row of the probabilities of the last
// Forward: P(x_{t+2} | x_1..x_{t+1}) of window b (0-based t), A values.
// Only that row is copied; the slice is reused by the next call.
func (a *Activations) ProbRow(b, t int) []float32 {
	if b < 0 || b >= a.B || t < 0 || t >= a.T {
		panic(fmt.Sprintf("transformer: probability row (%d,%d) of a pass over (%d,%d)", b, t, a.B, a.T))
	}
	r := b*a.T + t
	if cap(a.hostRow) < a.A {
		a.hostRow = make([]float32, a.A)
	}
	a.hostRow = a.hostRow[:a.A]
	a.be.Download(a.hostRow, a.act.probs.Slice(r*a.A, a.A))
	return a.hostRow
}

// Probs returns a host copy of the (B,T,A) next-symbol probabilities of
// the last Forward: row (b,t) is P(x_{t+2} | x_1..x_{t+1}) of window b
// (0-based t). The slice is reused by the next call.
func (a *Activations) Probs() []float32 {
	return a.download(&a.hostProbs, a.act.probs, a.B*a.T*a.A)
}

// Logits returns a host copy of the (B,T,A) logits of the last Forward
// (reused by the next call).
func (a *Activations) Logits() []float32 {
	return a.download(&a.hostLogits, a.act.logits, a.B*a.T*a.A)
}

// Losses returns a host copy of the (B,T) per-position losses in nats of
// the last Forward (0 at the last position of each window; reused by the
// next call).
func (a *Activations) Losses() []float32 {
	return a.download(&a.hostLosses, a.act.losses, a.B*a.T)
}

// QKV returns a host copy of layer l's (B,T,3C) query/key/value entries of
// the last Forward.
func (a *Activations) QKV(l int) []float32 {
	n := a.B * a.T * a.act.layers[l].qkv.Len / (a.MaxB * a.MaxT)
	out := make([]float32, n)
	a.be.Download(out, a.act.layers[l].qkv.Prefix(n))
	return out
}

// Backward back-propagates the last Forward on a and ACCUMULATES into grads
// (a flat vector on the model's backend laid out like the parameters) the
// gradient of scale·Σ losses. scale = 1/(B·(T−1)) gives the gradient of the
// mean per-symbol loss; scale = 1/B that of the paper's window-summed loss
// averaged over the batch. The caller zeroes grads between steps.
func (m *Model) Backward(a *Activations, grads backend.Tensor, scale float32) {
	if !a.training {
		panic("transformer: Backward on inference activations")
	}
	if grads.Len != m.params.Len {
		panic(fmt.Sprintf("transformer: Backward into %d gradients, model has %d parameters", grads.Len, m.params.Len))
	}
	c := m.Config
	be := m.be
	B, T := a.B, a.T
	BT, C, A := B*T, c.Embed, c.Alphabet
	tok := a.tokens
	s, d, p := &a.act, &a.grad, &m.p
	if a.gvKey != grads {
		a.gv, a.gvKey = c.views(grads), grads
	}
	g := &a.gv
	// Every activation gradient is written by its first op (a product's
	// input gradient with setDinp, the activation's and attention's
	// backward passes) or, when that op accumulates (LayerNorm's backward
	// pass), cleared right before it, so that it is in cache when the op
	// reads it; a residual stream's gradient is set to the residual
	// branch's (Copy) and LayerNorm's backward pass adds its own to it, one
	// pass instead of clearing and adding after.

	be.CrossEntropyBackward(d.logits, s.probs, tok, scale, B, T, A)
	x := s.encoded
	dx := d.encoded
	if L := len(s.layers); L > 0 {
		x, dx = s.layers[L-1].out(), d.layers[L-1].out()
	}
	if c.LayerNorm {
		be.MatmulBackward(d.lnf, g.headw, g.headb, d.logits, s.lnf, p.headw, BT, C, A, true)
		be.Zero(dx.Prefix(BT * C))
		be.LayerNormBackward(dx, g.lnfw, g.lnfb, d.lnf, x, p.lnfw, s.lnfMean, s.lnfRstd, BT, C)
	} else {
		be.MatmulBackward(dx, g.headw, g.headb, d.logits, x, p.headw, BT, C, A, true)
	}
	for l := len(s.layers) - 1; l >= 0; l-- {
		lb, db, lp, lg := &s.layers[l], &d.layers[l], &p.layers[l], &g.layers[l]
		xin, dxin := s.encoded, d.encoded
		if l > 0 {
			xin, dxin = s.layers[l-1].out(), d.layers[l-1].out()
		}
		if c.FeedForward {
			// res3 = res2 + proj(act(fc(ln2(res2)))); the fc product
			// writes ln2 (without LayerNorm, res2) first
			be.MatmulBackward(db.fcha, lg.fcprojw, lg.fcprojb, db.res3, lb.fcha, lp.fcprojw, BT, 4*C, C, true)
			be.ActivationBackward(c.activation(), db.fch.Prefix(BT*4*C), lb.fch.Prefix(BT*4*C), db.fcha.Prefix(BT*4*C))
			be.MatmulBackward(db.ln2, lg.fcw, lg.fcb, db.fch, lb.ln2, lp.fcw, BT, C, 4*C, true)
			if c.LayerNorm {
				be.Copy(db.res2.Prefix(BT*C), db.res3.Prefix(BT*C))
				be.LayerNormBackward(db.res2, lg.ln2w, lg.ln2b, db.ln2, lb.res2, lp.ln2w, lb.ln2Mean, lb.ln2Rstd, BT, C)
			} else {
				be.Add(db.res2.Prefix(BT*C), db.res2, db.res3)
			}
		}
		// res2 = x + proj(attn(qkv(ln1(x)))); the QKV product writes
		// ln1 (without LayerNorm, the layer input's gradient) first
		be.MatmulBackward(db.atty, lg.projw, lg.projb, db.res2, lb.atty, lp.projw, BT, C, C, true)
		be.AttentionBackward(db.qkv, db.atty, lb.qkv, lb.lse.Prefix(B*c.Heads[l]*T), B, T, C, c.Heads[l])
		be.MatmulBackward(db.ln1, lg.qkvw, lg.qkvb, db.qkv, lb.ln1, lp.qkvw, BT, C, 3*C, true)
		if c.LayerNorm {
			be.Copy(dxin.Prefix(BT*C), db.res2.Prefix(BT*C))
			be.LayerNormBackward(dxin, lg.ln1w, lg.ln1b, db.ln1, xin, lp.ln1w, lb.ln1Mean, lb.ln1Rstd, BT, C)
		} else {
			be.Add(dxin.Prefix(BT*C), dxin, db.res2)
		}
	}
	var dwpe backend.Tensor
	if c.Positional == Learned {
		dwpe = g.wpe
	}
	be.EncoderBackward(g.wte, dwpe, d.encoded, tok, B, T, C)
}
