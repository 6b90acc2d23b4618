package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Activation functions of the feed-forward layer.
const (
	GELU = "gelu" // erf GELU, x·Φ(x) (the backend's float32 version)
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
	// CountNorm is Log1p or Scale (default when empty: Scale under the
	// Linear encoding, else Log1p).
	CountNorm string
	// Encoding is Paper (default when empty), Log or Linear: how TF 2-0's
	// position and every count enter (see Paper). Log requires CountNorm
	// Log1p, Linear requires Scale.
	Encoding string
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
	if c.Encoding == "" {
		c.Encoding = Paper
	}
	if c.CountNorm == "" {
		c.CountNorm = Log1p
		if c.Encoding == Linear {
			c.CountNorm = Scale
		}
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
		return opterr.Unknown("synth", "activation", c.Activation, []string{GELU, ReLU})
	case c.CountNorm != Log1p && c.CountNorm != Scale:
		return opterr.Unknown("synth", "count_norm", c.CountNorm, []string{Log1p, Scale})
	case c.Encoding != Paper && c.Encoding != Log && c.Encoding != Linear:
		return opterr.Unknown("synth", "encoding", c.Encoding, []string{Paper, Log, Linear})
	case c.Encoding == Log && c.CountNorm != Log1p, c.Encoding == Linear && c.CountNorm != Scale:
		return fmt.Errorf("synth: encoding %s needs count normalisation %s (have %s)", c.Encoding,
			map[string]string{Log: Log1p, Linear: Scale}[c.Encoding], c.CountNorm)
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
func (c Config) Features() int { return DimEnc(c.A, c.D, c.Variant, c.Encoding) }

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

// Model is a trained (or freshly initialised) synthetic model. Its
// parameters live on the model's backend (package transformer/backend;
// host memory for the CPU backend); HostParams and SetParams copy them
// explicitly. It is a transformer.Trainable (trained by the engine's
// trainer, see NewTrainer) and a predict.SequencePredictor (predictor.go);
// Save and Load store it. After training it is safe for concurrent use as
// a predictor (every pass uses its own buffers) where its backend is.
type Model struct {
	Config Config
	// Info describes the training run that produced the parameters.
	Info TrainInfo
	// DisplayName, if set, replaces Label(Variant) as the predictor's name.
	DisplayName string

	be     backend.Backend
	params backend.Tensor // every tensor, flat, in the order of the safetensors file
	p      views
}

// views are the parameter tensors (or their gradients) as views of one
// flat vector; emb and embB are absent without an embedding.
type views struct {
	emb, embB, fc, fcB, proj, projB, head, headB backend.Tensor
}

func (c Config) views(flat backend.Tensor) views {
	l := c.layout()
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	v := views{fc: flat.Slice(l.fc, H*W), fcB: flat.Slice(l.fcB, H), proj: flat.Slice(l.proj, W*H),
		projB: flat.Slice(l.projB, W), head: flat.Slice(l.head, A*W), headB: flat.Slice(l.headB, A)}
	if c.Embed > 0 {
		v.emb, v.embB = flat.Slice(l.emb, W*F), flat.Slice(l.embB, W)
	}
	return v
}

// InitParams returns the initial parameters of New(cfg, seed) on the host:
// PyTorch's nn.Linear initialisation, U(−1/√fan_in, 1/√fan_in) for weights
// and biases, drawn from PCG(seed, "synth") (cfg with defaults, valid).
func InitParams(cfg Config, seed uint64) []float32 {
	flat := make([]float32, cfg.NumParams())
	rng := rand.New(rand.NewPCG(seed, 0x73796e7468))
	for _, t := range cfg.tensors() {
		n := t.rows * max(t.cols, 1)
		bound := 1 / math.Sqrt(float64(t.fanIn))
		for i := range n {
			flat[t.off+i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
	return flat
}

// NewOn returns a model on the backend be, chosen by the caller (nil:
// transformer.ErrNoBackend), with the parameters of InitParams(cfg, seed);
// the parameters are drawn on the host and uploaded, so every backend
// starts from the same bytes.
func NewOn(be backend.Backend, cfg Config, seed uint64) (*Model, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return FromParamsOn(be, cfg, InitParams(cfg, seed))
}

// FromParamsOn returns a model of architecture cfg (defaults filled in) on
// the backend be (nil: transformer.ErrNoBackend)
// with a copy of the flat parameter vector params (length NumParams, laid
// out as in the safetensors file). An allocation the backend cannot make
// is an error.
func FromParamsOn(be backend.Backend, cfg Config, params []float32) (*Model, error) {
	if be == nil {
		return nil, transformer.ErrNoBackend
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(params) != cfg.NumParams() {
		return nil, fmt.Errorf("synth: %d parameters, the configuration has %d", len(params), cfg.NumParams())
	}
	pt, err := backend.AllocTensor(be, len(params))
	if err != nil {
		return nil, fmt.Errorf("synth: parameters: %w", err)
	}
	m := &Model{Config: cfg, be: be, params: pt}
	be.Upload(m.params, params)
	m.p = cfg.views(m.params)
	return m, nil
}

// Backend returns the backend the model's buffers live on.
func (m *Model) Backend() backend.Backend { return m.be }

// NumParams is the length of the parameter vector.
func (m *Model) NumParams() int { return m.params.Len }

// ParamTensor is the flat parameter vector on the backend.
func (m *Model) ParamTensor() backend.Tensor { return m.params }

// HostParams returns a host copy of the flat parameter vector (embed,
// ff.fc, ff.proj, head; weight then bias; weights row-major out×in).
func (m *Model) HostParams() []float32 { return backend.ToHost(m.be, m.params) }

// SetParams copies flat (length NumParams) into the model's parameters.
func (m *Model) SetParams(flat []float32) error {
	return backend.FromHost(m.be, m.params, flat, "synth: parameters")
}

// WindowLimits is the longest window (Context) and the alphabet size A.
func (m *Model) WindowLimits() (maxT, alphabet int) { return m.Config.Context, m.Config.A }

// CheckpointConfig identifies the model in a training checkpoint: the
// format FileFormat and the configuration as stored in a model file
// (JSON; Resume reads it back).
func (m *Model) CheckpointConfig() (format, config string) {
	return FileFormat, m.Config.fileJSON()
}

// fileJSON is the configuration as stored in files (JSON of fileConfig).
// The Paper encoding is not written (the files of before the encodings
// are byte-identical), the others are.
func (c Config) fileJSON() string {
	enc := c.Encoding
	if enc == Paper {
		enc = ""
	}
	b, _ := json.Marshal(fileConfig{ShortName(c.Variant), c.A, c.D, c.Context, c.PosN, c.Embed, c.Hidden, c.Activation, c.CountNorm, enc})
	return string(b)
}

// parseFileConfig reads what fileJSON writes and validates it.
func parseFileConfig(s string) (Config, error) {
	var fc fileConfig
	if err := json.Unmarshal([]byte(s), &fc); err != nil {
		return Config{}, fmt.Errorf("synth: config: %w", err)
	}
	v, err := ParseVariant(fc.Variant)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{Variant: v, A: fc.A, D: fc.D, Context: fc.Context, PosN: fc.PosN, Embed: fc.Embed,
		Hidden: fc.Hidden, Activation: fc.Activation, CountNorm: fc.CountNorm, Encoding: fc.Encoding}
	if cfg.Encoding == "" { // files without an encoding: Paper
		cfg.Encoding = Paper
	}
	return cfg, cfg.Validate()
}

func (c Config) activation() backend.Activation {
	if c.Activation == ReLU {
		return backend.ReLU
	}
	return backend.GELU
}

// Activations are the buffers of forward (and backward) passes over up to
// MaxB windows of up to MaxT positions, on the model's backend, plus the
// host staging of the features. Row r = b·T + t of every (B·T)-row buffer
// belongs to position t of window b. Make one per (batch, context) and
// reuse it; it is not safe for concurrent use.
type Activations struct {
	// MaxB and MaxT are the capacity.
	MaxB, MaxT int
	training   bool
	be         backend.Backend
	// forward: features X (rows, F); a0 = W_e X + b_e (rows, W; only with
	// an embedding); u = W_2 a + b_2 and z = σ(u) (rows, H); the stream h
	// (rows, W); logits, probs (rows, A); losses (rows)
	x, a0, u, z, h, logits, probs, losses backend.Tensor
	// backward (training only): gradients of a, h, z, u, logits
	da, dh, dz, du, dlogits backend.Tensor
	tokens                  backend.Tokens
	whole                   backend.Tensor // the one allocation behind the tensors
	// state of the last Forward
	B, T int
	// host side: the features before their upload, one extractor and
	// scratch row per worker, the copy made by Probs
	hostX     []float32
	ex        []*Extractor
	raws      [][]float64
	hostProbs []float32
	gv        views // views of the last gradient vector given to Backward
	gvKey     backend.Tensor
}

// NewActivations is AllocActivations for callers that treat a failed
// allocation as fatal: it panics with the error.
func (m *Model) NewActivations(maxB, maxT int, training bool) *Activations {
	a, err := m.AllocActivations(maxB, maxT, training)
	if err != nil {
		panic(err)
	}
	return a
}

// AllocActivations allocates buffers for batches of up to maxB windows of
// up to maxT ≤ Context symbols; training adds the gradient buffers
// Backward needs. The host features are computed by up to GOMAXPROCS
// extractors. An allocation the backend cannot make is an error.
func (m *Model) AllocActivations(maxB, maxT int, training bool) (*Activations, error) {
	c := m.Config
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	rows := maxB * maxT
	a := &Activations{MaxB: maxB, MaxT: maxT, training: training, be: m.be, hostX: make([]float32, rows*F)}
	total := rows * (F + 2*H + W + 2*A + 1)
	if c.Embed > 0 {
		total += rows * W
	}
	if training {
		total += rows * (2*W + 2*H + A)
	}
	whole, err := backend.AllocTensor(m.be, total)
	if err != nil {
		return nil, fmt.Errorf("synth: activations for %d windows of %d symbols: %w", maxB, maxT, err)
	}
	a.whole = whole
	off := 0
	take := func(n int) backend.Tensor { t := whole.Slice(off, n); off += n; return t }
	a.x, a.u, a.z, a.h, a.logits, a.probs, a.losses = take(rows*F), take(rows*H), take(rows*H), take(rows*W), take(rows*A), take(rows*A), take(rows)
	if c.Embed > 0 {
		a.a0 = take(rows * W)
	}
	if training {
		a.da, a.dh, a.dz, a.du, a.dlogits = take(rows*W), take(rows*W), take(rows*H), take(rows*H), take(rows*A)
	}
	if a.tokens, err = m.be.AllocTokens(rows); err != nil {
		m.be.Free(whole.Buf)
		return nil, fmt.Errorf("synth: activations for %d windows of %d symbols: %w", maxB, maxT, err)
	}
	for range max(1, min(runtime.GOMAXPROCS(0), maxB)) {
		a.ex = append(a.ex, m.NewExtractor())
		a.raws = append(a.raws, make([]float64, F))
	}
	return a, nil
}

// Free releases the activations' buffers; a must not be used afterwards.
func (a *Activations) Free() error {
	err := a.be.Free(a.whole.Buf)
	if terr := a.be.FreeTokens(a.tokens); err == nil {
		err = terr
	}
	a.whole, a.tokens = backend.Tensor{}, nil
	return err
}

// Probs returns a host copy of the (B,T,A) next-symbol probabilities of
// the last Forward: row (b,t) is the model's distribution of x[b,t+1]
// given x[b,0..t] (reused by the next call).
func (a *Activations) Probs() []float32 {
	n := a.B * a.T * (a.probs.Len / (a.MaxB * a.MaxT))
	if cap(a.hostProbs) < n {
		a.hostProbs = make([]float32, n)
	}
	a.hostProbs = a.hostProbs[:n]
	a.be.Download(a.hostProbs, a.probs.Prefix(n))
	return a.hostProbs
}

// fillFeatures computes on the host the model input of every position of
// the B windows of T symbols in inputs: row b·T + t holds the features
// after x[b,0..t] (the input of the prediction of x[b,t+1]). Windows are
// split over the extractors; a row depends only on its window, so the
// result does not depend on the split.
func (m *Model) fillFeatures(a *Activations, inputs []byte, B, T int) {
	F := m.Config.Features()
	window := func(g, b int) {
		e, raw := a.ex[g], a.raws[g]
		e.Reset()
		for t := 0; t < T; t++ {
			e.Push(inputs[b*T+t])
			r := b*T + t
			m.Input(e, raw, a.hostX[r*F:(r+1)*F])
		}
	}
	workers := min(len(a.ex), B)
	if workers <= 1 {
		for b := 0; b < B; b++ {
			window(0, b)
		}
		return
	}
	var wg sync.WaitGroup
	var caught panics.Catcher // a panic is raised again on the caller's goroutine
	per := (B + workers - 1) / workers
	for g := range workers {
		lo, hi := g*per, min((g+1)*per, B)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer caught.Recover()
			for b := lo; b < hi; b++ {
				window(g, b)
			}
		}()
	}
	wg.Wait()
	caught.Repanic()
}

// Forward runs the model on B windows of T ≤ Context symbols (inputs,
// row-major (B,T), symbols < A) and returns the summed next-symbol
// cross-entropy in nats over the B·(T−1) targets: position t of window b
// predicts inputs[b,t+1]; the last position of a window has no target (the
// engine's convention). The features of every position are computed on
// the host by exact counting (the constructed layers 1–2) and uploaded in
// one copy; then, on the backend,
//
//	a = X, or a = W_e X + b_e          (MatmulForward)
//	u = W_2 a + b_2, z = σ(u)          (MatmulForward, ActivationForward)
//	h = a + W_1 z + b_1                (MatmulForward, Add)
//	logits = W_o h + b_o               (MatmulForward)
//	probs = softmax(logits), loss       (CrossEntropyForward)
func (m *Model) Forward(a *Activations, inputs []byte, B, T int) float64 {
	if B > a.MaxB || T > a.MaxT || len(inputs) != B*T {
		panic(fmt.Sprintf("synth: Forward on (%d,%d) with %d inputs, buffers hold (%d,%d)", B, T, len(inputs), a.MaxB, a.MaxT))
	}
	m.fillFeatures(a, inputs, B, T)
	return m.forwardRows(a, inputs, B, T)
}

// forwardRows runs the backend part of Forward on the first B·T feature
// rows of a.hostX, with the targets from tokens (B·T symbols).
func (m *Model) forwardRows(a *Activations, tokens []byte, B, T int) float64 {
	c, be, p := m.Config, m.be, &m.p
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	rows := B * T
	a.B, a.T = B, T
	be.Upload(a.x.Prefix(rows*F), a.hostX[:rows*F])
	be.UploadTokens(a.tokens, tokens)
	x := a.x
	if c.Embed > 0 {
		be.MatmulForward(a.a0, a.x, p.emb, p.embB, rows, F, W)
		x = a.a0
	}
	be.MatmulForward(a.u, x, p.fc, p.fcB, rows, W, H)
	be.ActivationForward(c.activation(), a.z.Prefix(rows*H), a.u.Prefix(rows*H))
	be.MatmulForward(a.h, a.z, p.proj, p.projB, rows, H, W)
	be.Add(a.h.Prefix(rows*W), a.h.Prefix(rows*W), x.Prefix(rows*W))
	be.MatmulForward(a.logits, a.h, p.head, p.headB, rows, W, A)
	return be.CrossEntropyForward(a.probs, a.losses, a.logits, a.tokens, B, T, A)
}

// Backward back-propagates the last Forward on a and ACCUMULATES into grads
// (a flat vector on the model's backend laid out like the parameters) the
// gradient of scale·Σ losses (scale = 1/(B·(T−1)): the mean per-symbol
// loss). The caller zeroes grads between steps. Mirroring Forward:
//
//	dlogits = scale·(probs − onehot)     (CrossEntropyBackward)
//	dh = dlogits·W_o, ∇W_o, ∇b_o         (MatmulBackward)
//	dz = dh·W_1, ∇W_1, ∇b_1; du = σ'(u)·dz
//	da = du·W_2 + dh (residual), ∇W_2, ∇b_2
//	∇W_e, ∇b_e from da                   (with an embedding)
func (m *Model) Backward(a *Activations, grads backend.Tensor, scale float32) {
	if !a.training {
		panic("synth: Backward on inference activations")
	}
	if grads.Len != m.params.Len {
		panic(fmt.Sprintf("synth: Backward into %d gradients, the model has %d parameters", grads.Len, m.params.Len))
	}
	c, be, p := m.Config, m.be, &m.p
	F, W, H, A := c.Features(), c.Width(), c.Hidden, c.A
	B, T := a.B, a.T
	rows := B * T
	if a.gvKey != grads {
		a.gv, a.gvKey = c.views(grads), grads
	}
	g := &a.gv
	be.CrossEntropyBackward(a.dlogits, a.probs, a.tokens, scale, B, T, A)
	be.MatmulBackward(a.dh, g.head, g.headB, a.dlogits, a.h, p.head, rows, W, A, true)
	be.MatmulBackward(a.dz, g.proj, g.projB, a.dh, a.z, p.proj, rows, H, W, true)
	be.ActivationBackward(c.activation(), a.du.Prefix(rows*H), a.u.Prefix(rows*H), a.dz.Prefix(rows*H))
	if c.Embed == 0 {
		// the input features need no gradient
		be.MatmulBackward(backend.Tensor{}, g.fc, g.fcB, a.du, a.x, p.fc, rows, W, H, false)
		return
	}
	be.MatmulBackward(a.da, g.fc, g.fcB, a.du, a.a0, p.fc, rows, W, H, true)
	be.Add(a.da.Prefix(rows*W), a.da.Prefix(rows*W), a.dh.Prefix(rows*W))
	be.MatmulBackward(backend.Tensor{}, g.emb, g.embB, a.da, a.x, p.emb, rows, F, W, false)
}
