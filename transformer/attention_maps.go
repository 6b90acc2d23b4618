package transformer

import (
	"fmt"

	"github.com/vomc/vomc/transformer/backend"
)

// AttentionMaps runs the model on one window x (1 ≤ len(x) = T ≤ N,
// symbols < A) and returns the attention weights of every head:
// maps[l][h] is the T×T row-major matrix of layer l, head h (0-based),
// whose row i (query position) holds softmax_{j≤i}(q_i·k_j/√hs) in columns
// j ≤ i and zeros above the diagonal (the causal mask), so every row sums
// to 1.
//
// It is an inference pass (Forward on activations from the model's pool,
// as for prediction; safe for concurrent calls), then per layer the
// backend computes the weights from the layer's q, k entries
// (Backend.AttentionWeights, in a buffer of the largest layer's NH·T²
// values, freed at the end) and only the maps are copied to the host: the
// training path, which keeps only a log-sum-exp per row, is untouched.
// Memory is O(L·H·T²) for the result.
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
	a, err := m.poolActs()
	if err != nil {
		return nil, err
	}
	defer m.pool.put(a)
	m.Forward(a, x, 1, T)

	maxNH := 0
	for _, nh := range c.Heads {
		maxNH = max(maxNH, nh)
	}
	be := m.be
	w, err := backend.AllocTensor(be, maxNH*T*T)
	if err != nil {
		return nil, fmt.Errorf("transformer: attention maps of %d symbols: %w", T, err)
	}
	maps := make([][][]float32, c.Layers)
	for l := range maps {
		NH := c.Heads[l]
		be.AttentionWeights(w, a.act.layers[l].qkv.Prefix(T*3*c.Embed), 1, T, c.Embed, NH)
		maps[l] = make([][]float32, NH)
		for h := range maps[l] {
			maps[l][h] = make([]float32, T*T)
			be.Download(maps[l][h], w.Slice(h*T*T, T*T))
		}
	}
	if err := be.Free(w.Buf); err != nil {
		return nil, err
	}
	return maps, nil
}
