package construct

import (
	"fmt"
	"strings"
)

// Variant selects the layer-2 features of a synthetic "TF 2-0" model of
// Section 4.5 (Fig. 8): the first two constructed layers, whose output is
// then fed to a trainable FF layer and read-out.
type Variant int

const (
	// TF20 is a^(2)_i of eq. (statistics), Theorem 4:
	// (s_{i,D+1}; g_{i,D+1}; g←_{i−1,D+1}; pos_i) (the last g← part is 0, as
	// in the paper's head m = M').
	TF20 Variant = iota
	// WithoutCounts ("TF 2-0 w/o counts") drops g← and pos: (s; g).
	WithoutCounts
	// TotalCountsOnly ("TF 2-0 total counts only") drops g← and replaces
	// pos_i by the total count, the number of symbols seen: (s; g; i).
	TotalCountsOnly
	// WithAllCounts ("TF 2-0 w/ all counts") replaces g← and pos_i by the
	// counts n_{i,s_{i,l}}, l = 0..D, and i: (s; g; n; i).
	WithAllCounts
)

var variantNames = []string{"TF 2-0", "w/o counts", "total counts only", "w/ all counts"}

// String is the paper's label of the variant.
func (v Variant) String() string {
	if v >= 0 && int(v) < len(variantNames) {
		return variantNames[v]
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// ParseVariant accepts the paper's labels ("TF 2-0", "w/o counts", "total
// counts only", "w/ all counts", case-insensitive, with or without the
// "TF 2-0 " prefix) and the short names tf20, nocounts, total, allcounts.
func ParseVariant(s string) (Variant, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimPrefix(t, "tf 2-0 ")
	switch t {
	case "tf 2-0", "tf20", "tf2-0":
		return TF20, nil
	case "w/o counts", "nocounts":
		return WithoutCounts, nil
	case "total counts only", "total":
		return TotalCountsOnly, nil
	case "w/ all counts", "allcounts":
		return WithAllCounts, nil
	}
	return 0, fmt.Errorf("construct: unknown feature variant %q (want %s)", s, strings.Join(variantNames, ", "))
}

// FeatureNames names the feature columns of a variant, e.g. "s[1][2]"
// (symbol 2 of x_{i−1}), "g[0][1]", "g_back[1][0]", "pos[2]", "n[2][0]",
// "count".
func (c *Construction) FeatureNames(v Variant) []string {
	var out []string
	add := func(name string) {
		b := c.Layout.Block(name)
		for k := 0; k < b.Parts; k++ {
			for j := 0; j < b.Width; j++ {
				if b.Parts == 1 {
					out = append(out, fmt.Sprintf("%s[%d]", name, j))
				} else {
					out = append(out, fmt.Sprintf("%s[%d][%d]", name, k, j))
				}
			}
		}
	}
	add("s")
	add("g")
	switch v {
	case TF20:
		add("g_back")
		add("pos")
	case TotalCountsOnly:
		out = append(out, "count")
	case WithAllCounts:
		add("n")
		out = append(out, "count")
	}
	return out
}

// Features runs the first two constructed layers on x and returns one
// feature row per prediction: row j (j = 0..len(x)−1) is taken at the
// position of x_j (the last padding position for j = 0) and feeds the
// prediction of x_{j+1}, the same row convention as
// predict.SequencePredictor. The features are a^(2) (after the attention
// and its residual, before the FF) restricted to the blocks of the
// variant; the counts of WithAllCounts are those recovered by layer 2's FF
// (eq. before h^(3)), and the total count is j. With finite c the
// statistics are the soft-attention ones.
func (c *Construction) Features(x []byte, v Variant) ([][]float64, error) {
	if v < TF20 || v > WithAllCounts {
		return nil, fmt.Errorf("construct: unknown feature variant %d", v)
	}
	D := c.Config.D
	if np := c.Positions(x); np > c.Config.N {
		return nil, fmt.Errorf("construct: %d positions exceed the positional period N=%d", np, c.Config.N)
	}
	for i, s := range x {
		if int(s) >= c.Config.A {
			return nil, fmt.Errorf("construct: symbol %d at position %d outside 0..%d", s, i, c.Config.A-1)
		}
	}
	two := &Transformer{E: c.TF.E, Layers: c.TF.Layers[:2], Hard: c.TF.Hard}
	r := two.NewRunner(false)
	h := make([]float64, c.Layout.E)
	L := c.Layout
	var rows [][]float64
	for i := 0; i < D+len(x); i++ {
		var sym byte
		if i > D {
			sym = x[i-D-1]
		}
		c.Embed(i, sym, i >= 1 && i <= D, h)
		st := r.Append(h)
		if i < D {
			continue
		}
		a2, h3 := st.U[1], st.H[2]
		row := append([]float64(nil), L.Get(a2, "s")...)
		row = append(row, L.Get(a2, "g")...)
		count := float64(i - D)
		switch v {
		case TF20:
			row = append(row, L.Get(a2, "g_back")...)
			row = append(row, L.Get(a2, "pos")...)
		case TotalCountsOnly:
			row = append(row, count)
		case WithAllCounts:
			row = append(row, L.Get(h3, "n")...)
			row = append(row, count)
		}
		rows = append(rows, row)
	}
	return rows, nil
}
