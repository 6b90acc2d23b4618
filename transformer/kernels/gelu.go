package kernels

// Constants of the GELU kernels: Abramowitz & Stegun 7.1.26,
// erfc(z) ≈ t·(a1 + t·(a2 + t·(a3 + t·(a4 + t·a5))))·e^−z², t = 1/(1 + p·z),
// z ≥ 0, with |error| ≤ 1.4e-7 (float64 evaluation; float32 adds ≈ 1e-7).
const (
	erfP       = 0.3275911
	erfA1      = 0.254829592
	erfA2      = -0.284496736
	erfA3      = 1.421413741
	erfA4      = -1.453152027
	erfA5      = 1.061405429
	invSqrt2   = 0.70710678118654752440
	invSqrt2Pi = 0.39894228040143267794
)

// phi32 returns Φ(x) = ½(1 + erf(x/√2)) and e^(−x²/2) in float32 (|error
// of Φ| ≤ 3e-7 with the float32 evaluation, TestGelu; measured 2.4e-7).
func phi32(x float32) (phi, e float32) {
	z := x * invSqrt2
	if z < 0 {
		z = -z
	}
	t := 1 / (1 + erfP*z)
	e = Exp32(-z * z)
	q := 0.5 * t * ((((erfA5*t+erfA4)*t+erfA3)*t+erfA2)*t + erfA1) * e
	if x < 0 {
		return q, e
	}
	return 1 - q, e
}

// GeluForward sets out[i] = x·Φ(x) for x = inp[i] (the erf GELU of
// PyTorch's nn.GELU, with Φ from a float32 erf approximation of absolute
// error ≤ 3e-7). len(out) ≥ len(inp). It uses the set's kernel.
func (ks *Set) GeluForward(out, inp []float32) {
	if len(inp) == 0 {
		return
	}
	out = out[:len(inp)]
	if f := ks.vec.geluForward; f != nil {
		f(&out[0], &inp[0], len(inp))
		return
	}
	geluForwardGo(out, inp)
}

// GeluBackward accumulates dinp[i] += dout[i]·(Φ(x) + x·φ(x)), x = inp[i].
func (ks *Set) GeluBackward(dinp, inp, dout []float32) {
	if len(inp) == 0 {
		return
	}
	dinp, dout = dinp[:len(inp)], dout[:len(inp)]
	if f := ks.vec.geluBackward; f != nil {
		f(&dinp[0], &inp[0], &dout[0], len(inp))
		return
	}
	geluBackwardGo(dinp, inp, dout)
}

// GeluBackwardSet sets dinp[i] = dout[i]·(Φ(x) + x·φ(x)), x = inp[i]
// (GeluBackward into a cleared dinp, without reading it first where the
// set has a kernel for it).
func (ks *Set) GeluBackwardSet(dinp, inp, dout []float32) {
	if len(inp) == 0 {
		return
	}
	dinp, dout = dinp[:len(inp)], dout[:len(inp)]
	if f := ks.vec.geluBackwardSet; f != nil {
		f(&dinp[0], &inp[0], &dout[0], len(inp))
		return
	}
	clear(dinp)
	ks.GeluBackward(dinp, inp, dout)
}

func geluForwardGo(out, inp []float32) {
	out = out[:len(inp)]
	for i, x := range inp {
		p, _ := phi32(x)
		out[i] = x * p
	}
}

func geluBackwardGo(dinp, inp, dout []float32) {
	dinp, dout = dinp[:len(inp)], dout[:len(inp)]
	for i, x := range inp {
		p, e := phi32(x)
		dinp[i] += dout[i] * (p + x*e*invSqrt2Pi)
	}
}
