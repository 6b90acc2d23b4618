package transformer

import (
	"fmt"
	"slices"

	"github.com/vomc/vomc/predict"
)

var _ predict.BatchPredictor = (*Model)(nil)

// batchScratch is the host scratch of predictBatch, kept in an Inference
// so that a pass allocates nothing once it has grown.
type batchScratch struct {
	inputs []byte     // (B,T) inputs of one pass
	keys   []int64    // T<<32 | window of the windows' first passes
	slide  []slideRow // the rows of one batch of sliding passes
	one    [1][]byte  // PredictSequence's window
	oneOut [1][]float64
}

// slideRow is row i of window j, predicted from the N symbols before it.
type slideRow struct{ j, i int }

// BatchWindows is the number of windows of n symbols that PredictBatch
// runs in one forward pass: ⌊R / T⌋ (at least 1) for passes of
// T = min(n−1, N) symbols in forward-only buffers of R = max(InferRows,
// N) rows.
func (m *Model) BatchWindows(n int) int { return m.Config.BatchWindows(n) }

// BatchWindows is Model.BatchWindows for a model of c.
func (c Config) BatchWindows(n int) int {
	T := min(max(n-1, 1), c.Context)
	return max(1, c.inferRows()/T)
}

// PredictBatch fills outs[j] (len(xs[j])·A) for every window xs[j] with
// what PredictSequence(xs[j], outs[j]) gives — bit for bit on the CPU
// backend (every op there computes a row of a window the same whatever
// the other rows of the pass), to float32 rounding on a backend whose
// matrix products split their sums by shape (CUDA) — running the windows'
// passes several at a time: the first pass of each window (over its first
// min(n−1, N) symbols; windows of the same length share passes, up to
// BatchWindows of them) and the sliding passes of windows longer than
// N+1 (up to ⌊R/N⌋ per pass). The windows may have different lengths
// (0 included). The passes run on forward-only buffers (Inference) from
// the model's pool, allocated once and reused; only the rows returned are
// copied to the host. It returns an error, and fills nothing, when the
// lengths of outs do not match or a symbol is outside the alphabet, and
// an error when the backend cannot allocate the buffers.
func (m *Model) PredictBatch(xs [][]byte, outs [][]float64) error {
	return m.predictBatchChecked(xs, outs, nil)
}

// predictBatchChecked is PredictBatch with the attention hook of every
// pass (nil: the intact model).
func (m *Model) predictBatchChecked(xs [][]byte, outs [][]float64, hook attentionHook) error {
	A := m.Config.Alphabet
	if len(outs) != len(xs) {
		return fmt.Errorf("transformer: %d outputs for %d windows", len(outs), len(xs))
	}
	for j, x := range xs {
		if len(outs[j]) != len(x)*A {
			return fmt.Errorf("transformer: window %d: output of length %d, want %d·%d", j, len(outs[j]), len(x), A)
		}
		if err := predict.Check(x, A); err != nil {
			return fmt.Errorf("transformer: window %d: %w", j, err)
		}
	}
	in, err := m.poolInference()
	if err != nil {
		return err
	}
	defer m.ipool.put(in)
	m.predictBatch(in, xs, outs, hook)
	return nil
}

// predictBatch is PredictBatch on checked inputs, every pass with the
// attention hook (nil: none).
func (m *Model) predictBatch(in *Inference, xs [][]byte, outs [][]float64, hook attentionHook) {
	N, A := m.Config.Context, m.Config.Alphabet
	sc := &in.scratch
	if cap(sc.inputs) < in.Rows {
		sc.inputs = make([]byte, in.Rows)
	}
	// first passes, grouped by length: row i ≤ T of window j is row i−1
	// of the pass over its first T = min(n−1, N) symbols
	sc.keys = sc.keys[:0]
	for j, x := range xs {
		if len(x) > 0 {
			predict.Uniform(outs[j][:A])
		}
		if len(x) > 1 {
			sc.keys = append(sc.keys, int64(min(len(x)-1, N))<<32|int64(j))
		}
	}
	if !slices.IsSorted(sc.keys) {
		slices.Sort(sc.keys)
	}
	for k := 0; k < len(sc.keys); {
		T := int(sc.keys[k] >> 32)
		B := min(in.Rows/T, len(sc.keys)-k)
		for ; B > 1 && int(sc.keys[k+B-1]>>32) != T; B-- {
		}
		inputs := sc.inputs[:B*T]
		for b := range B {
			copy(inputs[b*T:(b+1)*T], xs[sc.keys[k+b]&(1<<32-1)][:T])
		}
		m.forwardInfer(in, inputs, B, T, hook)
		probs := in.Probs()
		for b := range B {
			out := outs[sc.keys[k+b]&(1<<32-1)]
			for i := 1; i <= T; i++ {
				predict.FromFloat32(out[i*A:(i+1)*A], probs[(b*T+i-1)*A:(b*T+i)*A])
			}
		}
		k += B
	}
	// sliding passes: row i > N of window j is the last row of the pass
	// over x[i−N : i]
	Bs := in.Rows / N
	sc.slide = sc.slide[:0]
	flush := func() {
		B := len(sc.slide)
		if B == 0 {
			return
		}
		inputs := sc.inputs[:B*N]
		for b, r := range sc.slide {
			copy(inputs[b*N:(b+1)*N], xs[r.j][r.i-N:r.i])
		}
		m.forwardInfer(in, inputs, B, N, hook)
		for b, r := range sc.slide {
			predict.FromFloat32(outs[r.j][r.i*A:(r.i+1)*A], in.ProbRow(b, N-1))
		}
		sc.slide = sc.slide[:0]
	}
	for j, x := range xs {
		for i := N + 1; i < len(x); i++ {
			sc.slide = append(sc.slide, slideRow{j, i})
			if len(sc.slide) == Bs {
				flush()
			}
		}
	}
	flush()
}
