package kernels

import "math"

// Constants of Exp32: ln 2 split so that n·ln2hi is exact for |n| < 2¹⁵
// (Cody–Waite), and the Taylor coefficients 1/k! of e^r.
const (
	log2e = 1.44269504088896340736
	ln2hi = 0.693359375
	ln2lo = -2.12194440e-4
	expC2 = 1.0 / 2
	expC3 = 1.0 / 6
	expC4 = 1.0 / 24
	expC5 = 1.0 / 120
	expC6 = 1.0 / 720
	expC7 = 1.0 / 5040
)

// Exp32 returns e^x in float32: n = round(x·log₂e), r = x − n·ln 2 (two
// steps, |r| ≤ ln2/2), e^r by its degree-7 Taylor polynomial (truncation
// error < 6e-9), times 2ⁿ. Maximum relative error 1.0e-7 (measured over
// [−87.3, 88.7], Go and SIMD versions; TestExp32 bounds it by 2e-7), i.e.
// within about one ulp; results below 2⁻¹²⁶ lose relative accuracy
// gradually and are 0 below e^−104. The SIMD kernels use the same
// algorithm.
func Exp32(x float32) float32 {
	if !(x > -104) {
		if x != x {
			return x
		}
		return 0
	}
	if x > 88.8 {
		return float32(math.Inf(1))
	}
	n := float32(math.RoundToEven(float64(x * log2e)))
	r := x - n*ln2hi
	r -= n * ln2lo
	p := ((((((expC7*r+expC6)*r+expC5)*r+expC4)*r+expC3)*r+expC2)*r+1)*r + 1
	ni := int32(n)
	switch {
	case ni < -126:
		return p * math.Float32frombits(uint32(ni+126+127)<<23) * 0x1p-126
	case ni > 127:
		return p * 2 * 0x1p127
	}
	return p * math.Float32frombits(uint32(ni+127)<<23)
}

// ExpInPlace sets x[i] ← Exp32(x[i]) (the set's kernel).
func (ks *Set) ExpInPlace(x []float32) {
	if len(x) == 0 {
		return
	}
	if f := ks.vec.exp; f != nil {
		f(&x[0], len(x))
		return
	}
	for i, v := range x {
		x[i] = Exp32(v)
	}
}

// Softmax sets x ← softmax(scale·x) in place: x[i] = e^{scale·(x[i]−max)}
// / Σ_j e^{scale·(x[j]−max)}, for len(x) ≥ 1 and scale > 0 (exp as
// Exp32), and returns the log-sum-exp scale·max + ln Σ_j e^{scale·(x[j]−max)}
// of the scaled input, with which ScaledExp recomputes the result. It uses
// the set's kernel.
func (ks *Set) Softmax(x []float32, scale float32) (lse float32) {
	if len(x) == 0 {
		return float32(math.Inf(-1))
	}
	var mx, sum float32
	if f := ks.vec.softmax; f != nil {
		mx, sum = f(&x[0], len(x), scale)
	} else {
		mx, sum = softmaxGo(x, scale)
	}
	return scale*mx + lnPos(sum)
}

// lnPos returns ln x for a positive normal float32 x (|error| ≤ 1 ulp of
// the result plus 1e-9, TestLnPos): x = 2^e·f with f ∈ [√½, √2), ln f =
// 2·atanh(s), s = (f−1)/(f+1), |s| ≤ 0.172, by its series to s⁹ (truncation
// < 1e-9), evaluated in float64 (cheaper than math.Log).
func lnPos(x float32) float32 {
	bits := math.Float32bits(x)
	e := int(bits>>23) - 127
	f := float64(math.Float32frombits(bits&0x7fffff | 0x3f800000))
	if f > math.Sqrt2 {
		f *= 0.5
		e++
	}
	t := (f - 1) / (f + 1)
	t2 := t * t
	p := t * (2 + t2*(2.0/3+t2*(2.0/5+t2*(2.0/7+t2*(2.0/9)))))
	return float32(float64(e)*math.Ln2 + p)
}

// ScaledExp sets x[i] ← Exp32(scale·x[i] − shift) (softmax(scale·x) when
// shift is Softmax's log-sum-exp). It uses the set's kernel.
func (ks *Set) ScaledExp(x []float32, scale, shift float32) {
	if len(x) == 0 {
		return
	}
	if f := ks.vec.scaledExp; f != nil {
		f(&x[0], len(x), scale, shift)
		return
	}
	for i, v := range x {
		x[i] = Exp32(scale*v - shift)
	}
}

// SoftmaxBackward turns dp = ∂L/∂p of p = softmax(scale·s) into ∂L/∂s =
// scale·p⊙(dp − ⟨p, dp⟩), in place (len(dp) ≥ len(p)). It uses the
// set's kernel.
func (ks *Set) SoftmaxBackward(p, dp []float32, scale float32) {
	if len(p) == 0 {
		return
	}
	dp = dp[:len(p)]
	if f := ks.vec.softmaxBackward; f != nil {
		f(&p[0], &dp[0], len(p), scale)
		return
	}
	softmaxBackwardGo(p, dp, scale)
}

func softmaxGo(x []float32, scale float32) (mx, sum float32) {
	m := x[0]
	for _, v := range x[1:] {
		m = max(m, v)
	}
	var s float32
	for i, v := range x {
		e := Exp32(scale * (v - m))
		x[i] = e
		s += e
	}
	inv := 1 / s
	for i := range x {
		x[i] *= inv
	}
	return m, s
}

func softmaxBackwardGo(p, dp []float32, scale float32) {
	dp = dp[:len(p)]
	var dot float32
	for i, v := range p {
		dot += v * dp[i]
	}
	for i, v := range p {
		dp[i] = scale * v * (dp[i] - dot)
	}
}
