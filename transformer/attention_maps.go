package transformer

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/transformer/kernels"
)

// AttentionMaps runs the model on one window x (1 ≤ len(x) = T ≤ N,
// symbols < A) and returns the attention weights of every head:
// maps[l][h] is the T×T row-major matrix of layer l, head h (0-based),
// whose row i (query position) holds softmax_{j≤i}(q_i·k_j/√hs) in columns
// j ≤ i and zeros above the diagonal (the causal mask), so every row sums
// to 1.
//
// It is an inference pass (Forward on fresh, non-training activations, on
// the model's backend), then each layer's q, k entries are copied to the
// host (Activations.QKV) and, per head, the scores and softmax are
// computed there as in the CPU engine's attention (kernel GEMM,
// kernels.Softmax): the training path, which keeps only a log-sum-exp per
// row, is untouched, and any backend gives the maps. Memory is O(L·H·T²) for the result.
func (m *Model) AttentionMaps(x []byte) ([][][]float32, error) {
	c := m.Config
	T := len(x)
	if T == 0 || T > c.Context {
		return nil, fmt.Errorf("transformer: attention maps of a window of %d symbols, want 1..%d", T, c.Context)
	}
	for i, s := range x {
		if int(s) >= c.Alphabet {
			return nil, fmt.Errorf("transformer: symbol %d at position %d outside the alphabet of %d", s, i, c.Alphabet)
		}
	}
	a := m.NewActivations(1, T, false)
	m.Forward(a, x, 1, T)

	maps := make([][][]float32, c.Layers)
	k := kernels.Default
	C, C3 := c.Embed, 3*c.Embed
	for l := range maps {
		NH := c.Heads[l]
		hs := C / NH
		scale := float32(1 / math.Sqrt(float64(hs)))
		qkv := a.QKV(l) // an explicit copy to the host
		maps[l] = make([][]float32, NH)
		for h := range maps[l] {
			p := make([]float32, T*T)
			// S = Q·Kᵀ on the strided head views of qkv
			k.Gemm(false, true, T, T, hs, qkv[h*hs:], C3, qkv[C+h*hs:], C3, 0, p, T)
			for i := 0; i < T; i++ {
				row := p[i*T : (i+1)*T]
				kernels.Softmax(row[:i+1], scale)
				clear(row[i+1:])
			}
			maps[l][h] = p
		}
	}
	return maps, nil
}
