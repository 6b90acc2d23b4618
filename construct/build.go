package construct

import (
	"fmt"
	"math"

	"github.com/vomc/vomc/internal/logexp"
)

// Config selects the prior π_CTW(D, λ, α) the construction reproduces
// (Section 4.2; the same parameters as ctw.Config with Init = Pad) and the
// attention temperature.
type Config struct {
	A      int     // alphabet size, 2..256
	D      int     // maximum depth, ≥ 1 (the construction has D+2 layers)
	Lambda float64 // stop probability λ ∈ (0,1)
	Alpha  float64 // symmetric Dirichlet parameter α > 0
	// C is the temperature c of Appendix "Construction of Transformer for
	// CTW", a factor of every W_K. 0 or +Inf selects the exact hard-attention
	// limit c → ∞ (the matrices are then built with c = 1 and the executor
	// takes the arg-max); a finite C > 0 runs ordinary softmax attention.
	C float64
	// N is the positional period of pos_i = (1, cos(iπ/N), sin(iπ/N)) (the
	// paper's context length N). It must exceed the number of positions,
	// D + n + 1 for n symbols; 0 lets the Predictor choose (see Predictor).
	N int
	// LiteralInduction builds the induction layers as the paper writes
	// them — key s_{u,dc} = x_{u−dc+1}^u, value ℓ^w of u's own path node
	// computed at u, no context heads — keeping this package's other fixes
	// (BOS sink, match weight, padding, total count i−D): index-corrected,
	// not verbatim. It is NOT exact: a sibling's value
	// misses the symbol that followed its last occurrence. For comparison
	// only (see the package documentation and TestLiteralInductionIsInexact).
	LiteralInduction bool
}

// Hard reports whether c selects the hard-attention limit.
func (c Config) Hard() bool { return c.C == 0 || math.IsInf(c.C, 1) }

// Validate reports the first impossible parameter.
func (c Config) Validate() error {
	switch {
	case c.A < 2 || c.A > 256:
		return fmt.Errorf("construct: alphabet size A=%d outside 2..256", c.A)
	case c.D < 1 || c.D > 16:
		return fmt.Errorf("construct: depth D=%d outside 1..16", c.D)
	case !(c.Lambda > 0 && c.Lambda < 1):
		return fmt.Errorf("construct: stop probability λ=%v outside (0,1)", c.Lambda)
	case !(c.Alpha > 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("construct: Dirichlet parameter α=%v must be positive and finite", c.Alpha)
	case math.IsNaN(c.C) || c.C < 0:
		return fmt.Errorf("construct: temperature c=%v must be positive (0 or +Inf: hard limit)", c.C)
	case c.N < 0:
		return fmt.Errorf("construct: negative positional period N=%d", c.N)
	}
	return nil
}

// Score scales of the attention heads (all multiplied by c in W_K).
const (
	// lookupMatch is the score of one matching symbol in an induction head;
	// it must exceed the range [0, 2] of the positional term pos_i·pos_u so
	// that a full suffix match always beats a partial one, which the paper's
	// unit weight does not guarantee.
	lookupMatch = 4
)

// Construction is the (D+2)-layer transformer of Section 4.4 (Theorems 3–5)
// for one prior, with its embedding and read-out. Build it with Build; run
// it with Run or through the Predictor.
type Construction struct {
	Config Config
	Layout *Layout
	TF     *Transformer

	lnLam, ln1mLam float64
	lgAlpha        float64 // lnΓ(α)
	lgSumAlpha     float64 // lnΓ(Aα)
}

// Build constructs the transformer of Theorems 3–5 for cfg (cfg.N must be
// set). Layer 1 is the context-extension layer of Theorem 3 (D heads,
// Rot(m)), layer 2 the statistics-collection layer of Theorem 4 (D+1 heads
// as in the paper plus D heads for the shifted-context statistics), layers
// 3..D+2 the induction layers of Theorem 5 (A heads keyed as in the paper's
// query plus A heads for the shifted context chain; the last has only the
// first A). See the package documentation for where and why it departs from
// the paper.
func Build(cfg Config) (*Construction, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.N < cfg.D+1 {
		return nil, fmt.Errorf("construct: positional period N=%d must be at least D+1=%d", cfg.N, cfg.D+1)
	}
	A, D := cfg.A, cfg.D
	c := &Construction{Config: cfg, lnLam: math.Log(cfg.Lambda), ln1mLam: math.Log1p(-cfg.Lambda)}
	c.lgAlpha, _ = math.Lgamma(cfg.Alpha)
	c.lgSumAlpha, _ = math.Lgamma(float64(A) * cfg.Alpha)

	L := &Layout{}
	L.add("s", "s_{i,D+1}", D+1, A, "x_i, x_{i-1}, …, x_{i-D} one-hot (x_i from the embedding, the rest copied by layer 1; Thm 3)")
	L.add("g", "g_{i,s}", D+1, A, "forward statistics g_{i,s_{i,l}}, l=0..D: next-symbol frequencies after the path suffix s_{i,l} (Thm 4)")
	L.add("g_back", "g←_{i-1,s}", D+1, A, "backward statistics g←_{i-1,s_{i,l}}, l=0..D-1 (l=D stays 0): previous-symbol frequencies (Thm 4)")
	L.add("g_ctx", "g~_{i,c}", D+1, A, "[added] forward statistics of the shifted context c_{i,l}=x_{i-l}^{i-1}, l=1..D (part 0 unused)")
	L.add("g_ctx_back", "g~←_{i,c}", D+1, A, "[added] backward statistics of c_{i,l}, l=1..D-1 (parts 0 and D unused)")
	L.add("n", "n_{i,s}", D+1, A, "counts n_{i,s_{i,l}} = (i−D)·g·Πg← of the path nodes (recovered by layer 2's FF)")
	L.add("p", "p_{i,D}", D+1, A, "Dirichlet means p_{i,s_{i,l}}, l=0..D (eq. dirichlet-mean)")
	L.add("le", "l^e_{i,D}", D+1, 1, "ℓ^e_{i,s_{i,l}} = ln p^e, l=0..D, of the path nodes")
	L.add("delta", "δ_{i,l}", D, 1, "δ_{i,l} = ln ω_{i,l} − ln ω_{i,l−1}, l=1..D (part l−1), filled from l=D down")
	L.add("lw", "ℓ^w_{i,s}", D+1, 1, "ℓ^w_{i,s_{i,l}} of the path nodes at time i, l=D (layer 2) then D−1..0 (induction)")
	L.add("lw_sib", "ℓ^w_{i,qs}", D, A, "ℓ^w_{i,q s_{i,d}} of the children q s_{i,d} of path node d=0..D−1 (copied by the induction heads)")
	L.add("n_ctx", "n~_{i,c}", D+1, A, "[added] counts of the context nodes c_{i,l} after the update by x_i")
	L.add("le_ctx", "l^e~_{i,c}", D+1, 1, "[added] ℓ^e of c_{i,l} after the update by x_i")
	L.add("lw_ctx", "ℓ^w~_{i,c}", D+1, 1, "[added] ℓ^w of c_{i,l} after the update by x_i, l=D..1: the values the induction heads copy")
	L.add("lw_ctx_sib", "ℓ^w~_{i,qc}", D, A, "[added] ℓ^w of the children q c_{i,d}, d=1..D−1 (part 0 unused)")
	L.add("pos", "pos_i", 1, 3, "(1, cos(iπ/N), sin(iπ/N)); 0 at the BOS position 0")
	L.add("flags", "", 1, 2, "[added] (pad, bos): 1 at the D padding positions x_{1−D}^0 resp. at the BOS sink position 0")
	c.Layout = L

	tf := &Transformer{E: L.E, Hard: cfg.Hard()}
	temp := cfg.C
	if tf.Hard {
		temp = 1
	}
	tf.Layers = append(tf.Layers, c.contextLayer(temp), c.statisticsLayer(temp))
	for k := 0; k < D; k++ {
		tf.Layers = append(tf.Layers, c.inductionLayer(temp, D-k))
	}
	if err := tf.Validate(); err != nil {
		return nil, err
	}
	c.TF = tf
	return c, nil
}

// Embed writes the initial embedding h^(1)_i of position i holding symbol
// sym into h (length E, zeroed here): (x_i one-hot; 0; pos_i), plus the
// pad flag at padding positions. Position 0 is the BOS sink: all zero
// except its bos flag (and pos_0 = 0).
func (c *Construction) Embed(i int, sym byte, pad bool, h []float64) {
	clear(h)
	L := c.Layout
	fl := L.Block("flags")
	if i == 0 {
		h[fl.Offset+1] = 1
		return
	}
	h[L.Block("s").Part(0, int(sym))] = 1
	pb := L.Block("pos").Offset
	th := float64(i) * math.Pi / float64(c.Config.N)
	h[pb], h[pb+1], h[pb+2] = 1, math.Cos(th), math.Sin(th)
	if pad {
		h[fl.Offset] = 1
	}
}

// position recovers i from pos_i = (1, cos(iπ/N), sin(iπ/N)) (0 at BOS), an
// exact function of the FF input.
func (c *Construction) position(u []float64) float64 {
	pb := c.Layout.Block("pos").Offset
	if u[pb] < 0.5 {
		return 0
	}
	return math.Round(float64(c.Config.N) * math.Atan2(u[pb+2], u[pb+1]) / math.Pi)
}

// contextLayer is layer 1, the finite-memory context-extension layer of
// Theorem 3 (Appendix, proof of Theorem 3): head m = 1..D has
// W_Q,m h_i = pos_{i−m} (Rot(m) applied to (cos, sin), the constant 1
// passed through), W_K,m h_u = c·pos_u and W_V,m h_u = x_u, placed by W_O
// into part m of s. The score c(1 + cos((i−m−u)π/N)) is maximal exactly at
// u = i−m; for i−m < 1 it is maximal at u = 1, a padding position holding
// the symbol 0, which is what the dummy context x_{1−D}^0 = 0 requires. The
// FF is zero, as in the paper.
func (c *Construction) contextLayer(temp float64) *Layer {
	L, A, D, N := c.Layout, c.Config.A, c.Config.D, c.Config.N
	E := L.E
	pb := L.Block("pos").Offset
	s := L.Block("s")
	l := &Layer{Name: "1: context extension (Thm 3)", WO: NewMat(E, D*A), FFDoc: "zero"}
	for m := 1; m <= D; m++ {
		phi := float64(m) * math.Pi / float64(N)
		q, k, v := NewMat(3, E), NewMat(3, E), NewMat(A, E)
		q.Set(0, pb, 1)
		q.Set(1, pb+1, math.Cos(phi))
		q.Set(1, pb+2, math.Sin(phi))
		q.Set(2, pb+1, -math.Sin(phi))
		q.Set(2, pb+2, math.Cos(phi))
		for j := 0; j < 3; j++ {
			k.Set(j, pb+j, temp)
		}
		for a := 0; a < A; a++ {
			v.Set(a, s.Part(0, a), 1)
			l.WO.Set(s.Part(m, a), (m-1)*A+a, 1)
		}
		l.Heads = append(l.Heads, Head{Name: fmt.Sprintf("copy x_{i-%d}", m), WQ: q, WK: k, WV: v})
	}
	return l
}

// statisticsLayer is layer 2, the statistics-collection layer of Theorem 4.
// Paper heads (suffix length l = 0..D, the paper's m = l+1): the query is
// the path suffix s_{i,l} = (x_i, …, x_{i−l+1}) (parts 0..l−1 of s), the
// key at u is c·s_{u−1,l} (parts 1..l of s at u), so the matching positions
// u are those whose symbol x_u followed an occurrence of s_{i,l}; the
// value is (x_u; x_{u−l−1}), written to g_l and g←_l (no backward part for
// l = D, as in the paper). Added heads (l = 1..D): the same with the query
// c_{i,l} = (x_{i−1}, …, x_{i−l}) (parts 1..l of s), giving the statistics
// of the shifted context. Every head also has one score row −(D+2)·c at
// padding and BOS positions, so that only real symbols x_1..x_i are counted
// (the paper has no padding positions). The FF is the exact function of
// countsFF.
func (c *Construction) statisticsLayer(temp float64) *Layer {
	L, A, D := c.Layout, c.Config.A, c.Config.D
	E := L.E
	s, pb, fl := L.Block("s"), L.Block("pos").Offset, L.Block("flags").Offset
	penalty := float64(D + 2)
	l := &Layer{Name: "2: statistics collection (Thm 4)", FF: c.countsFF,
		FFDoc: "counts n = (i−D)·g·Πg← (path) and n~ (context), then p, ℓ^e, ℓ^w_{s_D} = ℓ^e_{s_D} (exact)"}
	type out struct{ row, col int }
	var places []out
	dvTot := 0
	mk := func(name string, qParts []int, l2 int, fwd, back int) {
		dk := l2*A + 1
		q, k := NewMat(dk, E), NewMat(dk, E)
		for j := 0; j < l2; j++ {
			for a := 0; a < A; a++ {
				q.Set(j*A+a, s.Part(qParts[j], a), 1)
				k.Set(j*A+a, s.Part(j+1, a), temp)
			}
		}
		q.Set(dk-1, pb, -penalty)
		k.Set(dk-1, fl, temp)
		k.Set(dk-1, fl+1, temp)
		dv := A
		if back >= 0 {
			dv = 2 * A
		}
		v := NewMat(dv, E)
		for a := 0; a < A; a++ {
			v.Set(a, s.Part(0, a), 1)
			places = append(places, out{fwd + a, dvTot + a})
			if back >= 0 {
				v.Set(A+a, s.Part(l2+1, a), 1)
				places = append(places, out{back + a, dvTot + A + a})
			}
		}
		dvTot += dv
		l.Heads = append(l.Heads, Head{Name: name, WQ: q, WK: k, WV: v})
	}
	g, gb, gc, gcb := L.Block("g"), L.Block("g_back"), L.Block("g_ctx"), L.Block("g_ctx_back")
	for l2 := 0; l2 <= D; l2++ {
		parts := make([]int, l2)
		for j := range parts {
			parts[j] = j
		}
		back := -1
		if l2 < D {
			back = gb.Part(l2, 0)
		}
		mk(fmt.Sprintf("g, g← of s_{i,%d}", l2), parts, l2, g.Part(l2, 0), back)
	}
	for l2 := 1; l2 <= D; l2++ {
		parts := make([]int, l2)
		for j := range parts {
			parts[j] = j + 1
		}
		back := -1
		if l2 < D {
			back = gcb.Part(l2, 0)
		}
		mk(fmt.Sprintf("[added] g~, g~← of c_{i,%d}", l2), parts, l2, gc.Part(l2, 0), back)
	}
	l.WO = NewMat(E, dvTot)
	for _, p := range places {
		l.WO.Set(p.row, p.col, 1)
	}
	return l
}

// lnPe returns Σ_a n(a) and ℓ^e = ln p^e of a count vector (the
// Dirichlet–multinomial marginal of Section 4.2).
func (c *Construction) lnPe(n []float64) (tot, le float64) {
	A := float64(len(n))
	le = c.lgSumAlpha
	for _, v := range n {
		tot += v
		lg, _ := math.Lgamma(v + c.Config.Alpha)
		le += lg - c.lgAlpha
	}
	lg, _ := math.Lgamma(tot + A*c.Config.Alpha)
	return tot, le - lg
}

// countsFF is the exact FF of layer 2. With j = i − D the number of real
// symbols up to position i (i recovered from pos_i), it computes the
// path-node counts by the paper's recovery formula (Appendix, after the
// proof of Theorem 4), N_0 = j, n_{i,s_l} = N_l·g_l, N_{l+1} = N_l·g←_l(x_{i−l}),
// then p_{i,s_l}, ℓ^e_{i,s_l} and ℓ^w_{i,s_D} = ℓ^e_{i,s_D} (h^(3)); and, for
// the shifted context nodes c_{i,l} = x_{i−l}^{i−1} after the update by x_i,
// N~_0 = j, N~_l = N~_{l−1}·g~←_{l−1}(x_{i−l}) (g←_0 for l = 1),
// n~_l = N~_l·g~_l (g_0 for l = 0), ℓ^e~_l and ℓ^w~_D = ℓ^e~_D. When a suffix
// has never occurred its g, g← are whatever the attention returns
// ("initialised arbitrarily"), but then N_l = 0 exactly — it is a product
// with a factor g←_{l'}(x_{i−l'}) = 0 from the last suffix that did occur —
// so its counts are 0 whatever g is.
func (c *Construction) countsFF(u, out []float64) {
	L, A, D := c.Layout, c.Config.A, c.Config.D
	alpha := c.Config.Alpha
	j := max(c.position(u)-float64(D), 0)
	sym := func(k int) []float64 { return L.Sub(u, "s", k) }
	dot := func(x, y []float64) float64 {
		s := 0.0
		for i := range x {
			s += x[i] * y[i]
		}
		return s
	}
	// Path nodes s_{i,l}.
	N := j
	for l := 0; l <= D; l++ {
		g := L.Sub(u, "g", l)
		n := L.Sub(out, "n", l)
		for a := 0; a < A; a++ {
			n[a] = N * g[a]
		}
		tot, le := c.lnPe(n)
		p := L.Sub(out, "p", l)
		for a := 0; a < A; a++ {
			p[a] = (n[a] + alpha) / (tot + float64(A)*alpha)
		}
		L.Get(out, "le")[l] = le
		if l == D {
			L.Get(out, "lw")[D] = le
		} else {
			N *= dot(L.Sub(u, "g_back", l), sym(l))
		}
	}
	// Context nodes c_{i,l} after the update by x_i.
	N = j
	for l := 0; l <= D; l++ {
		var g []float64
		if l == 0 {
			g = L.Sub(u, "g", 0)
		} else {
			var b []float64
			if l == 1 {
				b = L.Sub(u, "g_back", 0)
			} else {
				b = L.Sub(u, "g_ctx_back", l-1)
			}
			N *= dot(b, sym(l))
			g = L.Sub(u, "g_ctx", l)
		}
		n := L.Sub(out, "n_ctx", l)
		for a := 0; a < A; a++ {
			n[a] = N * g[a]
		}
		_, le := c.lnPe(n)
		L.Get(out, "le_ctx")[l] = le
		if l == D {
			L.Get(out, "lw_ctx")[D] = le
		}
	}
}

// inductionLayer is the induction layer of Theorem 5 for child depth dc
// (the paper's layer ℓ = D+3−dc), whose parent depth is d = dc−1.
//
// Path heads q ∈ A (the paper's A heads): the query is the string
// q·s_{i,d} = (q, x_{i−d+1}, …, x_i) — as in the paper, [s_{i,d}; e_q] with
// e_q injected through the constant 1 of pos — plus pos_i; the key at u is
// c·(c_{u,dc}; pos_u), the SHIFTED suffix x_{u−dc}^{u−1} (the paper keys on
// s_{u,dc} = x_{u−dc+1}^u); the value is ℓ^w~ of c_{u,dc} (the node's value
// after the update by x_u), written to lw_sib[d][q]. The arg-max is the
// latest u ≤ i after which the node q s_{i,d} last changed, so the copy is
// the node's value at time i. Symbol matches weigh 4 (so a full match
// always beats a partial one plus the positional term ∈ [0, 2]); the BOS
// sink scores 4·dc−1, between the best partial match and any full match,
// and holds the value 0 = ℓ^w of a node never seen; padding positions score
// −(4D+8).
//
// Context heads q ∈ A (added, for d ≥ 1): the same with the query
// q·c_{i,d} = (q, x_{i−d}, …, x_{i−1}); they fetch the children of the
// context node c_{i,d}, written to lw_ctx_sib[d][q], from which the FF
// forms ℓ^w~ of c_{i,d} for the next layer.
//
// The FF is the exact function described in inductionFF.
func (c *Construction) inductionLayer(temp float64, dc int) *Layer {
	L, A, D := c.Layout, c.Config.A, c.Config.D
	E := L.E
	d := dc - 1
	s, pb, fl := L.Block("s"), L.Block("pos").Offset, L.Block("flags").Offset
	lwc := L.Block("lw_ctx")
	sib, csib := L.Block("lw_sib"), L.Block("lw_ctx_sib")
	l := &Layer{Name: fmt.Sprintf("%d: induction, children at depth %d (Thm 5)", D+3-dc, dc)}
	l.FF = func(u, out []float64) { c.inductionFF(dc, u, out) }
	l.FFDoc = fmt.Sprintf("δ_%d = ln(1−λ) − I_{%d=D}lnλ + ℓ^e_%d − ℓ^e_%d + Σ_q ℓ^w_{q s_%d} − ℓ^w_%d; ℓ^w_%d = ln(λe^{ℓ^e} + (1−λ)e^{Σ_q ℓ^w_{q s}})", dc, dc, dc, d, d, dc, d)
	if d >= 1 {
		l.FFDoc += fmt.Sprintf("; ℓ^w~ of c_{i,%d} likewise", d)
	}
	sink := float64(lookupMatch*dc) - 1
	penalty := float64(lookupMatch*(D+1) + 4)
	dk := dc*A + 3 + 2
	lit := c.Config.LiteralInduction
	nh := A
	if d >= 1 && !lit {
		nh = 2 * A
	}
	l.WO = NewMat(E, nh)
	mk := func(name string, qParts []int, qsym int, dst int, col int) {
		q, k, v := NewMat(dk, E), NewMat(dk, E), NewMat(1, E)
		for j := 1; j <= dc; j++ {
			for a := 0; a < A; a++ {
				r := (j-1)*A + a
				if lit {
					k.Set(r, s.Part(j-1, a), temp)
				} else {
					k.Set(r, s.Part(j, a), temp)
				}
				if j <= d {
					q.Set(r, s.Part(qParts[j-1], a), lookupMatch)
				} else if a == qsym {
					q.Set(r, pb, lookupMatch)
				}
			}
		}
		r := dc * A
		for j := 0; j < 3; j++ {
			q.Set(r+j, pb+j, 1)
			k.Set(r+j, pb+j, temp)
		}
		q.Set(r+3, pb, sink)
		k.Set(r+3, fl+1, temp)
		q.Set(r+4, pb, -penalty)
		k.Set(r+4, fl, temp)
		if lit {
			v.Set(0, L.Block("lw").Part(dc, 0), 1)
		} else {
			v.Set(0, lwc.Part(dc, 0), 1)
		}
		l.WO.Set(dst, col, 1)
		l.Heads = append(l.Heads, Head{Name: name, WQ: q, WK: k, WV: v})
	}
	path := make([]int, d)
	ctx := make([]int, d)
	for j := 1; j <= d; j++ {
		path[j-1] = j - 1 // key part j ↔ x_{i−j+1}
		ctx[j-1] = j      // key part j ↔ x_{i−j}
	}
	for q := 0; q < A; q++ {
		mk(fmt.Sprintf("ℓ^w of %d·s_{i,%d}", q, d), path, q, sib.Part(d, q), q)
	}
	if d >= 1 && !lit {
		for q := 0; q < A; q++ {
			mk(fmt.Sprintf("[added] ℓ^w~ of %d·c_{i,%d}", q, d), ctx, q, csib.Part(d, q), A+q)
		}
	}
	return l
}

// inductionFF is the exact FF of the induction layer for child depth dc
// (parent d = dc−1), the step "δ_{i,D+3−ℓ} can be computed by a^(ℓ)_i" of
// the proof of Theorem 5: with Σ = Σ_q ℓ^w_{i,q s_{i,d}} (the copied
// children),
//
//	δ_{i,dc} = ln(1−λ) − I_{dc=D} ln λ + ℓ^e_{i,s_dc} − ℓ^e_{i,s_d} + Σ − ℓ^w_{i,s_dc}
//	ℓ^w_{i,s_d} = ln(λ e^{ℓ^e_{i,s_d}} + (1−λ) e^Σ)
//
// (Theorem 2 and the CTW recursion), and for d ≥ 1 the same recursion for
// the context node c_{i,d} from its copied children.
func (c *Construction) inductionFF(dc int, u, out []float64) {
	L := c.Layout
	d := dc - 1
	le, lw := L.Get(u, "le"), L.Get(u, "lw")
	sum := 0.0
	for _, v := range L.Sub(u, "lw_sib", d) {
		sum += v
	}
	delta := c.ln1mLam + le[dc] - le[d] + sum - lw[dc]
	if dc == c.Config.D {
		delta -= c.lnLam
	}
	L.Get(out, "delta")[dc-1] = delta
	L.Get(out, "lw")[d] = logexp.Add(c.lnLam+le[d], c.ln1mLam+sum)
	if d >= 1 {
		sum = 0
		for _, v := range L.Sub(u, "lw_ctx_sib", d) {
			sum += v
		}
		L.Get(out, "lw_ctx")[d] = logexp.Add(c.lnLam+L.Get(u, "le_ctx")[d], c.ln1mLam+sum)
	}
}

// Omega writes the blending weights ω_{i,l}, l = 0..D, of Theorem 2 from
// the δ block of the final embedding h^(D+3): ln ω_l = Σ_{k≤l} δ_k + const,
// normalised.
func (c *Construction) Omega(h, omega []float64) {
	delta := c.Layout.Get(h, "delta")
	omega[0] = 0
	mx := 0.0
	for l := 1; l <= c.Config.D; l++ {
		omega[l] = omega[l-1] + delta[l-1]
		mx = max(mx, omega[l])
	}
	sum := 0.0
	for l := range omega {
		omega[l] = math.Exp(omega[l] - mx)
		sum += omega[l]
	}
	for l := range omega {
		omega[l] /= sum
	}
}

// Readout is the final read-out of Theorem 5, an exact function of
// h^(D+3): P(·) = Σ_l ω_{i,l} p_{i,s_{i,l}}(·), written into p (length A).
func (c *Construction) Readout(h, p []float64) {
	omega := make([]float64, c.Config.D+1)
	c.Omega(h, omega)
	clear(p)
	for l, w := range omega {
		pl := c.Layout.Sub(h, "p", l)
		for a := range p {
			p[a] += w * pl[a]
		}
	}
}

// Trace is the result of running the construction on a sequence x_1..x_n:
// Stages[i] holds the residual streams of transformer position i (0: BOS,
// 1..D: the padding x_{1−D}^0 = 0, D+j: x_j) and Dist[j] (j = 0..n) the
// read-out P(x_{j+1} = · | x_1^j) at position D+j.
type Trace struct {
	Stages []Stage // nil unless tracing
	Dist   [][]float64
}

// Positions is the number of transformer positions used for x: the BOS
// sink (position 0), the D padding zeros x_{1−D}^0 (positions 1..D, marked
// by the pad flag), then x_1..x_n (positions D+1..D+n).
func (c *Construction) Positions(x []byte) int { return len(x) + c.Config.D + 1 }

// Run runs the construction on x (symbols 0..A−1; len(x)+D+1 ≤ N) and
// returns the predictive distributions of x_1..x_{n+1}; with trace set it
// keeps every intermediate stream and attention map.
func (c *Construction) Run(x []byte, trace bool) (*Trace, error) {
	D := c.Config.D
	if np := c.Positions(x); np > c.Config.N {
		return nil, fmt.Errorf("construct: %d positions exceed the positional period N=%d", np, c.Config.N)
	}
	for i, v := range x {
		if int(v) >= c.Config.A {
			return nil, fmt.Errorf("construct: symbol %d at position %d outside 0..%d", v, i, c.Config.A-1)
		}
	}
	r := c.TF.NewRunner(trace)
	tr := &Trace{}
	h := make([]float64, c.Layout.E)
	for i := 0; i <= D+len(x); i++ {
		var sym byte
		if i > D {
			sym = x[i-D-1]
		}
		c.Embed(i, sym, i >= 1 && i <= D, h)
		st := r.Append(h)
		if trace {
			tr.Stages = append(tr.Stages, st)
		}
		if i >= D {
			p := make([]float64, c.Config.A)
			c.Readout(st.H[len(st.H)-1], p)
			tr.Dist = append(tr.Dist, p)
		}
	}
	return tr, nil
}
