package leafprior_test

import (
	"errors"
	"fmt"

	"github.com/vomc/vomc/leafprior"
	"github.com/vomc/vomc/source"
)

// A leaf of a tree drawn with source's Sparse generator (A = 3, each symbol
// zeroed with probability ½) has seen symbol 0 three times and symbol 1
// once. The marginal likelihood of that history and the Bayes predictive
// distribution of the next symbol: symbol 2 is less likely than under a
// Dirichlet prior, since p_2 = 0 with probability about ½.
func ExampleSparse() {
	prior := source.Prior{A: 3, Depths: []int{0}, Lambda: 0.5, Leaves: source.Sparse}
	leaf, err := leafprior.FromPrior(prior, source.Sparse)
	if err != nil {
		fmt.Println(err)
		return
	}
	n := []int32{3, 1, 0}
	lm, _ := leaf.LogMarginal(n)
	p := make([]float64, 3)
	_ = leaf.Predictive(n, p)
	fmt.Printf("ln M = %.6f nats, predictive %.4f\n", lm, p)

	// With zero = 1 every leaf emits a single symbol: two distinct symbols
	// have marginal likelihood 0 and no predictive distribution.
	single, _ := leafprior.NewSparse(3, 1)
	lm, _ = single.LogMarginal(n)
	err = single.Predictive(n, p)
	fmt.Println(lm, errors.Is(err, leafprior.ErrZeroMarginal))

	// The Krichevsky–Trofimov estimator, Dir(½, ½, ½), for comparison.
	kt, _ := leafprior.NewDirichlet([]float64{0.5, 0.5, 0.5})
	lm, _ = kt.LogMarginal(n)
	_ = kt.Predictive(n, p)
	fmt.Printf("ln M = %.6f nats, predictive %.4f\n", lm, p)
	// Output:
	// ln M = -4.727287 nats, predictive [0.5913 0.3666 0.0421]
	// -Inf true
	// ln M = -4.143135 nats, predictive [0.6364 0.2727 0.0909]
}
