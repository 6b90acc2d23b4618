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
	A, D, L := cfg.A, cfg.D, c.Layout
	cp, err := ctw.New(cfg.CTWConfig())
	if err != nil {
		return err
	}
	cs := cp.NewCTWState()
	omegaCTW := make([]float64, D+1)
	pCTW := make([]float64, A)
	omega := make([]float64, D+1)
	label := func(i int) string {
		if i == 0 {
			return "BOS"
		}
		if i <= D {
			return fmt.Sprintf("x_{%d}", i-D)
		}
		return fmt.Sprintf("x_%d", i-D)
	}
	// from describes where a head attended: the arg-max position, its
	// weight, and how many positions tie with it.
	from := func(att []float64) string {
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
			return "←" + label(bi)
		}
		return fmt.Sprintf("←%s (weight %.3g)", label(bi), best)
	}
	var sb strings.Builder
	for i := D; i < len(tr.Stages); i++ {
		j := i - D
		st := tr.Stages[i]
		h2, a2, h3 := st.H[1], st.U[1], st.H[2]
		hist := "the dummy context 0^D"
		if j > 0 {
			hist = "x_1^" + strconv.Itoa(j) + " = " + symbolsStr(x[:j], A)
		}
		fmt.Fprintf(&sb, "\n── position %d (%s), history %s → P(x_%d | ·) ──\n", i, label(i), hist, j+1)
		// Layer 1.
		var suf []string
		for k := 0; k <= D; k++ {
			suf = append(suf, symStr(L.Sub(h2, "s", k)))
		}
		fmt.Fprintf(&sb, "  layer 1  s_{i,%d} = (x_i, x_{i-1}, …, x_{i-%d}) = (%s)", D+1, D, strings.Join(suf, ", "))
		var srcs []string
		for m := range c.TF.Layers[0].Heads {
			srcs = append(srcs, fmt.Sprintf("m=%d %s", m+1, from(st.Att[0][m])))
		}
		fmt.Fprintf(&sb, "   [%s]\n", strings.Join(srcs, "; "))
		// Layer 2 attention.
		fmt.Fprintf(&sb, "  layer 2  a^(2) (path suffix s_{i,l} = x_{i-l+1}^i; shifted context c_{i,l} = x_{i-l}^{i-1}):\n")
		for l := 0; l <= D; l++ {
			fmt.Fprintf(&sb, "    l=%d  s=%-6q g=%s", l, pathStr(L, h2, l, 0), vecStr(L.Sub(a2, "g", l)))
			if l < D {
				fmt.Fprintf(&sb, " g←=%s", vecStr(L.Sub(a2, "g_back", l)))
			}
			fmt.Fprintf(&sb, " (%s)", from(st.Att[1][l]))
			if l >= 1 {
				fmt.Fprintf(&sb, " | c=%-6q g~=%s", pathStr(L, h2, l, 1), vecStr(L.Sub(a2, "g_ctx", l)))
				if l < D {
					fmt.Fprintf(&sb, " g~←=%s", vecStr(L.Sub(a2, "g_ctx_back", l)))
				}
			}
			sb.WriteString("\n")
		}
		// Layer 2 FF.
		fmt.Fprintf(&sb, "  layer 2  FF → h^(3): counts recovered as n = %d·g·Πg←:\n", j)
		for l := 0; l <= D; l++ {
			fmt.Fprintf(&sb, "    l=%d  s=%-6q n=%s p=%s ℓ^e=%.6g", l, pathStr(L, h2, l, 0),
				vecStr(L.Sub(h3, "n", l)), vecStr(L.Sub(h3, "p", l)), L.Get(h3, "le")[l])
			if l == D {
				fmt.Fprintf(&sb, " ℓ^w=ℓ^e")
			}
			fmt.Fprintf(&sb, " | c=%-6q n~=%s ℓ^e~=%.6g\n", pathStr(L, h2, l, 1), vecStr(L.Sub(h3, "n_ctx", l)), L.Get(h3, "le_ctx")[l])
		}
		// Induction layers.
		for k := 0; k < D; k++ {
			li := 2 + k
			dc := D - k
			d := dc - 1
			u, out := st.U[li], st.H[li+1]
			fmt.Fprintf(&sb, "  layer %d  children at depth %d:\n", li+1, dc)
			var ch []string
			for q := 0; q < A; q++ {
				ch = append(ch, fmt.Sprintf("%d·s: %.6g %s", q, L.Sub(u, "lw_sib", d)[q], from(st.Att[li][q])))
			}
			fmt.Fprintf(&sb, "    path node s_{i,%d}=%q: ℓ^w of children {%s}\n", d, pathStr(L, h2, d, 0), strings.Join(ch, "; "))
			fmt.Fprintf(&sb, "      → δ_{i,%d} = %.6g, ℓ^w_{i,s_%d} = %.6g\n", dc, L.Get(out, "delta")[dc-1], d, L.Get(out, "lw")[d])
			if len(c.TF.Layers[li].Heads) > A {
				ch = ch[:0]
				for q := 0; q < A; q++ {
					ch = append(ch, fmt.Sprintf("%d·c: %.6g %s", q, L.Sub(u, "lw_ctx_sib", d)[q], from(st.Att[li][A+q])))
				}
				fmt.Fprintf(&sb, "    context node c_{i,%d}=%q: ℓ^w~ of children {%s}\n", d, pathStr(L, h2, d, 1), strings.Join(ch, "; "))
				fmt.Fprintf(&sb, "      → ℓ^w~_{i,c_%d} = %.6g\n", d, L.Get(out, "lw_ctx")[d])
			}
		}
		// Read-out vs CTW.
		hf := st.H[len(st.H)-1]
		c.Omega(hf, omega)
		cs.Weights(omegaCTW)
		cs.Predict(pCTW)
		fmt.Fprintf(&sb, "  read-out ω_TF  = %s\n           ω_CTW = %s\n", vecStr(omega), vecStr(omegaCTW))
		fmt.Fprintf(&sb, "           P_TF  = %s\n           P_CTW = %s   max|diff| = %.3g\n", vecStr(tr.Dist[j]), vecStr(pCTW), maxDiff([][]float64{tr.Dist[j]}, [][]float64{pCTW}))
		if j < len(x) {
			cs.Observe(x[j])
		}
	}
	_, err = io.WriteString(w, sb.String())
	return err
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
