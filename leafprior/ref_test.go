package leafprior

import (
	"math"
	"math/big"
)

// This file holds exact reference values for the two-symbol moment
//
//	I(a, b) = E[p^a (1−p)^b],  p = U_1/(U_1+U_2),
//
// whose density on [0,1] is ½·max(p, 1−p)^{−2}, so that
//
//	I(a, b) = ½·[B_½(a+1, b−1) + B_½(b+1, a−1)],  B_x(α, β) = ∫_0^x t^{α−1}(1−t)^{β−1} dt.

// ratI2 returns I(a, b) for a, b ≥ 2 exactly: the two incomplete beta
// integrals are integrals of polynomials, ∫_0^½ p^a (1−p)^r dp =
// Σ_{k=0}^{r} C(r,k) (−1)^k 2^{−(a+k+1)}/(a+k+1).
func ratI2(a, b int) *big.Rat {
	part := func(a, r int) *big.Rat {
		sum := new(big.Rat)
		binom := big.NewInt(1)
		for k := 0; k <= r; k++ {
			den := new(big.Int).Lsh(big.NewInt(int64(a+k+1)), uint(a+k+1))
			term := new(big.Rat).SetFrac(binom, den)
			if k%2 == 1 {
				term.Neg(term)
			}
			sum.Add(sum, term)
			binom.Mul(binom, big.NewInt(int64(r-k)))
			binom.Quo(binom, big.NewInt(int64(k+1)))
		}
		return sum
	}
	s := new(big.Rat).Add(part(a, b-2), part(b, a-2))
	return s.Mul(s, big.NewRat(1, 2))
}

const refPrec = 256

// betaHalf returns B_½(α, β) for integers α ≥ 1 and β ≥ −1 from the series
// of positive terms B_x(α, β) = x^α (1−x)^β / α · Σ_{n≥0} (α+β)_n/(α+1)_n x^n
// (DLMF 8.17.8 with 8.17.7), in refPrec-bit arithmetic.
func betaHalf(alpha, beta int) *big.Float {
	nf := func(v float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(v) }
	sum := nf(1)
	term := nf(1)
	eps := new(big.Float).SetMantExp(nf(1), -refPrec-8)
	for n := 0; ; n++ {
		num := float64(alpha + beta + n)
		den := float64(2 * (alpha + 1 + n))
		if num == 0 {
			break
		}
		term.Mul(term, nf(num))
		term.Quo(term, nf(den))
		sum.Add(sum, term)
		// Stop once the ratios are below 1 and the term is negligible.
		if num < den {
			lim := new(big.Float).Mul(sum, eps)
			if term.Cmp(lim) < 0 {
				break
			}
		}
	}
	sum.Quo(sum, nf(float64(alpha)))
	return sum.SetMantExp(sum, -(alpha + beta))
}

// bigI2 returns I(a, b) for a + b ≥ 1 in refPrec-bit arithmetic.
func bigI2(a, b int) *big.Float {
	s := new(big.Float).SetPrec(refPrec).Add(betaHalf(a+1, b-1), betaHalf(b+1, a-1))
	return s.SetMantExp(s, -1)
}

// bigFact returns k! in refPrec-bit arithmetic (relative error below
// k·2^−refPrec).
func bigFact(k int) *big.Float {
	f := new(big.Float).SetPrec(refPrec).SetInt64(1)
	x := new(big.Float).SetPrec(refPrec)
	for i := 2; i <= k; i++ {
		f.Mul(f, x.SetInt64(int64(i)))
	}
	return f
}

// bigPow returns t^k in refPrec-bit arithmetic.
func bigPow(t, k int) *big.Float {
	r := new(big.Float).SetPrec(refPrec).SetInt64(1)
	b := new(big.Float).SetPrec(refPrec).SetInt64(int64(t))
	for ; k > 0; k >>= 1 {
		if k&1 == 1 {
			r.Mul(r, b)
		}
		b.Mul(b, b)
	}
	return r
}

// bigJ2 returns J(a, b) = I(a, b) · (N−1)!/(a! b!), N = a + b ≥ 1, in
// refPrec-bit arithmetic.
func bigJ2(a, b int) *big.Float {
	c := bigFact(a + b - 1)
	c.Quo(c, bigFact(a))
	c.Quo(c, bigFact(b))
	return c.Mul(c, bigI2(a, b))
}

// bigLogShift returns ln x − s for x > 0, with x = mant·2^e summed as
// e·ln2 − s + ln mant with e·ln 2 in double-double arithmetic, so that the
// result is good to about 1e−16·(1 + |ln x − s|) even when ln x and s are
// large and close.
func bigLogShift(x *big.Float, s float64) float64 {
	// ln 2 = ln2hi + ln2lo, ln2hi with 32 significant bits (fdlibm's split).
	const (
		ln2hi = 6.93147180369123816490e-01
		ln2lo = 1.90821492927058770002e-10
	)
	mant := new(big.Float)
	e := float64(x.MantExp(mant))
	f, _ := mant.Float64()
	p := e * ln2hi
	perr := math.FMA(e, ln2hi, -p)
	return (p - s) + (perr + e*ln2lo + math.Log(f))
}

// bigLog returns ln x for x > 0.
func bigLog(x *big.Float) float64 { return bigLogShift(x, 0) }

// ratLog returns ln r for a rational r > 0.
func ratLog(r *big.Rat) float64 {
	return bigLog(new(big.Float).SetPrec(refPrec).SetRat(r))
}
