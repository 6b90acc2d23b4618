package transformer

// The operations of the engine, each a forward/backward pair. Tensors are
// flat row-major float32 slices; "rows" is B·T. Unless a comment says
// otherwise, backward functions ACCUMULATE (+=) into every gradient they
// are given (the caller zeroes gradients before a backward pass), which is
// what lets residual branches share one gradient buffer.

import (
	"math"
	"runtime"
	"sync"

	"github.com/vomc/vomc/transformer/kernels"
)

// lnEps is LayerNorm's ε (PyTorch's default).
const lnEps = 1e-5

// parallelFor runs fn over [0, n) split into contiguous chunks, one per
// goroutine (up to GOMAXPROCS), and waits. Chunking depends only on n and
// GOMAXPROCS; callers make each index's result independent of the split.
func parallelFor(n int, fn func(lo, hi int)) {
	w := runtime.GOMAXPROCS(0)
	if w > n {
		w = n
	}
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := 0; t < w; t++ {
		lo, hi := n*t/w, n*(t+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// encoderForward: out[b,t,:] = wte[inp[b,t],:] + pos[t,:], out (B,T,C),
// inp (B,T), wte (A,C), pos (≥T,C) (learned wpe or the sinusoidal table).
func encoderForward(out []float32, inp []byte, wte, pos []float32, B, T, C int) {
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			o := out[(b*T+t)*C : (b*T+t+1)*C]
			e := wte[int(inp[b*T+t])*C:][:C]
			p := pos[t*C:][:C]
			for i := range o {
				o[i] = e[i] + p[i]
			}
		}
	}
}

// encoderBackward accumulates dwte and, unless dwpe is nil (sinusoidal
// positions), dwpe from dout (B,T,C).
func encoderBackward(dwte, dwpe []float32, dout []float32, inp []byte, B, T, C int) {
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			d := dout[(b*T+t)*C : (b*T+t+1)*C]
			de := dwte[int(inp[b*T+t])*C:][:C]
			for i, v := range d {
				de[i] += v
			}
			if dwpe != nil {
				dp := dwpe[t*C:][:C]
				for i, v := range d {
					dp[i] += v
				}
			}
		}
	}
}

// layernormForward normalises each of the rows of inp (rows, C):
// out = (x − mean)·rstd·w + b with rstd = 1/√(var + ε) (biased variance);
// mean and rstd (rows) are kept for the backward pass.
func layernormForward(out, mean, rstd, inp, w, b []float32, rows, C int) {
	for r := 0; r < rows; r++ {
		x := inp[r*C : (r+1)*C]
		var m float64
		for _, v := range x {
			m += float64(v)
		}
		m /= float64(C)
		var v2 float64
		for _, v := range x {
			d := float64(v) - m
			v2 += d * d
		}
		s := 1 / math.Sqrt(v2/float64(C)+lnEps)
		mf, sf := float32(m), float32(s)
		o := out[r*C : (r+1)*C]
		for i, v := range x {
			o[i] = (v-mf)*sf*w[i] + b[i]
		}
		mean[r], rstd[r] = mf, sf
	}
}

// layernormBackward accumulates dinp, dw, db from dout. With x̂ the
// normalised input and g = dout·w: dinp = rstd·(g − mean(g) − x̂·mean(g·x̂)).
func layernormBackward(dinp, dw, db, dout, inp, w, mean, rstd []float32, rows, C int) {
	for r := 0; r < rows; r++ {
		x := inp[r*C : (r+1)*C]
		d := dout[r*C : (r+1)*C]
		m, s := mean[r], rstd[r]
		var gm, gxm float32
		for i, v := range x {
			xh := (v - m) * s
			g := d[i] * w[i]
			gm += g
			gxm += g * xh
		}
		gm /= float32(C)
		gxm /= float32(C)
		di := dinp[r*C : (r+1)*C]
		for i, v := range x {
			xh := (v - m) * s
			db[i] += d[i]
			dw[i] += d[i] * xh
			di[i] += s * (d[i]*w[i] - gm - xh*gxm)
		}
	}
}

// matmulForward: out (rows, OC) = inp (rows, C) · wᵀ + bias, w (OC, C),
// bias (OC) or nil. out is overwritten.
func matmulForward(k kernels.Kernel, out, inp, w, bias []float32, rows, C, OC int) {
	k.Gemm(false, true, rows, OC, C, inp, C, w, C, 0, out, OC)
	if bias != nil {
		for r := 0; r < rows; r++ {
			o := out[r*OC : (r+1)*OC]
			for i := range o {
				o[i] += bias[i]
			}
		}
	}
}

// matmulBackward accumulates dinp (rows, C) += dout·w, dw (OC, C) +=
// doutᵀ·inp and dbias (OC) += Σ_rows dout (skipped when dbias is nil).
func matmulBackward(k kernels.Kernel, dinp, dw, dbias, dout, inp, w []float32, rows, C, OC int) {
	k.Gemm(false, false, rows, C, OC, dout, OC, w, C, 1, dinp, C)
	k.Gemm(true, false, OC, C, rows, dout, OC, inp, C, 1, dw, C)
	if dbias != nil {
		for r := 0; r < rows; r++ {
			d := dout[r*OC : (r+1)*OC]
			for i, v := range d {
				dbias[i] += v
			}
		}
	}
}

// attentionForward is causal multi-head scaled dot-product attention.
// qkv (B,T,3C) holds per position the C query, C key and C value entries;
// head h uses entries h·hs..(h+1)·hs−1 of each, hs = C/NH. It writes out
// (B,T,C) (heads concatenated) and the attention weights att (B,NH,T,T),
// row t holding softmax_{t2≤t}(q_t·k_{t2}/√hs) (entries t2 > t unused).
// att may be nil (inference): the weights are then not kept.
func attentionForward(out, att, qkv []float32, B, T, C, NH int) {
	hs := C / NH
	scale := float32(1 / math.Sqrt(float64(hs)))
	C3 := 3 * C
	parallelFor(B*NH, func(lo, hi int) {
		var scratch []float32
		if att == nil {
			scratch = make([]float32, T)
		}
		for bh := lo; bh < hi; bh++ {
			b, h := bh/NH, bh%NH
			base := b * T * C3
			for t := 0; t < T; t++ {
				q := qkv[base+t*C3+h*hs:][:hs]
				var row []float32
				if att == nil {
					row = scratch[:t+1]
				} else {
					row = att[(bh*T+t)*T:][:t+1]
				}
				maxv := float32(math.Inf(-1))
				for t2 := range row {
					k := qkv[base+t2*C3+C+h*hs:][:hs]
					var s float32
					for i, qv := range q {
						s += qv * k[i]
					}
					s *= scale
					row[t2] = s
					if s > maxv {
						maxv = s
					}
				}
				var sum float32
				for t2, s := range row {
					e := float32(math.Exp(float64(s - maxv)))
					row[t2] = e
					sum += e
				}
				inv := 1 / sum
				o := out[(b*T+t)*C+h*hs:][:hs]
				clear(o)
				for t2 := range row {
					a := row[t2] * inv
					row[t2] = a
					v := qkv[base+t2*C3+2*C+h*hs:][:hs]
					for i, vv := range v {
						o[i] += a * vv
					}
				}
			}
		}
	})
}

// attentionBackward accumulates dqkv (B,T,3C) from dout (B,T,C), using the
// forward's qkv and att. Work is split over (b, h) pairs, which write
// disjoint parts of dqkv.
func attentionBackward(dqkv, dout, qkv, att []float32, B, T, C, NH int) {
	hs := C / NH
	scale := float32(1 / math.Sqrt(float64(hs)))
	C3 := 3 * C
	parallelFor(B*NH, func(lo, hi int) {
		datt := make([]float32, T)
		for bh := lo; bh < hi; bh++ {
			b, h := bh/NH, bh%NH
			base := b * T * C3
			for t := 0; t < T; t++ {
				row := att[(bh*T+t)*T:][:t+1]
				do := dout[(b*T+t)*C+h*hs:][:hs]
				da := datt[:t+1]
				var dot float32
				for t2, a := range row {
					v := qkv[base+t2*C3+2*C+h*hs:][:hs]
					dv := dqkv[base+t2*C3+2*C+h*hs:][:hs]
					var s float32
					for i, g := range do {
						s += g * v[i]
						dv[i] += a * g
					}
					da[t2] = s
					dot += a * s
				}
				q := qkv[base+t*C3+h*hs:][:hs]
				dq := dqkv[base+t*C3+h*hs:][:hs]
				for t2, a := range row {
					dp := a * (da[t2] - dot) * scale
					k := qkv[base+t2*C3+C+h*hs:][:hs]
					dk := dqkv[base+t2*C3+C+h*hs:][:hs]
					for i, qv := range q {
						dq[i] += dp * k[i]
						dk[i] += dp * qv
					}
				}
			}
		}
	})
}

// reluForward: out = max(x, 0) elementwise.
func reluForward(out, inp []float32) {
	for i, v := range inp {
		out[i] = max(v, 0)
	}
}

// reluBackward accumulates dinp += dout·[x > 0].
func reluBackward(dinp, inp, dout []float32) {
	for i, v := range inp {
		if v > 0 {
			dinp[i] += dout[i]
		}
	}
}

// geluForward is the exact GELU out = x·Φ(x) = ½x(1 + erf(x/√2)).
func geluForward(out, inp []float32) {
	parallelFor(len(inp)/1024+1, func(lo, hi int) {
		for i := lo * 1024; i < min(hi*1024, len(inp)); i++ {
			x := float64(inp[i])
			out[i] = float32(0.5 * x * (1 + math.Erf(x*(1/math.Sqrt2))))
		}
	})
}

// geluBackward accumulates dinp += dout·(Φ(x) + x·φ(x)).
func geluBackward(dinp, inp, dout []float32) {
	const invSqrt2Pi = 0.3989422804014327
	parallelFor(len(inp)/1024+1, func(lo, hi int) {
		for i := lo * 1024; i < min(hi*1024, len(inp)); i++ {
			x := float64(inp[i])
			g := 0.5*(1+math.Erf(x*(1/math.Sqrt2))) + x*invSqrt2Pi*math.Exp(-0.5*x*x)
			dinp[i] += float32(g) * dout[i]
		}
	})
}

// residualForward: out = a + b elementwise.
func residualForward(out, a, b []float32) {
	for i := range out {
		out[i] = a[i] + b[i]
	}
}

// residualBackward accumulates da += dout and db += dout.
func residualBackward(da, db, dout []float32) {
	for i, v := range dout {
		da[i] += v
		db[i] += v
	}
}

// crossEntropyForward computes probs (B,T,A) = softmax(logits) at every
// position and losses (B,T): losses[b,t] = −ln probs[b,t,inp[b,t+1]] in
// nats for t < T−1 and 0 at t = T−1 (no target). It returns the sum of the
// losses.
func crossEntropyForward(probs, losses, logits []float32, inp []byte, B, T, A int) float64 {
	total := 0.0
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			r := b*T + t
			l := logits[r*A : (r+1)*A]
			p := probs[r*A : (r+1)*A]
			maxv := l[0]
			for _, v := range l {
				maxv = max(maxv, v)
			}
			var sum float64
			for i, v := range l {
				e := math.Exp(float64(v - maxv))
				p[i] = float32(e)
				sum += e
			}
			inv := 1 / sum
			for i := range p {
				p[i] = float32(float64(p[i]) * inv)
			}
			if t == T-1 {
				losses[r] = 0
				continue
			}
			y := int(inp[r+1])
			loss := math.Log(sum) - float64(l[y]-maxv)
			losses[r] = float32(loss)
			total += loss
		}
	}
	return total
}

// crossEntropyBackward OVERWRITES dlogits (B,T,A) with the gradient of
// scale·Σ losses: scale·(probs − onehot(target)) for t < T−1, 0 at T−1.
func crossEntropyBackward(dlogits, probs []float32, inp []byte, scale float32, B, T, A int) {
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			r := b*T + t
			d := dlogits[r*A : (r+1)*A]
			if t == T-1 {
				clear(d)
				continue
			}
			p := probs[r*A : (r+1)*A]
			for i, v := range p {
				d[i] = scale * v
			}
			d[int(inp[r+1])] -= scale
		}
	}
}
