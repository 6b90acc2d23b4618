// Package predict defines the one interface that every vomc method
// implements: CTW, Kneser–Ney, PPM, unigram and fixed-order Markov
// estimators, trained transformers and the paper's constructions.
//
// A method is a Predictor: an immutable, goroutine-safe description of a
// sequential probability assignment over the alphabet {0, …, A−1}. Each
// sequence is processed by its own State, obtained from NewState, so many
// sequences can be evaluated in parallel from one Predictor.
//
// Symbols are bytes holding values 0..A−1 (A ≤ 256). All losses in vomc are
// natural-log losses (nats) unless a name says bits.
package predict

import (
	"fmt"
	"math"
)

// Predictor is a sequential next-symbol predictor (a "probability
// assignment"). It is immutable and safe for concurrent use; all per-sequence
// state lives in the State values it creates.
type Predictor interface {
	// Name is a short human-readable label, e.g. "CTW(D=3)".
	Name() string
	// AlphabetSize is A: symbols are 0..A−1.
	AlphabetSize() int
	// NewState returns a fresh state with an empty history x_1^0.
	NewState() State
}

// State is the sequential state of a Predictor on one sequence x_1, x_2, ….
// After n calls to Observe it holds the history x_1^n.
type State interface {
	// Predict writes the predictive distribution P(x_{n+1} = a | x_1^n) for
	// a = 0..A−1 into p, which must have length A. The values are
	// probabilities (not logs) and sum to 1 up to rounding.
	Predict(p []float64)
	// Observe appends the symbol a (0 ≤ a < A) to the history. Callers
	// validate symbols (see Check); a State may assume a < A.
	Observe(a byte)
}

// Freezer is an optional interface of a State: after Freeze the state stops
// learning — its statistics no longer change — but Observe still moves its
// context, so Predict gives the frozen model's prediction for the actual
// history. It serves protocols that train on one part of a sequence and
// test on the rest (Begleiter, El-Yaniv and Yona 2004).
type Freezer interface {
	Freeze()
}

// SequencePredictor is an optional interface for methods that compute the
// distributions of a whole sequence at once more efficiently than
// symbol-by-symbol (a transformer's forward pass over its window, say).
// PredictSequence must give exactly what the State loop would give.
type SequencePredictor interface {
	Predictor
	// PredictSequence fills out (length len(x)·A) so that row i,
	// out[i*A:(i+1)*A], is P(x_{i+1} = · | x_1^i) (0-based i: row 0 is the
	// prediction of x[0] from the empty history).
	PredictSequence(x []byte, out []float64)
}

// BatchPredictor is an optional interface for methods that compute the
// distributions of several sequences at once more efficiently than one
// at a time (a transformer's forward pass over a batch of windows).
// PredictBatch must give exactly what PredictSequence gives for each
// sequence, up to the float32 rounding a method documents.
type BatchPredictor interface {
	SequencePredictor
	// PredictBatch fills outs[j] (length len(xs[j])·A) as
	// PredictSequence(xs[j], outs[j]) does, for every j. It returns an
	// error (and does not panic) when the lengths do not match, a symbol
	// is outside the alphabet or the method cannot get the memory it
	// needs.
	PredictBatch(xs [][]byte, outs [][]float64) error
	// BatchWindows is the number (≥ 1) of sequences of length n that
	// PredictBatch handles best in one call.
	BatchWindows(n int) int
}

// Check reports an error naming the first symbol of x that is not in
// 0..A−1, with its 0-based position.
func Check(x []byte, A int) error {
	if A < 1 || A > 256 {
		return fmt.Errorf("alphabet size %d outside 1..256", A)
	}
	if A == 256 {
		return nil
	}
	for i, s := range x {
		if int(s) >= A {
			return fmt.Errorf("symbol %d at position %d is outside the alphabet 0..%d", s, i, A-1)
		}
	}
	return nil
}

// Sequence fills out (length len(x)·A) with the predictive distribution at
// every position of x, row i being P(x_{i+1} = · | x_1^i). It uses
// PredictSequence when the predictor has it and the State loop otherwise.
func Sequence(p Predictor, x []byte, out []float64) error {
	A := p.AlphabetSize()
	if err := Check(x, A); err != nil {
		return err
	}
	if len(out) != len(x)*A {
		return fmt.Errorf("predict: output has length %d, want %d·%d", len(out), len(x), A)
	}
	if sp, ok := p.(SequencePredictor); ok {
		sp.PredictSequence(x, out)
		return nil
	}
	st := p.NewState()
	for i, s := range x {
		st.Predict(out[i*A : (i+1)*A])
		st.Observe(s)
	}
	return nil
}

// LogLoss writes into loss[i] the log-loss −ln P(x_{i+1} | x_1^i) in nats of
// every symbol of x (loss must have length len(x)) and returns their sum,
// which is −ln P(x_1^n), the code length of x in nats.
func LogLoss(p Predictor, x []byte, loss []float64) (float64, error) {
	A := p.AlphabetSize()
	if len(loss) != len(x) {
		return 0, fmt.Errorf("predict: loss has length %d, want %d", len(loss), len(x))
	}
	if err := Check(x, A); err != nil {
		return 0, err
	}
	total := 0.0
	if sp, ok := p.(SequencePredictor); ok {
		out := make([]float64, len(x)*A)
		sp.PredictSequence(x, out)
		for i, s := range x {
			loss[i] = -math.Log(out[i*A+int(s)])
			total += loss[i]
		}
		return total, nil
	}
	st := p.NewState()
	dist := make([]float64, A)
	for i, s := range x {
		st.Predict(dist)
		loss[i] = -math.Log(dist[s])
		total += loss[i]
		st.Observe(s)
	}
	if e, ok := st.(Erring); ok {
		if err := e.Err(); err != nil {
			return total, err
		}
	}
	return total, nil
}

// Erring is an optional interface of a State whose predictions can stop
// being exact (e.g. the bayes method's sparse leaf marginals beyond their
// tested count range): Err reports the first such error, and LogLoss fails
// with it rather than return inexact losses.
type Erring interface {
	Err() error
}

// Nats2Bits converts a loss in nats to bits (divide by ln 2).
func Nats2Bits(nats float64) float64 { return nats / math.Ln2 }

// Uniform sets p to the uniform distribution 1/len(p).
func Uniform(p []float64) {
	for i := range p {
		p[i] = 1 / float64(len(p))
	}
}

// FromFloat32 sets p to the float32 distribution q (of the same length)
// widened to float64 and renormalised in float64, so that p sums to 1 to
// float64 precision (a neural model's softmax rows are float32).
func FromFloat32(p []float64, q []float32) {
	sum := 0.0
	for i, v := range q {
		p[i] = float64(v)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
}
