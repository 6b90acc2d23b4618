package transformer

import (
	"fmt"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend"
)

var _ predict.BatchPredictor = (*Intervened)(nil)

// attentionHook sees a layer's attention output (B,T,C), heads
// concatenated, between the attention and the layer's output projection
// of a forward-only pass (forwardInfer), with the layer's q, k, v (B,T,3C)
// and the pass's inputs (B,T).
type attentionHook interface {
	attention(in *Inference, l int, atty, qkv backend.Tensor, inputs []byte, B, T int)
}

// patchScratch are the host copies an intervened layer works on, kept in
// an Inference so that a pass allocates nothing once they have grown.
type patchScratch struct {
	atty, qkv []float32
	acc, sums []float64      // suffix patterns' running sums
	index     map[string]int // a context's index in sums
}

// grow returns (*buf)[:n], reallocating when it is too short.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// Intervened is a model with an Intervention: a predictor whose forward
// passes are the model's, except that after the attention of a layer with
// intervened heads the layer's attention output is copied to the host,
// those heads' entries are replaced, and it is copied back before the
// output projection. Layers without intervened heads run exactly as in
// the model (the same op calls on the same operands), as does everything
// when no head is touched. Every backend with Upload and Download runs it
// (the CPU backend; the CUDA backend, at the cost of the two copies per
// intervened layer and pass).
//
// It shares the model's parameters and buffer pool: the model must
// outlive it, and freeing the model frees its buffers. Like the model it
// is safe for concurrent use as a predictor.
type Intervened struct {
	m      *Model
	iv     Intervention
	layers [][]headPatch // by layer, the heads intervened on
	needV  []bool        // by layer: a pattern reads the values
}

// headPatch is what replaces one head's output.
type headPatch struct {
	head, hs int
	mode     Ablation // 0 for a pattern
	pat      Pattern
	mean     []float32 // (N, hs): AblateMean
	refs     []float32 // (R, N, hs): AblateResample
}

// Intervene returns the model with the intervention iv, after checking it
// (Intervention.Check). For the mean and resample modes it reads the
// ablated heads' outputs on the reference windows from iv.Outputs (which
// must be this model's, with those heads), or first runs the intact model
// over the reference windows' first N symbols itself (Model.HeadOutputs);
// an allocation the backend cannot make is an error.
func (m *Model) Intervene(iv Intervention) (*Intervened, error) {
	c := m.Config
	if err := iv.Check(c); err != nil {
		return nil, err
	}
	x := &Intervened{m: m, iv: iv, layers: make([][]headPatch, c.Layers), needV: make([]bool, c.Layers)}
	for _, h := range iv.Ablate {
		x.layers[h.Layer] = append(x.layers[h.Layer], headPatch{head: h.Head, hs: c.Embed / c.Heads[h.Layer], mode: iv.Mode})
	}
	for _, p := range iv.Patterns {
		h := p.Head
		x.layers[h.Layer] = append(x.layers[h.Layer], headPatch{head: h.Head, hs: c.Embed / c.Heads[h.Layer], pat: p.Pattern})
		x.needV[h.Layer] = true
	}
	if iv.NeedsReferences() {
		if err := x.reference(); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// reference sets the ablated heads' mean or resample values from
// iv.Outputs, or from a reference pass of their own over iv.References.
func (x *Intervened) reference() error {
	ho := x.iv.Outputs
	if ho == nil {
		var err error
		if ho, err = x.m.HeadOutputs(x.iv.References, x.iv.Ablate); err != nil {
			return err
		}
	}
	for l := range x.layers {
		for i := range x.layers[l] {
			p := &x.layers[l][i]
			h := Head{l, p.head}
			if !ho.has(x.m, h) {
				return fmt.Errorf("transformer: the intervention's head outputs are not this model's, or lack %s", h)
			}
			if p.mode == AblateMean {
				p.mean = ho.mean[h]
			} else if p.mode == AblateResample {
				p.refs = ho.out[h]
			}
		}
	}
	return nil
}

// attention replaces the intervened heads' outputs of layer l.
func (x *Intervened) attention(in *Inference, l int, atty, qkv backend.Tensor, inputs []byte, B, T int) {
	ps := x.layers[l]
	if len(ps) == 0 {
		return
	}
	C := x.m.Config.Embed
	a := grow(&in.patch.atty, B*T*C)
	in.be.Download(a, atty)
	var v []float32
	if x.needV[l] {
		v = grow(&in.patch.qkv, B*T*3*C)
		in.be.Download(v, qkv)
	}
	for _, p := range ps {
		for b := range B {
			w := window{a: a[b*T*C : (b+1)*T*C], x: inputs[b*T : (b+1)*T], C: C}
			if v != nil {
				w.v = v[b*T*3*C : (b+1)*T*3*C]
			}
			switch {
			case p.pat.Kind == PatternOffset:
				p.offset(w)
			case p.pat.Kind == PatternSuffix:
				p.suffix(w, &in.patch)
			default:
				p.ablate(w, x.m.Config.Context, x.iv.Seed)
			}
		}
	}
	in.be.Upload(atty, a)
}

// window is one window of a pass: its attention output a (T,C), its q, k,
// v (T,3C) when a pattern needs them, and its symbols.
type window struct {
	a, v []float32
	x    []byte
	C    int
}

// row is head p's output at position t of w.
func (p *headPatch) row(w window, t int) []float32 {
	return w.a[t*w.C+p.head*p.hs:][:p.hs]
}

// value is head p's value vector at position j of w.
func (p *headPatch) value(w window, j int) []float32 {
	return w.v[j*3*w.C+2*w.C+p.head*p.hs:][:p.hs]
}

// ablate replaces the head's output at every position of w by 0, the
// mean at that position, or a reference window's output there.
func (p *headPatch) ablate(w window, N int, seed uint64) {
	R := len(p.refs) / max(1, N*p.hs)
	h := resampleStart(seed)
	for t, s := range w.x {
		row := p.row(w, t)
		switch p.mode {
		case AblateZero:
			clear(row)
		case AblateMean:
			copy(row, p.mean[t*p.hs:])
		case AblateResample:
			h = resampleStep(h, s)
			copy(row, p.refs[(resampleIndex(h, R)*N+t)*p.hs:])
		}
	}
}

// offset sets the head's output at t to its value at max(t−d, 0): the
// attention with weight 1 on that key.
func (p *headPatch) offset(w window) {
	for t := range w.x {
		copy(p.row(w, t), p.value(w, max(t-p.pat.N, 0)))
	}
}

// suffix sets the head's output at t to the mean of its values at the
// keys j < t with x_{j−k..j−1} = x_{t−k+1..t}, or at every key 0..t when
// there is none (PatternSuffix). The sums are running float64 sums in key
// order, one per distinct context (sc.index), so a window costs O(T·hs).
func (p *headPatch) suffix(w window, sc *patchScratch) {
	k, hs := p.pat.N, p.hs
	s := string(w.x) // the contexts are substrings of s
	if sc.index == nil {
		sc.index = map[string]int{}
	}
	clear(sc.index)
	sums := grow(&sc.sums, 0)
	all := grow(&sc.acc, hs)
	clear(all)
	var counts []int
	for t := range w.x {
		if j := t - 1; j >= k { // key j joins the sum of its context
			i, ok := sc.index[s[j-k:j]]
			if !ok {
				i = len(counts)
				sc.index[s[j-k:j]] = i
				counts = append(counts, 0)
				sums = append(sums, make([]float64, hs)...)
			}
			counts[i]++
			for d, v := range p.value(w, j) {
				sums[i*hs+d] += float64(v)
			}
		}
		for d, v := range p.value(w, t) {
			all[d] += float64(v)
		}
		row, mean, n := p.row(w, t), all, t+1
		if t >= k-1 {
			if i, ok := sc.index[s[t-k+1:t+1]]; ok {
				mean, n = sums[i*hs:(i+1)*hs], counts[i]
			}
		}
		for d, v := range mean {
			row[d] = float32(v / float64(n))
		}
	}
	sc.sums = sums
}

// resampleStart, resampleStep and resampleIndex choose resample's
// reference window for position t: an FNV-1a hash of the seed and the
// pass's symbols x_0..x_t, mixed (SplitMix64's finaliser) and reduced
// modulo R.
func resampleStart(seed uint64) uint64 { return 0xcbf29ce484222325 ^ mix64(seed) }

func resampleStep(h uint64, s byte) uint64 { return (h ^ uint64(s)) * 0x100000001b3 }

func resampleIndex(h uint64, R int) int { return int(mix64(h) % uint64(R)) }

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Model is the intervened model.
func (x *Intervened) Model() *Model { return x.m }

// Intervention is the intervention.
func (x *Intervened) Intervention() Intervention { return x.iv }

// Name is the model's name with the intervention, e.g.
// "TF(L=2,H=[4,4],E=64,N=256)[ablate=L1H2:mode=zero]".
func (x *Intervened) Name() string { return x.m.Name() + "[" + x.iv.String() + "]" }

// AlphabetSize is A.
func (x *Intervened) AlphabetSize() int { return x.m.Config.Alphabet }

// NewState is Model.NewState with the intervention.
func (x *Intervened) NewState() predict.State { return &state{m: x.m, hook: x} }

// PredictSequence is Model.PredictSequence with the intervention.
func (x *Intervened) PredictSequence(xs []byte, out []float64) { x.m.predictSequence(xs, out, x) }

// PredictBatch is Model.PredictBatch with the intervention: each window's
// predictions are those of PredictSequence (bit for bit on the CPU
// backend).
func (x *Intervened) PredictBatch(xs [][]byte, outs [][]float64) error {
	return x.m.predictBatchChecked(xs, outs, x)
}

// BatchWindows is Model.BatchWindows.
func (x *Intervened) BatchWindows(n int) int { return x.m.BatchWindows(n) }
