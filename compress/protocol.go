package compress

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/predict"
)

// Freezer is predict.Freezer: a State that can stop learning. States of
// PPMPredictor and of package ctw implement it.
type Freezer = predict.Freezer

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
