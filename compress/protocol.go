package compress

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/predict"
)

// Freezer is an optional interface of a predict.State: after Freeze, the
// state stops learning (its statistics no longer change) but Observe still
// moves its context, so Predict gives the frozen model's prediction for
// the actual history. States of PPMPredictor implement it.
//
// The states of packages ppm and ctw do not implement it yet: each needs a
// method `Freeze()` on its state type that sets a flag making Observe skip
// the count (and, for CTW, weight) updates while still advancing the
// context (for ppm: move to the longest existing context node instead of
// creating nodes; for ctw: keep the last D symbols).
type Freezer interface {
	Freeze()
}

// HalfLogLoss is the prediction protocol of Begleiter, El-Yaniv and Yona
// (2004): a fresh State of pred learns the first half x[:len(x)/2], then
// the model is frozen and HalfLogLoss returns the average log-loss
// −(1/m)Σ log2 P(x_i | x_1^{i−1}) over the second half (m = len(x) −
// len(x)/2 symbols), in bits per symbol.
//
// frozen reports whether the state implemented Freezer. If it did not, the
// state keeps learning during the second half (it is told every symbol with
// Observe, as in sequential prediction): a deviation from the protocol,
// which the caller should report. A zero probability gives +Inf. x must
// have at least 2 symbols, all in the predictor's alphabet.
func HalfLogLoss(pred predict.Predictor, x []byte) (bits float64, frozen bool, err error) {
	A := pred.AlphabetSize()
	if err := predict.Check(x, A); err != nil {
		return 0, false, err
	}
	if len(x) < 2 {
		return 0, false, fmt.Errorf("compress: HalfLogLoss needs at least 2 symbols, got %d", len(x))
	}
	st := pred.NewState()
	h := len(x) / 2
	for _, s := range x[:h] {
		st.Observe(s)
	}
	if f, ok := st.(Freezer); ok {
		f.Freeze()
		frozen = true
	}
	p := make([]float64, A)
	sum := 0.0
	for _, s := range x[h:] {
		st.Predict(p)
		sum += -math.Log2(p[s])
		st.Observe(s)
	}
	return sum / float64(len(x)-h), frozen, nil
}
