package construct

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/vomc/vomc/ctw"
)

// WriteSummary prints the construction: configuration, the embedding layout
// table and, per layer, its heads (with Dk, Dv) and what its exact FF
// computes.
func (c *Construction) WriteSummary(w io.Writer) error {
	cfg := c.Config
	temp := "∞ (hard-attention limit)"
	if !cfg.Hard() {
		temp = strconv.FormatFloat(cfg.C, 'g', -1, 64)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "TF-construct: A=%d D=%d λ=%g α=%g c=%s N=%d: %d layers, E=%d\n",
		cfg.A, cfg.D, cfg.Lambda, cfg.Alpha, temp, cfg.N, len(c.TF.Layers), c.Layout.E)
	if cfg.LiteralInduction {
		sb.WriteString("(literal induction layers as in the paper: NOT exact)\n")
	}
	sb.WriteString("\nEmbedding blocks:\n")
	sb.WriteString(c.Layout.String())
	sb.WriteString("\nLayers:\n")
	for _, l := range c.TF.Layers {
		fmt.Fprintf(&sb, "  layer %s: %d heads\n", l.Name, len(l.Heads))
		for m, h := range l.Heads {
			fmt.Fprintf(&sb, "    head %2d  %-34s W_Q,W_K %d×%d  W_V %d×%d\n", m+1, h.Name, h.WQ.Rows, h.WQ.Cols, h.WV.Rows, h.WV.Cols)
		}
		fmt.Fprintf(&sb, "    FF (exact function): %s\n", l.FFDoc)
	}
	sb.WriteString("  read-out (exact function): P = Σ_l ω_l p_{s_l}, ln ω_l = Σ_{k≤l} δ_k + const (Thm 2, Thm 5)\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// symStr renders a symbol one-hot (argmax, marked ~ when not exactly
// one-hot, as with finite c).
func symStr(v []float64) string {
	best, bi, hot := math.Inf(-1), 0, true
	for i, x := range v {
		if x > best {
			best, bi = x, i
		}
		if x != 0 && x != 1 {
			hot = false
		}
	}
	s := strconv.Itoa(bi)
	if !hot {
		s += "~"
	}
	return s
}

func vecStr(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', 4, 64)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// WriteTrace prints, for every prediction position of x (the last padding
// position, then x_1..x_n), the intermediate quantities of every layer by
// named block, as in the paper's Figs. 7 and 9: the copied suffix s, the
// statistics g, g← (and the added shifted-context statistics), the
// recovered counts n, p, ℓ^e, the ℓ^w copied for the children of every path
// node with the position each was copied from, δ, ω, and the final
// distribution beside CTW's. tr must come from Run(x, true).
func (c *Construction) WriteTrace(w io.Writer, x []byte, tr *Trace) error {
	if tr == nil || len(tr.Stages) != c.Positions(x) {
		return fmt.Errorf("construct: WriteTrace needs the trace of Run(x, true)")
	}
	cfg := c.Config
	cp, err := ctw.New(cfg.CTWConfig())
	if err != nil {
		return err
	}
	t := &tracer{
		c: c, L: c.Layout, A: cfg.A, D: cfg.D,
		cs:       cp.NewCTWState(),
		omegaCTW: make([]float64, cfg.D+1),
		pCTW:     make([]float64, cfg.A),
		omega:    make([]float64, cfg.D+1),
	}
	for i := t.D; i < len(tr.Stages); i++ {
		t.position(i, x, tr)
	}
	_, err = io.WriteString(w, t.sb.String())
	return err
}

// tracer writes WriteTrace's text, one prediction position at a time,
// running CTW alongside for the comparison of the read-out.
type tracer struct {
	sb   strings.Builder
	c    *Construction
	L    *Layout
	A, D int

	cs                    ctw.State // CTW on the symbols of the positions written so far
	omegaCTW, pCTW, omega []float64 // scratch: CTW's ω and P, the construction's ω
}

// position writes the trace of position i, which predicts x_{i−D+1}: its
// history, layer 1's copied suffix, layer 2's attention and FF, the
// induction layers and the read-out beside CTW's; then CTW observes
// x_{i−D+1}.
func (t *tracer) position(i int, x []byte, tr *Trace) {
	j := i - t.D
	st := tr.Stages[i]
	hist := "the dummy context 0^D"
	if j > 0 {
		hist = "x_1^" + strconv.Itoa(j) + " = " + symbolsStr(x[:j], t.A)
	}
	fmt.Fprintf(&t.sb, "\n── position %d (%s), history %s → P(x_%d | ·) ──\n", i, t.label(i), hist, j+1)
	t.layer1(st)
	t.layer2Attention(st)
	t.layer2FF(j, st)
	for k := 0; k < t.D; k++ {
		t.induction(k, st)
	}
	t.readOut(j, st, tr)
	if j < len(x) {
		t.cs.Observe(x[j])
	}
}

// label names position i: BOS, then the padding x_{1−D}..x_{0}, then x_1….
func (t *tracer) label(i int) string {
	if i == 0 {
		return "BOS"
	}
	if i <= t.D {
		return fmt.Sprintf("x_{%d}", i-t.D)
	}
	return fmt.Sprintf("x_%d", i-t.D)
}

// from describes where a head attended: the arg-max position, its weight,
// and how many positions tie with it.
func (t *tracer) from(att []float64) string {
	best, bi, k := -1.0, 0, 0
	for u, a := range att {
		if a > best {
			best, bi = a, u
		}
	}
	for _, a := range att {
		if a == best {
			k++
		}
	}
	switch {
	case k > 1:
		return fmt.Sprintf("%d positions, weight %.3g each", k, best)
	case best == 1:
		return "←" + t.label(bi)
	}
	return fmt.Sprintf("←%s (weight %.3g)", t.label(bi), best)
}

// layer1 writes the suffix s_{i,D+1} = (x_i, …, x_{i−D}) that layer 1
// copies into the stream, and where each of its heads attended.
func (t *tracer) layer1(st Stage) {
	h2 := st.H[1]
	var suf []string
	for k := 0; k <= t.D; k++ {
		suf = append(suf, symStr(t.L.Sub(h2, "s", k)))
	}
	fmt.Fprintf(&t.sb, "  layer 1  s_{i,%d} = (x_i, x_{i-1}, …, x_{i-%d}) = (%s)", t.D+1, t.D, strings.Join(suf, ", "))
	var srcs []string
	for m := range t.c.TF.Layers[0].Heads {
		srcs = append(srcs, fmt.Sprintf("m=%d %s", m+1, t.from(st.Att[0][m])))
	}
	fmt.Fprintf(&t.sb, "   [%s]\n", strings.Join(srcs, "; "))
}

// layer2Attention writes, for every depth l, the statistics g and g← that
// layer 2's attention gathers for the path suffix s_{i,l} and, for l ≥ 1,
// g~ and g~← for the shifted context c_{i,l}.
func (t *tracer) layer2Attention(st Stage) {
	L, h2, a2 := t.L, st.H[1], st.U[1]
	fmt.Fprintf(&t.sb, "  layer 2  a^(2) (path suffix s_{i,l} = x_{i-l+1}^i; shifted context c_{i,l} = x_{i-l}^{i-1}):\n")
	for l := 0; l <= t.D; l++ {
		fmt.Fprintf(&t.sb, "    l=%d  s=%-6q g=%s", l, pathStr(L, h2, l, 0), vecStr(L.Sub(a2, "g", l)))
		if l < t.D {
			fmt.Fprintf(&t.sb, " g←=%s", vecStr(L.Sub(a2, "g_back", l)))
		}
		fmt.Fprintf(&t.sb, " (%s)", t.from(st.Att[1][l]))
		if l >= 1 {
			fmt.Fprintf(&t.sb, " | c=%-6q g~=%s", pathStr(L, h2, l, 1), vecStr(L.Sub(a2, "g_ctx", l)))
			if l < t.D {
				fmt.Fprintf(&t.sb, " g~←=%s", vecStr(L.Sub(a2, "g_ctx_back", l)))
			}
		}
		t.sb.WriteString("\n")
	}
}

// layer2FF writes what layer 2's FF recovers for every depth l after j
// symbols: the counts n = j·g·Πg←, the estimates p and the log-probability
// ℓ^e of the suffix's counts (and of the context's, n~ and ℓ^e~).
func (t *tracer) layer2FF(j int, st Stage) {
	L, h2, h3 := t.L, st.H[1], st.H[2]
	fmt.Fprintf(&t.sb, "  layer 2  FF → h^(3): counts recovered as n = %d·g·Πg←:\n", j)
	for l := 0; l <= t.D; l++ {
		fmt.Fprintf(&t.sb, "    l=%d  s=%-6q n=%s p=%s ℓ^e=%.6g", l, pathStr(L, h2, l, 0),
			vecStr(L.Sub(h3, "n", l)), vecStr(L.Sub(h3, "p", l)), L.Get(h3, "le")[l])
		if l == t.D {
			fmt.Fprintf(&t.sb, " ℓ^w=ℓ^e")
		}
		fmt.Fprintf(&t.sb, " | c=%-6q n~=%s ℓ^e~=%.6g\n", pathStr(L, h2, l, 1), vecStr(L.Sub(h3, "n_ctx", l)), L.Get(h3, "le_ctx")[l])
	}
}

// induction writes induction layer k (layer 3+k), which combines the
// children at depth D−k: the ℓ^w each child of the path node s_{i,D−k−1}
// contributes and where it was copied from, the resulting δ_{i,D−k} and
// ℓ^w, and the same for the context node when the layer has its heads.
func (t *tracer) induction(k int, st Stage) {
	L, A, h2 := t.L, t.A, st.H[1]
	li := 2 + k
	dc := t.D - k
	d := dc - 1
	u, out := st.U[li], st.H[li+1]
	fmt.Fprintf(&t.sb, "  layer %d  children at depth %d:\n", li+1, dc)
	var ch []string
	for q := 0; q < A; q++ {
		ch = append(ch, fmt.Sprintf("%d·s: %.6g %s", q, L.Sub(u, "lw_sib", d)[q], t.from(st.Att[li][q])))
	}
	fmt.Fprintf(&t.sb, "    path node s_{i,%d}=%q: ℓ^w of children {%s}\n", d, pathStr(L, h2, d, 0), strings.Join(ch, "; "))
	fmt.Fprintf(&t.sb, "      → δ_{i,%d} = %.6g, ℓ^w_{i,s_%d} = %.6g\n", dc, L.Get(out, "delta")[dc-1], d, L.Get(out, "lw")[d])
	if len(t.c.TF.Layers[li].Heads) > A {
		ch = ch[:0]
		for q := 0; q < A; q++ {
			ch = append(ch, fmt.Sprintf("%d·c: %.6g %s", q, L.Sub(u, "lw_ctx_sib", d)[q], t.from(st.Att[li][A+q])))
		}
		fmt.Fprintf(&t.sb, "    context node c_{i,%d}=%q: ℓ^w~ of children {%s}\n", d, pathStr(L, h2, d, 1), strings.Join(ch, "; "))
		fmt.Fprintf(&t.sb, "      → ℓ^w~_{i,c_%d} = %.6g\n", d, L.Get(out, "lw_ctx")[d])
	}
}

// readOut writes the read-out's weights ω and distribution P at the
// position predicting x_{j+1} beside CTW's, and their largest difference.
func (t *tracer) readOut(j int, st Stage, tr *Trace) {
	hf := st.H[len(st.H)-1]
	t.c.Omega(hf, t.omega)
	t.cs.Weights(t.omegaCTW)
	t.cs.Predict(t.pCTW)
	fmt.Fprintf(&t.sb, "  read-out ω_TF  = %s\n           ω_CTW = %s\n", vecStr(t.omega), vecStr(t.omegaCTW))
	fmt.Fprintf(&t.sb, "           P_TF  = %s\n           P_CTW = %s   max|diff| = %.3g\n", vecStr(tr.Dist[j]), vecStr(t.pCTW), maxDiff([][]float64{tr.Dist[j]}, [][]float64{t.pCTW}))
}

// pathStr renders the path suffix s_{i,l} (shift 0) or the context
// c_{i,l} (shift 1) of a stream, oldest symbol first.
func pathStr(L *Layout, h []float64, l, shift int) string {
	var parts []string
	for k := l - 1 + shift; k >= shift; k-- {
		parts = append(parts, symStr(L.Sub(h, "s", k)))
	}
	if len(parts) == 0 {
		return "()"
	}
	return strings.Join(parts, "")
}

// symbolsStr renders a symbol sequence (digits when A ≤ 10).
func symbolsStr(x []byte, A int) string {
	var sb strings.Builder
	for k, s := range x {
		if A > 10 && k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(int(s)))
	}
	return sb.String()
}
