package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vomc/vomc/transformer/kernels"
)

// Activation functions of the feed-forward layer.
const (
	GELU = "gelu" // erf GELU, x·Φ(x) (transformer/kernels' float32 version)
	ReLU = "relu"
)

// Count normalisations (Config.CountNorm). The paper does not say how its
// synthetic models saw the counts; they grow with the position (up to the
// window length), so they are squashed before entering the model.
const (
	// Log1p feeds ln(1 + c) for every count c (the default): ≈ 0..5.5 for
	// windows of 256, fine resolution at the small counts where the
	// Dirichlet estimates change fastest.
	Log1p = "log1p"
	// Scale feeds c / Context, in [0, 1].
	Scale = "scale"
)

// Config is the architecture of a synthetic "TF 2-0" model: the features
// f_i of Variant (the constructed layers 1–2, computed by Extractor), an
// optional linear embedding to width Embed, one feed-forward sub-layer with
// its residual on the stream, and the output layer:
//
//	a = f            (Embed = 0, the paper's a^(2); width F = Dim(A, D, V))
//	a = W_e f + b_e  (Embed > 0)
//	h = a + W_1 σ(W_2 a + b_2) + b_1
//	P(x_{i+1} | x_1^i) = softmax(W_o h + b_o)
//
// with count features normalised by CountNorm.
type Config struct {
	Variant Variant
	A, D    int
	// Context is the window length T the model is trained on; rows j <
	// Context use the whole prefix, later rows the last Context−1 symbols.
	Context int
	// PosN is the positional period N of pos_i (0: the smallest power of
	// two ≥ max(64, Context+D+1), as construct.Predictor chooses).
	PosN int
	// Embed is the width of the optional input embedding (0: none).
	Embed int
	// Hidden is the FF's hidden width (0: 4 × the stream width).
	Hidden int
	// Activation is GELU (default when empty) or ReLU.
	Activation string
	// CountNorm is Log1p (default when empty) or Scale.
	CountNorm string
}

// withDefaults fills the zero fields that have defaults.
func (c Config) withDefaults() Config {
	if c.PosN == 0 {
		c.PosN = 64
		for c.PosN < c.Context+c.D+1 {
			c.PosN *= 2
		}
	}
	if c.Hidden == 0 {
		c.Hidden = 4 * c.Width()
	}
	if c.Activation == "" {
		c.Activation = GELU
	}
	if c.CountNorm == "" {
		c.CountNorm = Log1p
	}
	return c
}

// Validate reports the first invalid field (after defaults).
func (c Config) Validate() error {
	switch {
	case c.A < 2 || c.A > 256:
		return fmt.Errorf("synth: alphabet size %d outside 2..256", c.A)
	case c.D < 1 || c.D > 16:
		return fmt.Errorf("synth: depth D=%d outside 1..16", c.D)
	case c.Variant < TF20 || c.Variant > WithAllCounts:
		return fmt.Errorf("synth: unknown variant %d", int(c.Variant))
	case c.Context < 2:
		return fmt.Errorf("synth: context %d < 2", c.Context)
	case c.PosN < c.Context+c.D+1:
		return fmt.Errorf("synth: positional period %d < Context+D+1 = %d", c.PosN, c.Context+c.D+1)
	case c.Embed < 0 || c.Hidden < 1:
		return fmt.Errorf("synth: embed %d, hidden %d", c.Embed, c.Hidden)
	case c.Activation != GELU && c.Activation != ReLU:
		return fmt.Errorf("synth: activation %q (gelu, relu)", c.Activation)
	case c.CountNorm != Log1p && c.CountNorm != Scale:
		return fmt.Errorf("synth: count normalisation %q (log1p, scale)", c.CountNorm)
	case c.Context > MaxContext || c.PosN > 4*MaxContext:
		return fmt.Errorf("synth: context %d (limit %d), positional period %d (limit %d)", c.Context, MaxContext, c.PosN, 4*MaxContext)
	case c.Embed > MaxWidth || c.Hidden > MaxWidth:
		return fmt.Errorf("synth: embed %d, hidden %d (limit %d each)", c.Embed, c.Hidden, MaxWidth)
	}
	for l, p := 0, 1; l <= c.D; l++ { // the extractor's count tables
		if p > maxTable/c.A {
			return fmt.Errorf("synth: A^(D+1) = %d^%d exceeds the count-table limit %d", c.A, c.D+1, maxTable)
		}
		p *= c.A
	}
	// float64: no overflow whatever the widths
	F, W, H, A := float64(c.Features()), float64(c.Width()), float64(c.Hidden), float64(c.A)
	if p := W*F + W + 2*H*W + H + W + A*W + A; p > MaxParams {
		return fmt.Errorf("synth: %.4g parameters (embed %d, hidden %d), more than the limit of %d", p, c.Embed, c.Hidden, int64(MaxParams))
	}
	return nil
}

// Upper bounds Validate applies: far above any useful model, low enough
// that no size computed from a valid Config overflows.
const (
	MaxContext = 1 << 20
	MaxWidth   = 1 << 20
	MaxParams  = 1 << 32
)

// Features is F, the number of input features.
func (c Config) Features() int { return Dim(c.A, c.D, c.Variant) }

// Width is the width of the residual stream: Embed, or F without embedding.
func (c Config) Width() int {
	if c.Embed > 0 {
		return c.Embed
	}
	return c.Features()
}

// layout holds the offsets of the tensors in the flat parameter vector.
type layout struct {
	emb, embB, fc, fcB, proj, projB, head, headB, n int
}

func (c Config) layout() layout {
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	var l layout
	off := 0
	take := func(n int) int { o := off; off += n; return o }
	if c.Embed > 0 {
		l.emb, l.embB = take(W*F), take(W)
	}
	l.fc, l.fcB = take(H*W), take(H)
	l.proj, l.projB = take(W*H), take(W)
	l.head, l.headB = take(A*W), take(A)
	l.n = off
	return l
}

// NumParams is the number of trainable parameters.
func (c Config) NumParams() int { return c.layout().n }

// tensor is a named slice of the parameter vector.
type tensor struct {
	name        string
	off, rows   int
	cols        int // 0 for a vector
	fanIn       int
	isEmbedding bool
}

// tensors lists the parameters in layout order (the safetensors names).
func (c Config) tensors() []tensor {
	l := c.layout()
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	var ts []tensor
	if c.Embed > 0 {
		ts = append(ts, tensor{"embed.weight", l.emb, W, F, F, true}, tensor{"embed.bias", l.embB, W, 0, F, true})
	}
	return append(ts,
		tensor{"ff.fc.weight", l.fc, H, W, W, false}, tensor{"ff.fc.bias", l.fcB, H, 0, W, false},
		tensor{"ff.proj.weight", l.proj, W, H, H, false}, tensor{"ff.proj.bias", l.projB, W, 0, H, false},
		tensor{"head.weight", l.head, A, W, W, false}, tensor{"head.bias", l.headB, A, 0, W, false})
}

// Model is a trained (or freshly initialised) synthetic model. It is a
// predict.SequencePredictor (see predictor.go); Save and Load store it.
type Model struct {
	Config Config
	// Params holds every tensor, flat, in the order of the safetensors
	// file (embed, ff.fc, ff.proj, head; weight then bias; weights
	// row-major out×in).
	Params []float32
	// Kernel does the matrix products (nil: kernels.Default).
	Kernel kernels.Kernel
	// Info describes the training run that produced the parameters.
	Info TrainInfo
	// DisplayName, if set, replaces Label(Variant) as the predictor's name.
	DisplayName string

	lay layout
}

// New returns a model with PyTorch's nn.Linear initialisation,
// U(−1/√fan_in, 1/√fan_in) for weights and biases, drawn from
// PCG(seed, "synth").
func New(cfg Config, seed uint64) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{Config: cfg, Params: make([]float32, cfg.NumParams()), lay: cfg.layout()}
	rng := rand.New(rand.NewPCG(seed, 0x73796e7468))
	for _, t := range cfg.tensors() {
		n := t.rows * max(t.cols, 1)
		bound := 1 / math.Sqrt(float64(t.fanIn))
		for i := range n {
			m.Params[t.off+i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
	return m, nil
}

// fromParams builds a model around existing parameters.
func fromParams(cfg Config, params []float32) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(params) != cfg.NumParams() {
		return nil, fmt.Errorf("synth: %d parameters, the configuration has %d", len(params), cfg.NumParams())
	}
	return &Model{Config: cfg, Params: params, lay: cfg.layout()}, nil
}

func (m *Model) kernel() kernels.Kernel {
	if m.Kernel != nil {
		return m.Kernel
	}
	return kernels.Default
}

// Activations are the buffers of a forward (and backward) pass over up to
// MaxM rows. X (MaxM × F) holds the normalised input features and Targets
// the symbol each row predicts (−1: none, the row is not in the loss).
type Activations struct {
	MaxM    int
	X       []float32
	Targets []int32

	a0, u, z, h, p []float32 // a (only with an embedding), W2·a+b2, σ(u), stream h, probabilities
	da, dh, dz, du []float32 // gradients (training only)
	dl             []float32
}

// NewActivations allocates buffers for up to maxM rows; training adds the
// gradient buffers.
func (m *Model) NewActivations(maxM int, training bool) *Activations {
	c := m.Config
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	ac := &Activations{MaxM: maxM, X: make([]float32, maxM*F), Targets: make([]int32, maxM),
		u: make([]float32, maxM*H), z: make([]float32, maxM*H), h: make([]float32, maxM*W), p: make([]float32, maxM*A)}
	if c.Embed > 0 {
		ac.a0 = make([]float32, maxM*W)
	}
	if training {
		ac.da, ac.dh = make([]float32, maxM*W), make([]float32, maxM*W)
		ac.dz, ac.du = make([]float32, maxM*H), make([]float32, maxM*H)
		ac.dl = make([]float32, maxM*A)
	}
	return ac
}

// Probs returns the M×A next-symbol probabilities of the last Forward.
func (a *Activations) Probs() []float32 { return a.p }

// stream returns a, the input of the FF sub-layer (X itself without an
// embedding).
func (m *Model) stream(ac *Activations) []float32 {
	if m.Config.Embed > 0 {
		return ac.a0
	}
	return ac.X
}

// Forward runs the model on the first M rows of ac.X and returns the
// summed cross-entropy in nats over the rows whose target is ≥ 0;
// ac.Probs() then holds the distributions.
func (m *Model) Forward(ac *Activations, M int) float64 {
	c, l, k := m.Config, m.lay, m.kernel()
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	P := m.Params
	if c.Embed > 0 {
		linearForward(k, ac.a0, ac.X, P[l.emb:], P[l.embB:], M, F, W)
	}
	a := m.stream(ac)
	linearForward(k, ac.u, a, P[l.fc:], P[l.fcB:], M, W, H)
	activationForward(c.Activation, ac.z[:M*H], ac.u[:M*H])
	linearForward(k, ac.h, ac.z, P[l.proj:], P[l.projB:], M, H, W)
	residualForward(ac.h[:M*W], a[:M*W])
	linearForward(k, ac.p, ac.h, P[l.head:], P[l.headB:], M, W, A)
	return softmaxCrossEntropyForward(ac.p[:M*A], ac.Targets[:M], A)
}

// Backward accumulates into grads (len(Params)) scale times the gradient
// of the loss of the last Forward over M rows (use scale = 1/#targets for
// the mean).
func (m *Model) Backward(ac *Activations, grads []float32, M int, scale float32) {
	c, l, k := m.Config, m.lay, m.kernel()
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	P := m.Params
	a := m.stream(ac)
	softmaxCrossEntropyBackward(ac.dl[:M*A], ac.p[:M*A], ac.Targets[:M], A, scale)
	linearBackward(k, ac.dh, grads[l.head:], grads[l.headB:], ac.dl, ac.h, P[l.head:], M, W, A)
	copy(ac.da[:M*W], ac.dh[:M*W]) // residual
	linearBackward(k, ac.dz, grads[l.proj:], grads[l.projB:], ac.dh, ac.z, P[l.proj:], M, H, W)
	activationBackward(c.Activation, ac.du[:M*H], ac.u[:M*H], ac.dz[:M*H])
	linearBackwardAcc(k, ac.da, grads[l.fc:], grads[l.fcB:], ac.du, a, P[l.fc:], M, W, H)
	if c.Embed > 0 {
		linearBackward(k, nil, grads[l.emb:], grads[l.embB:], ac.da, ac.X, P[l.emb:], M, F, W)
	}
}

// linearForward sets out (M×n) = inp (M×in) · wᵀ + b, w being n×in.
func linearForward(k kernels.Kernel, out, inp, w, b []float32, M, in, n int) {
	k.Gemm(false, true, M, n, in, inp, in, w, in, 0, out, n)
	for r := 0; r < M; r++ {
		row := out[r*n : r*n+n]
		kernels.Add(row, row, b[:n])
	}
}

// linearBackward sets dinp (M×in) = dout·w (skipped when dinp is nil) and
// accumulates dw += doutᵀ·inp, db += Σ_rows dout.
func linearBackward(k kernels.Kernel, dinp, dw, db, dout, inp, w []float32, M, in, n int) {
	if dinp != nil {
		k.Gemm(false, false, M, in, n, dout, n, w, in, 0, dinp, in)
	}
	weightGrads(k, dw, db, dout, inp, M, in, n)
}

// linearBackwardAcc is linearBackward with dinp accumulated (+=).
func linearBackwardAcc(k kernels.Kernel, dinp, dw, db, dout, inp, w []float32, M, in, n int) {
	k.Gemm(false, false, M, in, n, dout, n, w, in, 1, dinp, in)
	weightGrads(k, dw, db, dout, inp, M, in, n)
}

func weightGrads(k kernels.Kernel, dw, db, dout, inp []float32, M, in, n int) {
	k.Gemm(true, false, n, in, M, dout, n, inp, in, 1, dw, in)
	kernels.AddRows(db[:n], dout, M, n, n)
}

// activationForward sets out = σ(inp).
func activationForward(act string, out, inp []float32) {
	if act == ReLU {
		for i, x := range inp {
			out[i] = max(x, 0)
		}
		return
	}
	kernels.GeluForward(out, inp)
}

// activationBackward sets dinp = σ'(inp)·dout.
func activationBackward(act string, dinp, inp, dout []float32) {
	if act == ReLU {
		for i, x := range inp {
			if x > 0 {
				dinp[i] = dout[i]
			} else {
				dinp[i] = 0
			}
		}
		return
	}
	clear(dinp)
	kernels.GeluBackward(dinp, inp, dout)
}

// residualForward adds the stream a to h (h += a).
func residualForward(h, a []float32) { kernels.Add(h, h, a) }

// softmaxCrossEntropyForward turns the M×A logits in p into probabilities
// in place and returns Σ −ln p[target] over rows with a target ≥ 0 (nats).
func softmaxCrossEntropyForward(p []float32, targets []int32, A int) float64 {
	loss := 0.0
	var e [256]float64
	for r, t := range targets {
		row := p[r*A : r*A+A]
		mx := float64(row[0])
		for _, v := range row[1:] {
			mx = max(mx, float64(v))
		}
		sum := 0.0
		for j, v := range row {
			e[j] = math.Exp(float64(v) - mx)
			sum += e[j]
		}
		if t >= 0 {
			loss += math.Log(sum) - (float64(row[t]) - mx)
		}
		for j := range row {
			row[j] = float32(e[j] / sum)
		}
	}
	return loss
}

// softmaxCrossEntropyBackward sets dl = scale·(p − onehot(target)) for rows
// with a target, 0 for the others.
func softmaxCrossEntropyBackward(dl, p []float32, targets []int32, A int, scale float32) {
	for r, t := range targets {
		row, d := p[r*A:r*A+A], dl[r*A:r*A+A]
		if t < 0 {
			clear(d)
			continue
		}
		for j, v := range row {
			d[j] = scale * v
		}
		d[t] -= scale
	}
}
