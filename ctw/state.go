package ctw

import (
	"fmt"
	"math"
	"strconv"

	"github.com/vomc/vomc/internal/logexp"
	"github.com/vomc/vomc/predict"
)

// Predictor is the CTW predictor for one prior π_CTW(D, λ, α). It is
// immutable and safe for concurrent use; each sequence gets its own State.
type Predictor struct {
	cfg Config
	p   *params
}

// New validates cfg and returns its predictor.
func New(cfg Config) (*Predictor, error) {
	p, err := cfg.params()
	if err != nil {
		return nil, err
	}
	cfg.AlphaVec = p.alpha
	return &Predictor{cfg: cfg, p: p}, nil
}

// Config returns the predictor's configuration.
func (pr *Predictor) Config() Config { return pr.cfg }

// Name is e.g. "CTW(D=3,λ=0.15,α=0.5)"; a non-default form or initial
// context is appended.
func (pr *Predictor) Name() string {
	c := pr.cfg
	a := strconv.FormatFloat(c.Alpha, 'g', -1, 64)
	if c.AlphaVec != nil {
		sym := true
		for _, v := range c.AlphaVec {
			if v != c.AlphaVec[0] {
				sym = false
			}
		}
		if sym {
			a = strconv.FormatFloat(c.AlphaVec[0], 'g', -1, 64)
		} else {
			a = fmt.Sprint(c.AlphaVec)
		}
	}
	s := fmt.Sprintf("CTW(D=%d,λ=%s,α=%s", c.D, strconv.FormatFloat(c.Lambda, 'g', -1, 64), a)
	if c.Form != Blend {
		s += "," + c.Form.String()
	}
	if c.Init != Pad {
		s += "," + c.Init.String()
	}
	return s + ")"
}

// AlphabetSize is A.
func (pr *Predictor) AlphabetSize() int { return pr.cfg.A }

// NewState returns a fresh State (empty history) as a predict.State.
func (pr *Predictor) NewState() predict.State { return pr.NewCTWState() }

// NewCTWState returns a fresh State with CTW's extra read-outs.
func (pr *Predictor) NewCTWState() State {
	switch pr.p.form {
	case Theorem1, Ratio:
		return newLogState(pr.p)
	}
	return newBlendState(pr.p)
}

// State is the sequential CTW state of one sequence.
type State interface {
	predict.State
	// Weights writes ω_{n,l}, l = 0..D (length D+1), the posterior
	// probability that the suffix of length l of the current context is a
	// leaf of the source tree (Theorem 2, eq. (omega)), for the next
	// prediction. Entries beyond the available context depth are 0.
	Weights(omega []float64)
	// LogML is ln P(x) in nats of the symbols counted so far: the log
	// marginal likelihood ln p^w_{()} under Pad and Condition (excluding the
	// D conditioning symbols), the sum of log predictive probabilities
	// under Shorter.
	LogML() float64
	// Len is the number of symbols observed.
	Len() int
	// Saturated counts the positions at which the memory budget cut the
	// context path short (0 in any exact run).
	Saturated() int
}

// base holds what every form shares: the tree, the history and the path of
// the current context.
type base struct {
	p         *params
	s         *store
	h         history
	ids       []int32   // nodes of the current path s_0..s_d
	pa        []float64 // scratch: p_{n,s_l}(a) for one a
	dist      []float64 // scratch: a predictive distribution (frozen Observe)
	d         int       // effective depth of the current path
	pathOK    bool
	logml     float64
	saturated int
	frozen    bool
}

// Freeze stops learning: later symbols move the context but change no
// counts or weights (predict.Freezer). LogML keeps adding the log
// probabilities the frozen model assigns.
func (b *base) Freeze() { b.frozen = true }

func newBase(p *params, init [3]float64) base {
	s := newStore(p.A, p.D, p.form, init, p.maxMemory)
	return base{p: p, s: s, h: newHistory(p.D, s.b), ids: make([]int32, p.D+1), pa: make([]float64, p.D+1), dist: make([]float64, p.A)}
}

// predicting reports whether the next symbol is predicted from the tree (it
// is not for the D conditioning symbols of the Condition convention).
func (b *base) predicting() bool {
	return b.p.init != Condition || b.h.n >= b.p.D
}

// prepare computes the path of the current context.
func (b *base) prepare() {
	if b.pathOK {
		return
	}
	want := b.p.D
	if b.p.init == Shorter && b.h.n < want {
		want = b.h.n
	}
	b.d = b.s.path(b.h.ctx, b.h.key, want, b.ids)
	if b.d < want {
		b.saturated++
	}
	b.pathOK = true
}

// probs fills b.pa[l] = p_{n,s_l}(a) = (n_{s_l}(a)+α_a)/(Σ_q n_{s_l}(q)+Σα),
// the Dirichlet posterior mean of eq. (dirichlet-mean), for l = 0..d.
func (b *base) probs(a byte) {
	A := b.p.A
	for l := 0; l <= b.d; l++ {
		id := int(b.ids[l])
		b.pa[l] = (float64(b.s.cnt[id*A+int(a)]) + b.p.alpha[a]) / (float64(b.s.tot[id]) + b.p.sumAlpha)
	}
}

// count adds symbol a to the counts of the path nodes and advances the
// history.
func (b *base) count(a byte) {
	A := b.p.A
	for l := 0; l <= b.d; l++ {
		id := int(b.ids[l])
		b.s.cnt[id*A+int(a)]++
		b.s.tot[id]++
	}
}

func (b *base) advance(a byte) {
	b.h.push(a)
	b.pathOK = false
}

// priorPredict writes the prior predictive α/Σα.
func (b *base) priorPredict(p []float64) {
	for a := range p {
		p[a] = b.p.alpha[a] / b.p.sumAlpha
	}
}

// blendWith writes Σ_l ω_l p_{n,s_l}(·) into p for the given weights.
func (b *base) blendWith(omega []float64, p []float64) {
	A := b.p.A
	clear(p)
	for l := 0; l <= b.d; l++ {
		id := int(b.ids[l])
		scale := omega[l] / (float64(b.s.tot[id]) + b.p.sumAlpha)
		if scale == 0 {
			continue
		}
		c := b.s.cnt[id*A : id*A+A]
		for a := range p {
			p[a] += scale * (float64(c[a]) + b.p.alpha[a])
		}
	}
}

func (b *base) LogML() float64 { return b.logml }
func (b *base) Len() int       { return b.h.n }
func (b *base) Saturated() int { return b.saturated }

// blendState is the fast ω-blending form. Per node it keeps the stop weight
// w_s = λp^e_s/p^w_s and its complement 1−w_s = (1−λ)Π_q p^w_{qs}/p^w_s
// (kept separately, so neither loses precision near 0 or 1). With them
// ω_{n,l} = w_{s_l} Π_{j<l}(1−w_{s_j}) (ω_{n,d} = Π_{j<d}(1−w_{s_j}) at the
// deepest node), which is Theorem 2's ω: ω_l/ω_{l−1} equals its
// exp(ln(1−λ) − I_{l=D} ln λ + ℓ^e_{s_l} − ℓ^e_{s_{l−1}} + Σ_q ℓ^w_{qs_{l−1}} − ℓ^w_{s_l}).
// Updates are multiplicative and need no logarithm or exponential.
type blendState struct {
	base
	omega []float64
	// LogML = mlAcc + ln(mlProd); the running product of predictive
	// probabilities is folded into the log sum before it can underflow.
	mlAcc, mlProd float64
}

// minWeight bounds w and 1−w from below so that a node can recover after a
// very long run of evidence; it changes ω by at most 1e-280.
const minWeight = 1e-280

func newBlendState(p *params) *blendState {
	init := [3]float64{p.lam, 1 - p.lam, 0}
	return &blendState{base: newBase(p, init), omega: make([]float64, p.D+1), mlProd: 1}
}

// LogML is ln P(x) of the counted symbols in nats.
func (st *blendState) LogML() float64 { return st.mlAcc + math.Log(st.mlProd) }

// Weights writes ω_{n,l}.
func (st *blendState) Weights(omega []float64) {
	clear(omega)
	if !st.predicting() {
		return
	}
	st.prepare()
	w, wc := st.s.f[0], st.s.f[1]
	prod := 1.0
	for l := 0; l < st.d; l++ {
		id := st.ids[l]
		omega[l] = prod * w[id]
		prod *= wc[id]
	}
	omega[st.d] = prod
}

// Predict writes P(x_{n+1} = · | x_1^n) = Σ_l ω_{n,l} p_{n,s_{n,l}}(·)
// (Theorem 2), in one pass over the path.
func (st *blendState) Predict(p []float64) {
	if !st.predicting() {
		st.priorPredict(p)
		return
	}
	st.prepare()
	A := st.p.A
	w, wc := st.s.f[0], st.s.f[1]
	cnt, tot, alpha := st.s.cnt, st.s.tot, st.p.alpha
	clear(p)
	prod := 1.0
	for l := 0; l <= st.d; l++ {
		id := int(st.ids[l])
		om := prod
		if l < st.d {
			om *= w[id]
			prod *= wc[id]
		}
		scale := om / (float64(tot[id]) + st.p.sumAlpha)
		c := cnt[id*A : id*A+A]
		for a := range p {
			p[a] += scale * (float64(c[a]) + alpha[a])
		}
	}
}

// Observe appends a. With the path's p_l = p_{n,s_l}(a), the ratio
// r_l = p^w_{s_l}(x a)/p^w_{s_l}(x) = w_l p_l + (1−w_l) r_{l+1} is formed
// bottom-up (r_D = p_D), and since p^e_{s_l} grows by p_l, p^w_{s_l} by r_l
// and Π_q p^w_{qs_l} by r_{l+1}, the weights become w_l p_l/r_l and
// (1−w_l) r_{l+1}/r_l. Then the counts of the path nodes are incremented.
func (st *blendState) Observe(a byte) {
	if !st.predicting() {
		st.advance(a)
		return
	}
	st.prepare()
	if st.frozen {
		p := st.dist
		st.Predict(p)
		st.mlProd *= p[a]
		if st.mlProd < 1e-200 {
			st.mlAcc += math.Log(st.mlProd)
			st.mlProd = 1
		}
		st.advance(a)
		return
	}
	st.probs(a)
	w, wc := st.s.f[0], st.s.f[1]
	d := st.d
	rPred := st.pa[d]
	rTrue := rPred
	if d < st.p.D {
		// The deepest node was used as a leaf for prediction, but its
		// marginal likelihood still mixes stopping and branching; its
		// children are unchanged (r_{d+1} = 1).
		id := st.ids[d]
		rTrue = w[id]*st.pa[d] + wc[id]
		setWeights(w, wc, id, w[id]*st.pa[d], wc[id])
	}
	for l := d - 1; l >= 0; l-- {
		id := st.ids[l]
		wp, wr := w[id]*st.pa[l], wc[id]*rTrue
		rPred = wp + wc[id]*rPred
		rTrue = wp + wr
		setWeights(w, wc, id, wp, wr)
	}
	st.mlProd *= rPred
	if st.mlProd < 1e-200 {
		st.mlAcc += math.Log(st.mlProd)
		st.mlProd = 1
	}
	st.count(a)
	st.advance(a)
}

// setWeights stores w = wp/(wp+wr) and 1−w = wr/(wp+wr), floored at
// minWeight.
func setWeights(w, wc []float64, id int32, wp, wr float64) {
	inv := 1 / (wp + wr)
	w[id] = max(wp*inv, minWeight)
	wc[id] = max(wr*inv, minWeight)
}

// logState stores ℓ^e_s = ln p^e_s, ℓ^w_s = ln p^w_s and Σ_q ℓ^w_{qs} at every
// node and predicts with the literal Theorem 2 (form Theorem1) or with the
// ratio of root marginal likelihoods (form Ratio).
type logState struct {
	base
	lnw   []float64
	omega []float64
}

func newLogState(p *params) *logState {
	return &logState{base: newBase(p, [3]float64{}), lnw: make([]float64, p.D+1), omega: make([]float64, p.D+1)}
}

// Weights computes ω_{n,l} from Theorem 2: ln ω_l − ln ω_{l−1} = ln(1−λ) −
// I_{l=d} ln λ + ℓ^e_{s_l} − ℓ^e_{s_{l−1}} + Σ_q ℓ^w_{qs_{l−1}} − ℓ^w_{s_l}, with
// ℓ^w_{s_d} = ℓ^e_{s_d} at the deepest node d (= D except for Shorter and a
// saturated tree), then normalises.
func (st *logState) Weights(omega []float64) {
	clear(omega)
	if !st.predicting() {
		return
	}
	st.prepare()
	le, lw, sc := st.s.f[0], st.s.f[1], st.s.f[2]
	st.lnw[0] = 0
	mx := 0.0
	for l := 1; l <= st.d; l++ {
		prev, id := st.ids[l-1], st.ids[l]
		v := st.lnw[l-1] + st.p.ln1mLam + le[id] - le[prev] + sc[prev]
		if l == st.d {
			v -= st.p.lnLam + le[id]
		} else {
			v -= lw[id]
		}
		st.lnw[l] = v
		mx = math.Max(mx, v)
	}
	sum := 0.0
	for l := 0; l <= st.d; l++ {
		omega[l] = math.Exp(st.lnw[l] - mx)
		sum += omega[l]
	}
	for l := 0; l <= st.d; l++ {
		omega[l] /= sum
	}
}

// rootLW returns ln p^w_{()} of the current counts with the deepest path
// node taken as a leaf, after a hypothetical extra symbol a when a ≥ 0
// (st.pa must then hold p_{n,s_l}(a)).
func (st *logState) rootLW(a int) float64 {
	le, lw, sc := st.s.f[0], st.s.f[1], st.s.f[2]
	d := st.d
	v := le[st.ids[d]]
	if a >= 0 {
		v += math.Log(st.pa[d])
	}
	for l := d - 1; l >= 0; l-- {
		id := st.ids[l]
		e := le[id]
		if a >= 0 {
			e += math.Log(st.pa[l])
		}
		v = logexp.Add(st.p.lnLam+e, st.p.ln1mLam+sc[id]-lw[st.ids[l+1]]+v)
	}
	return v
}

// Predict writes P(x_{n+1} = · | x_1^n) by Theorem 2 (form Theorem1) or as
// p^w_{()}(x_1^n a)/p^w_{()}(x_1^n) for every a (form Ratio).
func (st *logState) Predict(p []float64) {
	if !st.predicting() {
		st.priorPredict(p)
		return
	}
	st.prepare()
	if st.p.form == Theorem1 {
		st.Weights(st.omega)
		st.blendWith(st.omega, p)
		return
	}
	before := st.rootLW(-1)
	for a := range p {
		st.probs(byte(a))
		p[a] = math.Exp(st.rootLW(a) - before)
	}
}

// Observe appends a and updates ℓ^e, ℓ^w and Σ_q ℓ^w_{qs} bottom-up along the
// path: ℓ^e_s += ln p_{n,s}(a); ℓ^w_s = ℓ^e_s at depth D, else
// ln(λ e^{ℓ^e_s} + (1−λ) e^{Σ_q ℓ^w_{qs}}).
func (st *logState) Observe(a byte) {
	if !st.predicting() {
		st.advance(a)
		return
	}
	st.prepare()
	if st.frozen {
		p := st.dist
		st.Predict(p)
		st.logml += math.Log(p[a])
		st.advance(a)
		return
	}
	st.probs(a)
	if st.p.form == Theorem1 {
		st.Weights(st.omega)
		pr := 0.0
		for l := 0; l <= st.d; l++ {
			pr += st.omega[l] * st.pa[l]
		}
		st.logml += math.Log(pr)
	} else {
		st.logml += st.rootLW(int(a)) - st.rootLW(-1)
	}
	le, lw, sc := st.s.f[0], st.s.f[1], st.s.f[2]
	var childOld, childNew float64
	for l := st.d; l >= 0; l-- {
		id := st.ids[l]
		le[id] += math.Log(st.pa[l])
		if l < st.d {
			sc[id] += childNew - childOld
		}
		old := lw[id]
		if l == st.p.D {
			lw[id] = le[id]
		} else {
			lw[id] = logexp.Add(st.p.lnLam+le[id], st.p.ln1mLam+sc[id])
		}
		childOld, childNew = old, lw[id]
	}
	st.count(a)
	st.advance(a)
}

// RootLogPW returns ln p^w_{()} held by a Theorem1 or Ratio state (the root's
// stored weighted log probability), or NaN for other states. Under Pad it
// equals LogML up to rounding: Theorem 3.1 of Kontoyiannis et al.
func RootLogPW(s State) float64 {
	if ls, ok := s.(*logState); ok {
		return ls.s.f[1][0]
	}
	return math.NaN()
}
