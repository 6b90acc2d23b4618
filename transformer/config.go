// Package transformer is a hand-written decoder-only transformer engine
// (training and inference) in the style of Karpathy's llm.c: every
// operation is a pair of top-level functions xxxForward / xxxBackward, all
// activation and gradient buffers are allocated once per (batch B, context
// T) and reused, and parameters and activations are float32.
//
// The architecture is that of the paper's Section 4.1: token embedding plus
// positional embedding (learned, or fixed sinusoidal), L layers of
// [pre-LayerNorm] → causal multi-head self-attention (+ residual) →
// [pre-LayerNorm] → feed-forward 4E with ReLU or GELU (+ residual; absent in
// attention-only networks), then [final LayerNorm] → linear to A logits →
// softmax. Heads may differ per layer.
//
// Conventions. A training window is x_1..x_T (T ≤ N symbols, no BOS). The
// output at position i (1-based) is the distribution of x_{i+1} given
// x_1..x_i, for i = 1..T−1, so a window has T−1 targets, as in the paper's
// loss Σ_{i=1}^{N−1}. The first symbol x_1 is never a target; as a
// predict.Predictor the model gives the uniform distribution for it (which
// is also what CTW gives under the paper's symmetric prior). Losses are in
// nats.
package transformer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"runtime"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/kernels"
)

// Activation names for Config.Activation.
const (
	ReLU = "relu"
	// GELU is the exact GELU x·Φ(x) (PyTorch's nn.GELU default), not the
	// tanh approximation.
	GELU = "gelu"
)

// Positional-embedding kinds for Config.Positional.
const (
	// Learned is a trained N×E table (GPT-2 style).
	Learned = "learned"
	// Sinusoidal is the fixed table of Vaswani et al.: PE[pos, 2i] =
	// sin(pos/10000^(2i/E)), PE[pos, 2i+1] = cos(pos/10000^(2i/E)), 0-based
	// pos; it has no parameters.
	Sinusoidal = "sinusoidal"
)

// Config describes a model. It is JSON-serialisable; the zero values of
// the string fields are not valid (use DefaultConfig as a base).
type Config struct {
	// Layers is L, the number of transformer blocks.
	Layers int `json:"layers"`
	// Heads[l] is the number of attention heads of layer l (len L); E must
	// be divisible by each.
	Heads []int `json:"heads"`
	// Embed is E, the embedding (residual stream) dimension.
	Embed int `json:"embed"`
	// Context is N, the maximum context (window) length.
	Context int `json:"context"`
	// Alphabet is A, the vocabulary size (symbols 0..A−1), 1..256.
	Alphabet int `json:"alphabet"`
	// FeedForward enables the feed-forward sub-layer (hidden width 4E);
	// false gives an attention-only network.
	FeedForward bool `json:"feed_forward"`
	// LayerNorm enables the pre-LayerNorms (before attention, before the
	// feed-forward, and before the output head).
	LayerNorm bool `json:"layer_norm"`
	// Activation is ReLU or GELU (the feed-forward non-linearity).
	Activation string `json:"activation"`
	// Positional is Learned or Sinusoidal.
	Positional string `json:"positional"`
}

// DefaultConfig returns a full transformer (FF, LayerNorm, GELU, learned
// positions) with L layers of h heads each.
func DefaultConfig(L, h, E, N, A int) Config {
	heads := make([]int, L)
	for i := range heads {
		heads[i] = h
	}
	return Config{Layers: L, Heads: heads, Embed: E, Context: N, Alphabet: A,
		FeedForward: true, LayerNorm: true, Activation: GELU, Positional: Learned}
}

// Upper bounds Validate applies, far above any model this engine can
// train on one machine but low enough that no size computed from a valid
// Config (parameters, activations for any batch ≤ MaxBatch) overflows an
// int64.
const (
	// MaxLayers is the largest number of layers L.
	MaxLayers = 1024
	// MaxEmbed is the largest embedding dimension E.
	MaxEmbed = 1 << 16
	// MaxContext is the largest context length N.
	MaxContext = 1 << 20
	// MaxParams is the largest number of parameters (16 GiB of float32).
	MaxParams = 1 << 32
)

// Validate reports the first problem with c, including sizes beyond
// MaxLayers, MaxEmbed, MaxContext and MaxParams.
func (c Config) Validate() error {
	switch {
	case c.Layers < 0 || c.Layers > MaxLayers:
		return fmt.Errorf("transformer: %d layers outside 0..%d", c.Layers, MaxLayers)
	case len(c.Heads) != c.Layers:
		return fmt.Errorf("transformer: %d head counts for %d layers", len(c.Heads), c.Layers)
	case c.Embed < 1 || c.Embed > MaxEmbed:
		return fmt.Errorf("transformer: embedding dimension %d outside 1..%d", c.Embed, MaxEmbed)
	case c.Context < 1 || c.Context > MaxContext:
		return fmt.Errorf("transformer: context length %d outside 1..%d", c.Context, MaxContext)
	case c.Alphabet < 1 || c.Alphabet > 256:
		return fmt.Errorf("transformer: alphabet size %d outside 1..256", c.Alphabet)
	case c.Activation != ReLU && c.Activation != GELU:
		return fmt.Errorf("transformer: activation %q (want %q or %q)", c.Activation, ReLU, GELU)
	case c.Positional != Learned && c.Positional != Sinusoidal:
		return fmt.Errorf("transformer: positional embedding %q (want %q or %q)", c.Positional, Learned, Sinusoidal)
	}
	for l, h := range c.Heads {
		if h < 1 || c.Embed%h != 0 {
			return fmt.Errorf("transformer: layer %d has %d heads, which does not divide E = %d", l, h, c.Embed)
		}
	}
	if p := c.paramCount(); p > MaxParams {
		return fmt.Errorf("transformer: %.4g parameters (L=%d, E=%d, N=%d), more than the limit of %d", p, c.Layers, c.Embed, c.Context, int64(MaxParams))
	}
	return nil
}

// paramCount is NumParams in float64 arithmetic (no overflow whatever
// the sizes), from the closed form of Layout.
func (c Config) paramCount() float64 {
	E, A, N, L := float64(c.Embed), float64(c.Alphabet), float64(c.Context), float64(c.Layers)
	p := A*E + A*E + A // wte, head
	if c.Positional == Learned {
		p += N * E
	}
	ln := 0.0
	if c.LayerNorm {
		ln = 2 * E
		p += ln // lnf
	}
	per := ln + 3*E*E + 3*E + E*E + E
	if c.FeedForward {
		per += ln + 4*E*E + 4*E + 4*E*E + E
	}
	return p + L*per
}

// numTensors is len(c.Layout()), without building the layout.
func (c Config) numTensors() int {
	n, ln := 3, 0 // wte, head.weight, head.bias
	if c.Positional == Learned {
		n++
	}
	if c.LayerNorm {
		ln = 2
		n += 2
	}
	per := ln + 4
	if c.FeedForward {
		per += ln + 4
	}
	return n + c.Layers*per
}

// MaxBatch is the largest batch size TrainingBytes and InferenceBytes
// estimate exactly (TrainConfig.Validate applies it too).
const MaxBatch = 1 << 20

// activationFloats is ActivationFloats as a float64, +Inf when the sizes
// are beyond what ActivationFloats can count without overflow.
func (c Config) activationFloats(B, T int, training bool) float64 {
	width := float64(max(4*c.Embed, c.Alphabet, 1))
	for _, h := range c.Heads {
		width = max(width, float64(h))
	}
	if B < 0 || T < 0 || float64(B)*float64(T)*width*float64(c.Layers+2)*64 > 1<<62 {
		return math.Inf(1)
	}
	return float64(c.ActivationFloats(B, T, training))
}

// TrainingBytes estimates the memory a Trainer of c needs with batches of
// B windows of T symbols (c must be valid): the parameters, gradients and
// AdamW's two moments, the host copy of the best parameters, the transient
// copies a checkpoint makes (7 vectors of parameters' size), the training
// activations and their gradients, the validation activations, and the
// packing scratch of the kernel set ks on GOMAXPROCS goroutines (the CPU
// backend's set, Backend.Kernels; nil for a backend with none, a GPU's).
// The estimate is a float64, so it never overflows (+Inf for absurd
// sizes).
func (c Config) TrainingBytes(B, T int, ks *kernels.Set) float64 {
	P := c.paramCount()
	pos := 0.0
	if c.Positional == Sinusoidal {
		pos = float64(c.Context) * float64(c.Embed)
	}
	return 4*(12*P+pos+c.activationFloats(B, T, true)+c.activationFloats(B, T, false)) + scratchBytes(ks)
}

// scratchBytes is the packing memory of the kernel set ks's GEMM on
// GOMAXPROCS goroutines (nil: none).
func scratchBytes(ks *kernels.Set) float64 {
	if ks == nil {
		return 0
	}
	return float64(ks.ScratchBytes(runtime.GOMAXPROCS(0)))
}

// KernelsOf is the kernel set of the backend be when it has one (the CPU
// backend's, Kernels), else nil.
func KernelsOf(be backend.Backend) *kernels.Set {
	if k, ok := be.(interface{ Kernels() *kernels.Set }); ok {
		return k.Kernels()
	}
	return nil
}

// InferenceBytes estimates the memory of a model of c with the
// activations of one forward pass over B windows of T symbols, and the
// packing scratch of the kernel set ks (nil: none; see TrainingBytes).
func (c Config) InferenceBytes(B, T int, ks *kernels.Set) float64 {
	P := c.paramCount()
	pos := 0.0
	if c.Positional == Sinusoidal {
		pos = float64(c.Context) * float64(c.Embed)
	}
	return 4*(P+pos+c.activationFloats(B, T, false)) + scratchBytes(ks)
}

// MaxConfigJSON bounds the length of a Config's JSON form that
// ParseConfig reads (a valid one is at most ≈ 7 KB: MaxLayers head
// counts).
const MaxConfigJSON = 64 << 10

// ParseConfig reads a Config from its JSON form (as String writes it and
// config.json holds) and validates it. Input longer than MaxConfigJSON is
// refused before decoding, so that a crafted config cannot make the
// decoder allocate in proportion to it.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	if len(b) > MaxConfigJSON {
		return c, fmt.Errorf("transformer: config metadata of %d bytes, longer than the limit of %d", len(b), MaxConfigJSON)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("transformer: config: %w", err)
	}
	if d.More() {
		return Config{}, fmt.Errorf("transformer: config: data after the JSON object")
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// String is the JSON form of c.
func (c Config) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// TensorInfo locates one parameter tensor in the flat parameter vector.
type TensorInfo struct {
	// Name is the tensor's name, e.g. "h.0.attn.qkv.weight".
	Name string
	// Shape is row-major; a linear layer's weight is [out, in].
	Shape []int
	// Offset and Size are in float32 elements.
	Offset, Size int
}

// Layout lists the parameter tensors of c in storage order. Per layer l
// (prefix "h.l."): ln1.weight/bias [E] (LayerNorm only), attn.qkv.weight
// [3E, E] and bias [3E] (rows: the E query rows, then key, then value;
// head m uses rows m·E/M..(m+1)·E/M−1 of each), attn.proj.weight [E, E] and
// bias [E], ln2.weight/bias [E] (LayerNorm and FF), mlp.fc.weight [4E, E],
// bias [4E], mlp.proj.weight [E, 4E], bias [E] (FF only). Before the layers:
// wte [A, E] and wpe [N, E] (learned positions only); after: lnf.weight/bias
// [E] (LayerNorm only), head.weight [A, E], head.bias [A].
func (c Config) Layout() []TensorInfo {
	var out []TensorInfo
	off := 0
	add := func(name string, shape ...int) {
		n := 1
		for _, s := range shape {
			n *= s
		}
		out = append(out, TensorInfo{Name: name, Shape: shape, Offset: off, Size: n})
		off += n
	}
	E, A, N := c.Embed, c.Alphabet, c.Context
	add("wte", A, E)
	if c.Positional == Learned {
		add("wpe", N, E)
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("h.%d.", l)
		if c.LayerNorm {
			add(p+"ln1.weight", E)
			add(p+"ln1.bias", E)
		}
		add(p+"attn.qkv.weight", 3*E, E)
		add(p+"attn.qkv.bias", 3*E)
		add(p+"attn.proj.weight", E, E)
		add(p+"attn.proj.bias", E)
		if c.FeedForward {
			if c.LayerNorm {
				add(p+"ln2.weight", E)
				add(p+"ln2.bias", E)
			}
			add(p+"mlp.fc.weight", 4*E, E)
			add(p+"mlp.fc.bias", 4*E)
			add(p+"mlp.proj.weight", E, 4*E)
			add(p+"mlp.proj.bias", E)
		}
	}
	if c.LayerNorm {
		add("lnf.weight", E)
		add("lnf.bias", E)
	}
	add("head.weight", A, E)
	add("head.bias", A)
	return out
}

// NumParams is the number of trained parameters of c.
func (c Config) NumParams() int {
	l := c.Layout()
	last := l[len(l)-1]
	return last.Offset + last.Size
}

// layerParams are views into one layer's parameters (absent when the
// sub-layer is).
type layerParams struct {
	ln1w, ln1b, qkvw, qkvb, projw, projb   backend.Tensor
	ln2w, ln2b, fcw, fcb, fcprojw, fcprojb backend.Tensor
}

// params are views of all tensors of a flat vector laid out by Layout.
type params struct {
	wte, wpe     backend.Tensor
	layers       []layerParams
	lnfw, lnfb   backend.Tensor
	headw, headb backend.Tensor
}

// views slices flat (length NumParams, on any backend) into named tensors.
func (c Config) views(flat backend.Tensor) params {
	var p params
	p.layers = make([]layerParams, c.Layers)
	for _, t := range c.Layout() {
		s := flat.Slice(t.Offset, t.Size)
		var l int
		var rest string
		if n, _ := fmt.Sscanf(t.Name, "h.%d.%s", &l, &rest); n == 2 {
			lp := &p.layers[l]
			switch rest {
			case "ln1.weight":
				lp.ln1w = s
			case "ln1.bias":
				lp.ln1b = s
			case "attn.qkv.weight":
				lp.qkvw = s
			case "attn.qkv.bias":
				lp.qkvb = s
			case "attn.proj.weight":
				lp.projw = s
			case "attn.proj.bias":
				lp.projb = s
			case "ln2.weight":
				lp.ln2w = s
			case "ln2.bias":
				lp.ln2b = s
			case "mlp.fc.weight":
				lp.fcw = s
			case "mlp.fc.bias":
				lp.fcb = s
			case "mlp.proj.weight":
				lp.fcprojw = s
			case "mlp.proj.bias":
				lp.fcprojb = s
			default:
				panic("transformer: unknown tensor " + t.Name)
			}
			continue
		}
		switch t.Name {
		case "wte":
			p.wte = s
		case "wpe":
			p.wpe = s
		case "lnf.weight":
			p.lnfw = s
		case "lnf.bias":
			p.lnfb = s
		case "head.weight":
			p.headw = s
		case "head.bias":
			p.headb = s
		default:
			panic("transformer: unknown tensor " + t.Name)
		}
	}
	return p
}
