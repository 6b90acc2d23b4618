package construct

import (
	"fmt"
	"math"
	"sort"
)

// This file realises the FF sub-layers as actual ReLU networks ("the FF
// layers are sufficiently wide", Section 4.4 and the proofs of Theorems
// 4 and 5 of the paper, made concrete). A ReLUNet has weights, biases and
// ReLUs and is evaluated by generic code (ReLUNet.Eval) that knows nothing
// of CTW. The networks are constructed, not fitted:
//
//   - integer-valued quantities are computed exactly: the number of real
//     symbols j = i − D is a staircase of the input cos(iπ/N) (two ReLUs
//     per step, ramps placed between neighbouring grid values, gated off at
//     the BOS position by the constant 1 of pos); products of an integer
//     M ∈ [0, J] with a frequency y ∈ [0, 1] are Σ_{k=1..J} ReLU(y − 1 +
//     [M ≥ k]), exact when the step indicators are exact; the counts
//     n = j·g·Πg← (Appendix, after the proof of Theorem 4) are such chained
//     products; functions of an integer count (lnΓ(n+α), ln(n+α)) are
//     read off the step indicators by a linear layer (piecewise-linear
//     interpolation with breakpoints at the integers, exact there);
//   - the two smooth functions are piecewise-linear interpolants with K
//     segments each, one ReLU per breakpoint: p = exp(−v) on v = −ln p ∈
//     [0, ln((J+Aα)/α)] (layer 2, Dirichlet means) and the log-add-exp of
//     the CTW recursion, ln(λe^a + (1−λ)e^b) = b' + ReLU(a'−b') + σ(|a'−b'|)
//     with σ(v) = ln(1+e^{−v}) on [0, 2 ln K + 6] (induction layers; a'
//     and b' the two logs, |t| = ReLU(t) + ReLU(−t)). Breakpoints are
//     placed with density ∝ √f'' (the interpolation error of a segment of
//     length h is h²·f''/8), plus the point |ln(λ/(1−λ))| so that a node
//     never seen gets ℓ^w = 0 exactly.
//
// So only K trades width for accuracy; the exact integer machinery costs
// O(A·J) units per count level, J = N − D − 1. The networks use dense skip
// connections (hidden layer k reads the FF input and every earlier hidden
// layer), which a plain MLP realises with two extra units (ReLU(x) −
// ReLU(−x)) per carried value; Width reports the widest hidden layer.

// SparseRow is one unit of a ReLUNet layer: pre-activation B + Σ_k
// W[k]·v[Idx[k]], where v is the FF input followed by the units of all
// earlier hidden layers.
type SparseRow struct {
	Idx []int32
	W   []float64
	B   float64
}

// ReLUNet is a feed-forward ReLU network with dense skip connections:
// hidden layer k computes h_k = ReLU(W_k·[x; h_1; …; h_{k−1}] + b_k) and
// the output is y = W_out·[x; h_1; …; h_L] + b_out (no activation). The
// weight matrices are stored sparsely (the constructed ones are sparse).
type ReLUNet struct {
	In, Out int
	Hidden  [][]SparseRow
	Output  []SparseRow // length Out
}

// Units is the number of hidden units.
func (n *ReLUNet) Units() int {
	s := 0
	for _, l := range n.Hidden {
		s += len(l)
	}
	return s
}

// Width is the largest number of units in one hidden layer.
func (n *ReLUNet) Width() int {
	w := 0
	for _, l := range n.Hidden {
		w = max(w, len(l))
	}
	return w
}

// Params is the number of non-zero weights and biases.
func (n *ReLUNet) Params() int {
	p := 0
	for _, l := range append(append([][]SparseRow(nil), n.Hidden...), n.Output) {
		for _, r := range l {
			p += len(r.W) + 1
		}
	}
	return p
}

// Eval computes y = net(x) (len(x) = In, len(y) = Out).
func (n *ReLUNet) Eval(x, y []float64) {
	v := make([]float64, n.In, n.In+n.Units())
	copy(v, x)
	dot := func(r SparseRow) float64 {
		s := r.B
		for k, i := range r.Idx {
			s += r.W[k] * v[i]
		}
		return s
	}
	for _, l := range n.Hidden {
		base := len(v)
		v = v[:base+len(l)]
		for k, r := range l {
			v[base+k] = max(0, dot(r))
		}
	}
	for k, r := range n.Output {
		y[k] = dot(r)
	}
}

// lin is a linear expression over the builder's values: inputs are
// 0..in−1, unit u is in+u.
type lin struct {
	t map[int]float64
	c float64
}

func constant(c float64) lin { return lin{t: map[int]float64{}, c: c} }

func (a lin) plus(b lin, s float64) lin {
	out := lin{t: make(map[int]float64, len(a.t)+len(b.t)), c: a.c + s*b.c}
	for k, v := range a.t {
		out.t[k] += v
	}
	for k, v := range b.t {
		out.t[k] += s * v
	}
	return out
}

func (a lin) scale(s float64) lin { return constant(0).plus(a, s) }

func (a lin) add(c float64) lin { out := a.plus(constant(0), 0); out.c += c; return out }

type unit struct {
	pre   lin
	layer int
}

// netBuilder records ReLU units; a unit's layer is one more than the
// deepest value its pre-activation reads.
type netBuilder struct {
	in    int
	units []unit
}

func (b *netBuilder) input(i int) lin { return lin{t: map[int]float64{i: 1}} }

func (b *netBuilder) layerOf(e lin) int {
	l := 0
	for k := range e.t {
		if k >= b.in {
			l = max(l, b.units[k-b.in].layer)
		}
	}
	return l
}

// relu adds a unit ReLU(e) and returns it as an expression.
func (b *netBuilder) relu(e lin) lin {
	b.units = append(b.units, unit{pre: e, layer: b.layerOf(e) + 1})
	return lin{t: map[int]float64{b.in + len(b.units) - 1: 1}}
}

// carry materialises a value known to be ≥ 0 as one unit (so that many
// units can read it through one weight).
func (b *netBuilder) carry(e lin) lin { return b.relu(e) }

// step returns the indicator [x ≥ hi] for x on a grid with no value in
// (lo, hi): the ramp clamp((x−lo)/(hi−lo), 0, 1), two units.
func (b *netBuilder) step(x lin, lo, hi float64) lin {
	a := x.add(-lo).scale(1 / (hi - lo))
	return b.relu(a).plus(b.relu(a.add(-1)), -1)
}

// pl adds the piecewise-linear interpolant of f at the sorted breakpoints
// ts, flat outside [ts[0], ts[len−1]]: len(ts) units.
func (b *netBuilder) pl(x lin, ts []float64, f func(float64) float64) lin {
	out := constant(f(ts[0]))
	prev := 0.0
	for k := 0; k < len(ts); k++ {
		s := 0.0
		if k+1 < len(ts) {
			s = (f(ts[k+1]) - f(ts[k])) / (ts[k+1] - ts[k])
		}
		if s-prev != 0 {
			out = out.plus(b.relu(x.add(-ts[k])), s-prev)
		}
		prev = s
	}
	return out
}

// build compiles the units into a ReLUNet with the given outputs
// (expressions per output coordinate; missing ones are 0).
func (b *netBuilder) build(outDim int, outs map[int]lin) *ReLUNet {
	order := make([]int, len(b.units))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return b.units[order[i]].layer < b.units[order[j]].layer })
	pos := make([]int, len(b.units)) // builder unit → index in v
	for k, u := range order {
		pos[u] = b.in + k
	}
	row := func(e lin) SparseRow {
		r := SparseRow{B: e.c}
		keys := make([]int, 0, len(e.t))
		for k := range e.t {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		for _, k := range keys {
			w := e.t[k]
			if w == 0 {
				continue
			}
			idx := k
			if k >= b.in {
				idx = pos[k-b.in]
			}
			r.Idx = append(r.Idx, int32(idx))
			r.W = append(r.W, w)
		}
		return r
	}
	net := &ReLUNet{In: b.in, Out: outDim, Output: make([]SparseRow, outDim)}
	for _, u := range order {
		l := b.units[u].layer
		for len(net.Hidden) < l {
			net.Hidden = append(net.Hidden, nil)
		}
		net.Hidden[l-1] = append(net.Hidden[l-1], row(b.units[u].pre))
	}
	for k, e := range outs {
		net.Output[k] = row(e)
	}
	return net
}

// warped returns K+1 breakpoints on [0, V] with density ∝ e^{−v/2} (the
// square root of the second derivative of e^{−v} and, asymptotically, of
// ln(1+e^{−v})), plus the extra points.
func warped(K int, V float64, extra ...float64) []float64 {
	ts := make([]float64, 0, K+1+len(extra))
	z := 1 - math.Exp(-V/2)
	for k := 0; k <= K; k++ {
		ts = append(ts, -2*math.Log(1-float64(k)/float64(K)*z))
	}
	ts[K] = V
	for _, e := range extra {
		if e > 0 && e < V {
			ts = append(ts, e)
		}
	}
	sort.Float64s(ts)
	out := ts[:1]
	for _, t := range ts[1:] {
		if t > out[len(out)-1] {
			out = append(out, t)
		}
	}
	return out
}

// mlpCounts builds the ReLU network of layer 2's FF (countsFF) with K
// segments for p = exp(−v). For every depth l it recovers the counts of
// the path suffix s_{i,l} (N_0 = j, N_{l+1} = N_l·g←_l(x_{i−l})) and of the
// shifted context c_{i,l} (Ñ_0 = j, Ñ_l = Ñ_{l−1}·(g←_0 | g~←_{l−1})(x_{i−l}))
// as integer steps, and from them n, p and ℓ^e (see countsNet.level).
func (c *Construction) mlpCounts(K int) *ReLUNet {
	L, A, D := c.Layout, c.Config.A, c.Config.D
	n := &countsNet{c: c, b: &netBuilder{in: L.E}, J: c.Config.N - 1 - c.Config.D, outs: map[int]lin{}}
	jSteps := n.jSteps()
	V := math.Log((float64(n.J) + float64(A)*c.Config.Alpha) / c.Config.Alpha)
	n.expTs = warped(K, V)
	m := jSteps
	for l := 0; l <= D; l++ {
		n.level(m, l, countBlocks{g: "g", n: "n", p: "p", le: "le", lw: "lw"})
		if l < D {
			m = n.times(m, selAt(n.b, L, A, "g_back", l, l))
		}
	}
	m = jSteps
	for l := 0; l <= D; l++ {
		g := "g_ctx"
		if l == 0 {
			g = "g"
		} else {
			back := "g_ctx_back"
			if l == 1 {
				back = "g_back"
			}
			m = n.times(m, selAt(n.b, L, A, back, l-1, l))
		}
		n.level(m, l, countBlocks{g: g, n: "n_ctx", le: "le_ctx", lw: "lw_ctx"})
	}
	return n.b.build(L.E, n.outs)
}

// countsNet is the state of mlpCounts: the units built so far and the
// network's outputs by embedding coordinate. A count M ∈ 0..J is carried
// as its steps: steps[k] = [M ≥ k] for k = 1..J (steps[0] unused).
type countsNet struct {
	c     *Construction
	b     *netBuilder
	J     int       // the largest j = i − D (N − 1 − D)
	expTs []float64 // the breakpoints of the interpolant of p = e^{−v}
	outs  map[int]lin
}

// countBlocks names the blocks of one kind of node: its frequencies g
// (read), and its counts n, estimates p (none when ""), ℓ^e and, at depth
// D, ℓ^w = ℓ^e (written).
type countBlocks struct {
	g, n, p, le, lw string
}

// jSteps returns the steps of j = i − D: [j ≥ k] = [i ≥ k+D] =
// [cos(iπ/N) ≤ cos((k+D)π/N)], read from the positional coordinate
// cos(iπ/N) as a ramp between the neighbouring grid values and gated by
// pos_0 so that they are 0 at BOS.
func (n *countsNet) jSteps() []lin {
	L, D, N := n.c.Layout, n.c.Config.D, n.c.Config.N
	b := n.b
	pb := L.Block("pos").Offset
	cosi := func(i int) float64 { return math.Cos(float64(i) * math.Pi / float64(N)) }
	x := b.input(pb + 1).scale(-1) // −cos increases with i
	steps := make([]lin, n.J+1)
	for k := 1; k <= n.J; k++ {
		lo, hi := -cosi(k+D-1), -cosi(k+D)
		a := x.add(-lo).scale(1 / (hi - lo))
		M := 2/(hi-lo) + 2
		g := b.input(pb).add(-1).scale(M) // 0 at real positions, −M at BOS
		steps[k] = b.relu(a.plus(g, 1)).plus(b.relu(a.add(-1).plus(g, 1)), -1)
	}
	return steps
}

// times returns the steps of M·y for M given by its steps and y ∈ [0,1]
// with M·y an integer: the product Σ_k ReLU(y − 1 + [M ≥ k]), carried as
// one unit and cut into steps again.
func (n *countsNet) times(mSteps []lin, y lin) []lin {
	b := n.b
	prod := constant(0)
	for k := 1; k < len(mSteps); k++ {
		prod = prod.plus(b.relu(y.add(-1).plus(mSteps[k], 1)), 1)
	}
	v := b.carry(prod)
	st := make([]lin, n.J+1)
	for k := 1; k <= n.J; k++ {
		st[k] = b.step(v, float64(k-1), float64(k))
	}
	return st
}

// level adds the outputs of the nodes at depth l of one kind whose total
// count M is given by its steps: for each symbol a the count
// n_a = M·g_a, the estimate p_a = (n_a + α)/(M + Aα) (as e^{−v} with
// v = ln(M + Aα) − ln(n_a + α) ≥ 0, interpolated) and the log-probability
// of the counts
//
//	ℓ^e = lnΓ(Aα) − lnΓ(M + Aα) + Σ_a [lnΓ(n_a + α) − lnΓ(α)],
//
// each a function of an integer written as a weighted sum of its steps.
func (n *countsNet) level(mSteps []lin, l int, bl countBlocks) {
	b, L, A, D := n.b, n.c.Layout, n.c.Config.A, n.c.Config.D
	alpha := n.c.Config.Alpha
	totLG := stepSum(mSteps, lgammaAt(float64(A)*alpha))
	totLn := stepSum(mSteps, logAt(float64(A)*alpha))
	le := totLG.scale(-1).add(n.c.lgSumAlpha)
	for a := 0; a < A; a++ {
		nSteps := n.times(mSteps, b.input(L.Block(bl.g).Part(l, a)))
		if bl.n != "" {
			n.outs[L.Block(bl.n).Part(l, a)] = stepSum(nSteps, func(k int) float64 { return float64(k) })
		}
		le = le.plus(stepSum(nSteps, lgammaAt(alpha)), 1).add(-n.c.lgAlpha)
		if bl.p != "" {
			v := b.carry(totLn.plus(stepSum(nSteps, logAt(alpha)), -1)) // −ln p ≥ 0
			n.outs[L.Block(bl.p).Part(l, a)] = b.pl(v, n.expTs, func(t float64) float64 { return math.Exp(-t) })
		}
	}
	n.outs[L.Block(bl.le).Part(l, 0)] = le
	if l == D {
		n.outs[L.Block(bl.lw).Part(D, 0)] = le
	}
}

// stepSum returns f(M) for the integer M given by its steps, as
// f(0) + Σ_k (f(k) − f(k−1))·[M ≥ k] (no units).
func stepSum(steps []lin, f func(k int) float64) lin {
	out := constant(0)
	for k := 1; k < len(steps); k++ {
		if w := f(k) - f(k-1); w != 0 {
			out = out.plus(steps[k], w)
		}
	}
	return out.add(f(0))
}

// lgammaAt returns k ↦ lnΓ(k + a).
func lgammaAt(a float64) func(k int) float64 {
	return func(k int) float64 { v, _ := math.Lgamma(float64(k) + a); return v }
}

// logAt returns k ↦ ln(k + a).
func logAt(a float64) func(k int) float64 {
	return func(k int) float64 { return math.Log(float64(k) + a) }
}

// selAt is Σ_a s_{sp}(a)·y_{part}(a) for the frequencies y of block,
// part part, and the symbol part sp: exact for a one-hot s and y ∈ [0,1].
func selAt(b *netBuilder, L *Layout, A int, block string, part, sp int) lin {
	out := constant(0)
	for a := 0; a < A; a++ {
		out = out.plus(b.relu(b.input(L.Block(block).Part(part, a)).add(-1).plus(b.input(L.Block("s").Part(sp, a)), 1)), 1)
	}
	return out
}

// mlpInduction builds the ReLU network of the induction FF for child
// depth dc (inductionFF) with K segments for σ(v) = ln(1+e^{−v}).
func (c *Construction) mlpInduction(dc, K int) *ReLUNet {
	L, D := c.Layout, c.Config.D
	d := dc - 1
	b := &netBuilder{in: L.E}
	in := func(block string, k int) lin { return b.input(L.Block(block).Part(k, 0)) }
	sumSib := func(block string) lin {
		out := constant(0)
		for q := 0; q < c.Config.A; q++ {
			out = out.plus(b.input(L.Block(block).Part(d, q)), 1)
		}
		return out
	}
	V := 2*math.Log(float64(K)) + 6
	v0 := math.Abs(c.lnLam - c.ln1mLam)
	ts := warped(K, V, v0)
	sigma := func(v float64) float64 { return math.Log1p(math.Exp(-v)) }
	lae := func(x, y lin) lin { // ln(e^x + e^y) = y + ReLU(x−y) + σ(|x−y|)
		t := x.plus(y, -1)
		r1, r2 := b.relu(t), b.relu(t.scale(-1))
		return y.plus(r1, 1).plus(b.pl(r1.plus(r2, 1), ts, sigma), 1)
	}
	outs := map[int]lin{}
	sib := sumSib("lw_sib")
	delta := in("le", dc).plus(in("le", d), -1).plus(sib, 1).plus(in("lw", dc), -1).add(c.ln1mLam)
	if dc == D {
		delta = delta.add(-c.lnLam)
	}
	outs[L.Block("delta").Part(dc-1, 0)] = delta
	outs[L.Block("lw").Part(d, 0)] = lae(in("le", d).add(c.lnLam), sib.add(c.ln1mLam))
	if d >= 1 {
		outs[L.Block("lw_ctx").Part(d, 0)] = lae(in("le_ctx", d).add(c.lnLam), sumSib("lw_ctx_sib").add(c.ln1mLam))
	}
	return b.build(L.E, outs)
}

// FFNets are the ReLU networks that replace the FF sub-layers (index =
// layer; nil for the context-extension layer, whose FF is zero).
type FFNets []*ReLUNet

// Width is the widest hidden layer of all networks.
func (f FFNets) Width() int {
	w := 0
	for _, n := range f {
		if n != nil {
			w = max(w, n.Width())
		}
	}
	return w
}

// Units is the total number of hidden units.
func (f FFNets) Units() int {
	s := 0
	for _, n := range f {
		if n != nil {
			s += n.Units()
		}
	}
	return s
}

// UseMLP replaces every FF sub-layer of c by a constructed ReLU network
// with K segments per smooth function (see the comment at the top of
// mlp.go) and returns the networks. K ≥ 1.
func (c *Construction) UseMLP(K int) (FFNets, error) {
	if K < 1 {
		return nil, fmt.Errorf("construct: %d segments per smooth function (want ≥ 1)", K)
	}
	nets := make(FFNets, len(c.TF.Layers))
	for i, l := range c.TF.Layers {
		var n *ReLUNet
		switch {
		case i == 1:
			n = c.mlpCounts(K)
		case i >= 2:
			n = c.mlpInduction(c.Config.D+2-i, K)
		default:
			continue
		}
		nets[i] = n
		l.FF = n.Eval
		l.FFDoc = fmt.Sprintf("ReLU network (%d hidden layers, width %d, %d units, %d weights; K=%d segments): ", len(n.Hidden), n.Width(), n.Units(), n.Params(), K) + l.FFDoc
	}
	return nets, nil
}

// UseMLPWidth is UseMLP with the largest K whose widest hidden layer is at
// most W; it reports an error naming the minimum width when even K = 1 is
// wider.
func (c *Construction) UseMLPWidth(W int) (FFNets, int, error) {
	width := func(K int) int {
		w := c.mlpCounts(K).Width()
		for dc := 1; dc <= c.Config.D; dc++ {
			w = max(w, c.mlpInduction(dc, K).Width())
		}
		return w
	}
	if w := width(1); w > W {
		return nil, 0, fmt.Errorf("construct: width %d is below the minimum %d for A=%d, D=%d, N=%d (the exact count machinery)", W, w, c.Config.A, c.Config.D, c.Config.N)
	}
	lo, hi := 1, 2
	for width(hi) <= W {
		lo, hi = hi, hi*2
		if hi > 1<<22 {
			break
		}
	}
	for hi-lo > 1 {
		m := (lo + hi) / 2
		if width(m) <= W {
			lo = m
		} else {
			hi = m
		}
	}
	nets, err := c.UseMLP(lo)
	return nets, lo, err
}
