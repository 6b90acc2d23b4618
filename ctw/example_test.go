package ctw_test

import (
	"fmt"

	"github.com/vomc/vomc/ctw"
)

// ExampleNew runs CTW symbol by symbol: the predictive distribution, the
// posterior weights ω over context lengths and the log marginal
// likelihood. The README's library snippet is this function's body
// (TestREADMESnippet checks it).
func ExampleNew() {
	x := []byte{0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2} // symbols 0..A−1
	pr, err := ctw.New(ctw.Config{A: 3, D: 5, Lambda: 0.15, Alpha: 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	st := pr.NewCTWState()
	p := make([]float64, 3)
	omega := make([]float64, 6)
	for _, a := range x {
		st.Predict(p)     // P(x_{n+1} = · | x_1^n)
		st.Weights(omega) // ω_{n,l}: posterior that the length-l suffix is a leaf
		st.Observe(a)
	}
	st.Predict(p)
	fmt.Printf("ln P(x) = %.4f nats\n", st.LogML())
	fmt.Printf("P(next = 0, 1, 2) = %.3f\n", p)
	// Output:
	// ln P(x) = -13.1891 nats
	// P(next = 0, 1, 2) = [0.165 0.645 0.191]
}
