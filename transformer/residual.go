package transformer

import (
	"fmt"

	"github.com/vomc/vomc/transformer/backend"
)

// Streams is the number of residual-stream read-outs of a model of c
// (ResidualStreams): the embedding output and the stream after each of
// the c.Layers blocks.
func (c Config) Streams() int { return c.Layers + 1 }

// ResidualStreams runs ForwardInfer on B windows of T symbols (inputs,
// row-major (B,T), symbols < A, B·T ≤ in.Rows, T ≤ N) and copies rows of
// the residual stream into dst: dst[s] receives stream s for every
// s < len(dst) ≤ Streams(), row rows[i] (b·T + t: position t of window b)
// at dst[s][i·E : (i+1)·E], or every row in order when rows is nil
// (len(dst[s]) = len(rows)·E, or B·T·E). Stream 0 is the embedding output
// x⁰ = W_te[x_t] + pos_t; stream l in 1..Layers is the stream after
// block l,
//
//	xˡ = yˡ + FF(LN₂(yˡ)),  yˡ = xˡ⁻¹ + Attn(LN₁(xˡ⁻¹))
//
// (without a feed-forward sub-layer, xˡ = yˡ; without LayerNorm, LN is the
// identity), before the final LayerNorm and the read-out. The pass is
// ForwardInfer's, op for op (the probabilities are left in in as after
// ForwardInfer); each stream costs one host copy of the rows asked for.
func (m *Model) ResidualStreams(in *Inference, inputs []byte, B, T int, rows []int, dst [][]float32) error {
	c := m.Config
	if len(dst) > c.Streams() {
		return fmt.Errorf("transformer: %d residual streams asked of a model with %d", len(dst), c.Streams())
	}
	if B < 1 || T < 1 || T > c.Context || B*T > in.Rows || len(inputs) != B*T {
		return fmt.Errorf("transformer: residual streams of (%d,%d) with %d inputs, buffers hold %d rows of up to %d", B, T, len(inputs), in.Rows, c.Context)
	}
	n := B * T
	if rows != nil {
		n = len(rows)
		for _, r := range rows {
			if r < 0 || r >= B*T {
				return fmt.Errorf("transformer: residual stream row %d of a pass over %d rows", r, B*T)
			}
		}
	}
	for s, d := range dst {
		if len(d) != n*c.Embed {
			return fmt.Errorf("transformer: residual stream %d of %d values into %d", s, n*c.Embed, len(d))
		}
	}
	if err := checkSymbols(inputs, c.Alphabet); err != nil {
		return err
	}
	in.streams, in.streamRows = dst, rows
	defer func() { in.streams, in.streamRows = nil, nil }()
	m.ForwardInfer(in, inputs, B, T)
	return nil
}

// keepStream copies the rows of stream s (x) that ResidualStreams asked
// for to the host.
func (in *Inference) keepStream(s int, x backend.Tensor) {
	if s >= len(in.streams) {
		return
	}
	dst := in.streams[s]
	if len(dst) == 0 {
		return
	}
	if in.streamRows == nil {
		in.be.Download(dst, x.Prefix(len(dst)))
		return
	}
	E := len(dst) / len(in.streamRows)
	for i, r := range in.streamRows {
		in.be.Download(dst[i*E:(i+1)*E], x.Slice(r*E, E))
	}
}

// checkSymbols reports the first symbol of x outside 0..A−1.
func checkSymbols(x []byte, A int) error {
	for i, s := range x {
		if int(s) >= A {
			return fmt.Errorf("transformer: symbol %d at position %d outside the alphabet of %d", s, i, A)
		}
	}
	return nil
}
