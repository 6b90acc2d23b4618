// Package logexp is arithmetic on numbers kept as their natural logarithms,
// as the Bayesian mixtures of ctw, bayes, construct and leafprior keep
// probabilities that would underflow.
package logexp

import "math"

// Add returns ln(e^x + e^y) without overflow or underflow: the larger of x
// and y plus ln(1 + e^(smaller − larger)); −Inf stands for a zero, so
// Add(x, −Inf) = x exactly.
func Add(x, y float64) float64 {
	if x < y {
		x, y = y, x
	}
	if math.IsInf(y, -1) {
		return x
	}
	return x + math.Log1p(math.Exp(y-x))
}
