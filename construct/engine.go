package construct

import (
	"fmt"
	"math"
)

// Mat is a dense row-major float64 matrix, the form of every attention weight
// W_Q,m, W_K,m, W_V,m and W_O of Section 4.1.
type Mat struct {
	Rows, Cols int
	Data       []float64 // Rows·Cols entries, row-major
}

// NewMat returns a zero Rows×Cols matrix.
func NewMat(rows, cols int) *Mat {
	return &Mat{Rows: rows, Cols: cols, Data: make([]float64, rows*cols)}
}

// At returns entry (i, j).
func (m *Mat) At(i, j int) float64 { return m.Data[i*m.Cols+j] }

// Set sets entry (i, j) to v.
func (m *Mat) Set(i, j int, v float64) { m.Data[i*m.Cols+j] = v }

// MulVec writes m·x into out (len(x) = Cols, len(out) = Rows).
func (m *Mat) MulVec(x, out []float64) {
	for i := 0; i < m.Rows; i++ {
		row := m.Data[i*m.Cols : (i+1)*m.Cols]
		s := 0.0
		for j, w := range row {
			if w != 0 {
				s += w * x[j]
			}
		}
		out[i] = s
	}
}

// Head is one attention head m of a layer (Section 4.1): the query and key
// matrices W_Q,m, W_K,m (Dk×E) and the value matrix W_V,m (Dv×E). The paper
// takes E^(ℓ) = E for all three; like its remark in Appendix
// "Construction of Transformer for CTW" ("the constructions can be applied
// to much smaller E^(ℓ) while taking W_O as a permutation matrix") we keep
// only the non-zero rows, so Dk and Dv differ per head. The temperature c is
// a factor of W_K,m, as in the paper.
type Head struct {
	Name       string
	WQ, WK, WV *Mat
}

// FF is the feed-forward sub-layer of a layer, given as the exact function
// f of its input u = a^(ℓ) + h^(ℓ): the layer output is u + f(u). Where the
// paper writes "a sufficiently wide FF layer (universal approximation) can
// compute f", the construction implements that f exactly as Go code instead
// of a ReLU network. f writes into out (length E, zeroed by the caller).
type FF func(u, out []float64)

// Layer is one transformer layer of Section 4.1: multi-head attention with
// heads Heads, output map W_O (E × Σ_m Dv_m), residual, then FF with
// residual. A nil FF is the zero function.
type Layer struct {
	Name  string
	Heads []Head
	WO    *Mat
	FF    FF
	// FFDoc describes in words what FF computes (printed by the CLI).
	FFDoc string
}

// Transformer is a float64 executor of the paper's decoder-only
// transformer layer (Section 4.1): per layer,
//
//	b_m,i = W_V,m [h_1..h_i] · softmax((W_K,m [h_1..h_i])ᵀ (W_Q,m h_i)),
//	a_i   = W_O [b_1,i; …; b_M,i],
//	h'_i  = (a_i + h_i) + f(a_i + h_i),
//
// with causal attention over positions 1..i (here 0..i: position 0 is the
// BOS sink of the construction). With Hard set it computes the limit
// c → ∞ of the temperature baked into W_K: each head attends uniformly to
// the arg-max set of its scores (W_K h_u)ᵀ(W_Q h_i), which is exactly what
// softmax(c·s) tends to (ties share equally, non-maximal scores get 0).
// Ties are exact float64 equality: the construction's scores that should
// tie are integers, computed exactly.
type Transformer struct {
	E      int
	Layers []*Layer
	Hard   bool
}

// Validate checks the shapes of every matrix.
func (t *Transformer) Validate() error {
	for li, l := range t.Layers {
		dv := 0
		for _, h := range l.Heads {
			if h.WQ.Cols != t.E || h.WK.Cols != t.E || h.WV.Cols != t.E {
				return fmt.Errorf("construct: layer %d head %s: matrices must have %d columns", li+1, h.Name, t.E)
			}
			if h.WQ.Rows != h.WK.Rows {
				return fmt.Errorf("construct: layer %d head %s: W_Q has %d rows, W_K %d", li+1, h.Name, h.WQ.Rows, h.WK.Rows)
			}
			dv += h.WV.Rows
		}
		if len(l.Heads) > 0 && (l.WO == nil || l.WO.Rows != t.E || l.WO.Cols != dv) {
			return fmt.Errorf("construct: layer %d: W_O must be %d×%d", li+1, t.E, dv)
		}
	}
	return nil
}

// Stage is the residual stream of one position after one step: H[0] is the
// embedding h^(1); for layer ℓ (1-based), U[ℓ−1] = a^(ℓ) + h^(ℓ) (after
// attention and its residual, the input of the FF) and H[ℓ] = h^(ℓ+1).
type Stage struct {
	H [][]float64
	U [][]float64
	// Att[ℓ−1][m] lists the attention weights of head m at this position
	// over positions 0..i (only kept when tracing).
	Att [][][]float64
}

// Runner runs a Transformer position by position with a key/value cache,
// so a whole sequence costs one pass (O(T²) per head) and a growing
// sequence can be extended.
type Runner struct {
	t     *Transformer
	keys  [][][]float64 // [layer][head] → flattened keys of positions 0..i
	vals  [][][]float64
	n     int
	trace bool
	// scratch
	q, sc, cat, a []float64
}

// NewRunner returns an empty runner; with trace set, Append also returns
// the attention weights.
func (t *Transformer) NewRunner(trace bool) *Runner {
	r := &Runner{t: t, trace: trace}
	r.keys = make([][][]float64, len(t.Layers))
	r.vals = make([][][]float64, len(t.Layers))
	maxDk, maxDv := 0, 0
	for li, l := range t.Layers {
		r.keys[li] = make([][]float64, len(l.Heads))
		r.vals[li] = make([][]float64, len(l.Heads))
		dv := 0
		for _, h := range l.Heads {
			maxDk = max(maxDk, h.WQ.Rows)
			dv += h.WV.Rows
		}
		maxDv = max(maxDv, dv)
	}
	r.q = make([]float64, maxDk)
	r.cat = make([]float64, maxDv)
	r.a = make([]float64, t.E)
	return r
}

// Len is the number of positions appended.
func (r *Runner) Len() int { return r.n }

// Append feeds the embedding h^(1) of the next position and returns its
// stage (all intermediate residual streams).
func (r *Runner) Append(h1 []float64) Stage {
	t := r.t
	i := r.n
	r.n++
	if cap(r.sc) < r.n {
		r.sc = make([]float64, r.n, 2*r.n)
	}
	sc := r.sc[:r.n]
	st := Stage{H: make([][]float64, len(t.Layers)+1), U: make([][]float64, len(t.Layers))}
	if r.trace {
		st.Att = make([][][]float64, len(t.Layers))
	}
	h := append([]float64(nil), h1...)
	st.H[0] = h
	for li, l := range t.Layers {
		cat := r.cat
		off := 0
		if r.trace {
			st.Att[li] = make([][]float64, len(l.Heads))
		}
		for m, hd := range l.Heads {
			dk, dv := hd.WQ.Rows, hd.WV.Rows
			q := r.q[:dk]
			hd.WQ.MulVec(h, q)
			ks := append(r.keys[li][m], make([]float64, dk)...)
			hd.WK.MulVec(h, ks[i*dk:])
			r.keys[li][m] = ks
			vs := append(r.vals[li][m], make([]float64, dv)...)
			hd.WV.MulVec(h, vs[i*dv:])
			r.vals[li][m] = vs
			for u := 0; u <= i; u++ {
				s := 0.0
				k := ks[u*dk : (u+1)*dk]
				for j, qj := range q {
					s += qj * k[j]
				}
				sc[u] = s
			}
			attend(sc, t.Hard)
			b := cat[off : off+dv]
			clear(b)
			for u := 0; u <= i; u++ {
				if w := sc[u]; w != 0 {
					v := vs[u*dv : (u+1)*dv]
					for j := range b {
						b[j] += w * v[j]
					}
				}
			}
			if r.trace {
				st.Att[li][m] = append([]float64(nil), sc...)
			}
			off += dv
		}
		u := append([]float64(nil), h...)
		if len(l.Heads) > 0 {
			l.WO.MulVec(cat[:off], r.a)
			for j := range u {
				u[j] += r.a[j]
			}
		}
		st.U[li] = u
		next := append([]float64(nil), u...)
		if l.FF != nil {
			f := make([]float64, t.E)
			l.FF(u, f)
			for j := range next {
				next[j] += f[j]
			}
		}
		st.H[li+1] = next
		h = next
	}
	return st
}

// attend turns scores into attention weights in place: softmax (with the
// maximum subtracted), or in the hard limit the uniform distribution over
// the exact arg-max set — the limit of softmax(c·s) as c → ∞.
func attend(s []float64, hard bool) {
	mx := math.Inf(-1)
	for _, v := range s {
		mx = max(mx, v)
	}
	if hard {
		k := 0
		for _, v := range s {
			if v == mx {
				k++
			}
		}
		w := 1 / float64(k)
		for i, v := range s {
			if v == mx {
				s[i] = w
			} else {
				s[i] = 0
			}
		}
		return
	}
	sum := 0.0
	for i, v := range s {
		e := math.Exp(v - mx)
		s[i] = e
		sum += e
	}
	for i := range s {
		s[i] /= sum
	}
}
