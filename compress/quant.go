package compress

import "math"

// QuantTotal is the total of the frequency tables Quantize produces for
// predictors plugged in with FromPredictor: 2^16.
const QuantTotal = 1 << 16

// Quantize turns the distribution p (length A, 1 ≤ A ≤ total) into integer
// frequencies freq (length A) with every freq[a] ≥ 1 and Σ freq = total. The
// rule, which is fully deterministic:
//
//  1. Every entry that is NaN, infinite or ≤ 0 counts as 0. Let s be the sum
//     of the other entries, added in index order. If s is 0 or not finite,
//     all entries count as 1 (uniform).
//  2. With spare = total − A, freq[a] = 1 + ⌊p[a]·(spare/s)⌋, the product
//     clamped to [0, spare].
//  3. The difference total − Σ freq (a few units, of either sign) is added
//     to the largest frequency, ties broken by the smallest index (if it is
//     negative and the largest frequency cannot absorb it while staying ≥ 1,
//     the rest goes to the next largest, and so on).
//
// Portability: the only floating-point operations are additions in a fixed
// order, one division and one multiplication per entry, each rounded to
// float64 on its own (no fused multiply–add can arise), so for the same p
// the result is bit-identical on every platform Go supports. Whether p
// itself is bit-identical across platforms is up to the predictor (Go may
// fuse x*y+z into an FMA on arm64, ppc64le, s390x, riscv64 and loong64, and
// math.Exp/math.Log have assembly versions on some ports); the built-in
// models of this package do not use Quantize and are integer-exact.
//
// Quantize panics if len(freq) != len(p), A = 0 or total < A.
func Quantize(p []float64, total uint32, freq []uint32) {
	A := len(p)
	if len(freq) != A || A == 0 || uint64(total) < uint64(A) {
		panic("compress: Quantize: bad lengths or total")
	}
	s := 0.0
	for _, v := range p {
		if v > 0 && !math.IsInf(v, 0) {
			s += v
		}
	}
	spare := total - uint32(A)
	uniform := !(s > 0) || math.IsInf(s, 0)
	scale := float64(spare) / s
	var sum uint64
	for a, v := range p {
		var f uint32
		switch {
		case uniform:
			f = spare / uint32(A)
		case v > 0 && !math.IsInf(v, 0):
			x := float64(v * scale)
			if x >= float64(spare) {
				f = spare
			} else if x > 0 {
				f = uint32(x)
			}
		}
		freq[a] = 1 + f
		sum += uint64(freq[a])
	}
	diff := int64(total) - int64(sum)
	for diff != 0 {
		best := 0
		for a := 1; a < A; a++ {
			if freq[a] > freq[best] {
				best = a
			}
		}
		if diff > 0 {
			freq[best] += uint32(diff)
			return
		}
		take := min(int64(freq[best]-1), -diff)
		if take == 0 {
			panic("compress: Quantize: cannot reach total") // impossible: total ≥ A
		}
		freq[best] -= uint32(take)
		diff += take
	}
}
