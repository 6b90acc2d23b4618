package source

import (
	"fmt"

	"github.com/vomc/vomc/predict"
)

// Oracle is the predict.Predictor that knows the source: it predicts
// P(x_{n+1} = a | x_1^n) = p_s(a), s = β_{L(T)}(x_{1−D}, …, x_n), with the
// dummy initial context x_{1−D}^0 = (0, …, 0) of Tree.Generate(…, nil). Its
// expected log-loss is the source's conditional entropy, a lower bound for
// every method (CTW included) on sequences generated from this tree.
type Oracle struct {
	t    *Tree
	d    int
	name string
}

// NewOracle returns the oracle predictor of a valid tree (the tree is
// copied, so later changes to t do not affect it).
func NewOracle(t *Tree) (*Oracle, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return &Oracle{t: t.Clone(), d: t.Depth(), name: fmt.Sprintf("Oracle(A=%d,D=%d,|S|=%d)", t.A, t.D, t.NumLeaves())}, nil
}

// Name returns "Oracle(A=…,D=…,|S|=…)", |S| being the number of leaves.
func (o *Oracle) Name() string { return o.name }

// AlphabetSize returns A.
func (o *Oracle) AlphabetSize() int { return o.t.A }

// NewState returns a state whose past is the dummy context of zeros.
func (o *Oracle) NewState() predict.State {
	return &oracleState{o: o, hist: make([]byte, o.d)}
}

type oracleState struct {
	o    *Oracle
	hist []byte // the last d symbols, time order
}

// Predict copies p_s of the current context's leaf into p.
func (s *oracleState) Predict(p []float64) {
	n := s.o.t.Root
	for j := len(s.hist) - 1; n.Children != nil; j-- {
		n = n.Children[s.hist[j]]
	}
	copy(p, n.P)
}

// Observe appends a to the history.
func (s *oracleState) Observe(a byte) {
	if len(s.hist) == 0 {
		return
	}
	copy(s.hist, s.hist[1:])
	s.hist[len(s.hist)-1] = a
}
