package synth

import (
	"fmt"
	"math"
	"strings"

	"github.com/vomc/vomc/construct"
	"github.com/vomc/vomc/internal/opterr"
)

// Variant is one of the four feature sets of Fig. 8; the values and labels
// are construct's (TF20, WithoutCounts, TotalCountsOnly, WithAllCounts).
type Variant = construct.Variant

// The four variants, re-exported from package construct.
const (
	TF20            = construct.TF20
	WithoutCounts   = construct.WithoutCounts
	TotalCountsOnly = construct.TotalCountsOnly
	WithAllCounts   = construct.WithAllCounts
)

// ParseVariant accepts the CLI's short names tf20, nocounts, totalcounts,
// allcounts and everything construct.ParseVariant accepts (the paper's
// labels, "total").
func ParseVariant(s string) (Variant, error) {
	if strings.EqualFold(strings.TrimSpace(s), "totalcounts") {
		return TotalCountsOnly, nil
	}
	v, err := construct.ParseVariant(s)
	if err != nil {
		return 0, opterr.Unknown("synth", "variant", s, []string{"tf20", "nocounts", "totalcounts", "allcounts"})
	}
	return v, nil
}

// ShortName is the CLI name of a variant: tf20, nocounts, totalcounts or
// allcounts.
func ShortName(v Variant) string {
	switch v {
	case TF20:
		return "tf20"
	case WithoutCounts:
		return "nocounts"
	case TotalCountsOnly:
		return "totalcounts"
	case WithAllCounts:
		return "allcounts"
	}
	return fmt.Sprintf("variant%d", int(v))
}

// Label is the paper's legend of a variant's model: "TF 2-0",
// "TF 2-0 w/o counts", "TF 2-0 total counts only", "TF 2-0 w/ all counts".
func Label(v Variant) string {
	if v == TF20 {
		return "TF 2-0"
	}
	return "TF 2-0 " + v.String()
}

// Encodings of the position and the counts (Config.Encoding,
// Extractor.Enc). They decide how TF 2-0 sees its position and how every
// variant sees its counts, so that the variants can be compared with the
// same representation of the quantities "position" and "count":
//
//   - Paper (the default, "" = Paper): TF 2-0 gets the construction's
//     pos_i = (1, cos(iπ/N), sin(iπ/N)) (i = D + j the transformer
//     position, N = PosN) and has to decode i from the angle; the counts
//     of the other variants enter as Config.CountNorm says (ln(1+c) by
//     default). This is the setting of the paper's construction.
//   - Log: TF 2-0's (cos, sin) are replaced by one column ln(1 + j), pos =
//     (1, ln(1+j)), where j = i − D is the number of symbols seen — exactly
//     the total count of "total counts only" and "w/ all counts"; every
//     count c enters as ln(1 + c) (CountNorm must be Log1p). The
//     construction's n_{s_l} = j·g·Π g← becomes, for j ≫ 1, a sum
//     ln j + ln g + Σ ln g← — the same input scale as the variants that
//     are given ln(1 + n_{s_l}).
//   - Linear: pos = (1, j/Context) and every count c enters as c/Context
//     (CountNorm must be Scale).
//
// Under Log the features of nocounts, totalcounts and allcounts equal
// Paper's (with CountNorm log1p); under Linear they equal Paper's with
// CountNorm scale: only TF 2-0's position changes.
const (
	Paper  = "paper"
	Log    = "log"
	Linear = "linear"
)

// ParseEncoding checks an encoding name; "" is Paper.
func ParseEncoding(s string) (string, error) {
	switch s {
	case "", Paper:
		return Paper, nil
	case Log, Linear:
		return s, nil
	}
	return "", opterr.Unknown("synth", "encoding", s, []string{Paper, Log, Linear})
}

// posCols is the width of TF 2-0's position block under enc: 3 for Paper
// (1, cos, sin), 2 otherwise (1, j).
func posCols(enc string) int {
	if enc == Paper || enc == "" {
		return 3
	}
	return 2
}

// Dim is the number of features of a variant for alphabet size A and depth
// D under the Paper encoding: (D+1)·A each for s and g, plus (D+1)·A + 3
// (g←, pos) for TF20, 1 (the total count) for TotalCountsOnly, (D+1)·A + 1
// (the path counts and the total) for WithAllCounts.
func Dim(A, D int, v Variant) int { return DimEnc(A, D, v, Paper) }

// DimEnc is Dim under encoding enc: TF20 has (D+1)·A + 2 columns after s
// and g under Log and Linear (g←, 1, j); the other variants do not depend
// on the encoding.
func DimEnc(A, D int, v Variant, enc string) int {
	base := 2 * (D + 1) * A
	switch v {
	case TF20:
		return base + (D+1)*A + posCols(enc)
	case TotalCountsOnly:
		return base + 1
	case WithAllCounts:
		return base + (D+1)*A + 1
	}
	return base
}

// CountColumns returns the first and one-past-last columns holding counts
// (the n_{s_l} block and/or the total count), which grow with the position
// and are normalised before they enter the model; lo = hi for TF20 and
// WithoutCounts (Paper encoding).
func CountColumns(A, D int, v Variant) (lo, hi int) { return CountColumnsEnc(A, D, v, Paper) }

// CountColumnsEnc is CountColumns under encoding enc: under Log and Linear
// TF20's position column j (the last one) is a count too and is normalised
// like the counts of the other variants.
func CountColumnsEnc(A, D int, v Variant, enc string) (lo, hi int) {
	base := 2 * (D + 1) * A
	switch v {
	case TotalCountsOnly, WithAllCounts:
		return base, Dim(A, D, v)
	case TF20:
		if posCols(enc) == 2 {
			n := DimEnc(A, D, v, enc)
			return n - 1, n
		}
	}
	return 0, 0
}

// maxTable bounds A^(D+1), the size of the densest count table.
const maxTable = 1 << 22

// Extractor computes the layer-2 features of the construction (package
// construct, hard-attention limit) directly, by counting: it reads a
// sequence x_1, x_2, … one symbol at a time (Push) and gives the feature
// row of the current position (Row) in O(D·A) for every path suffix that
// has occurred before (an unseen suffix costs a scan over the contexts seen
// at its length). The rows equal construct.Construction.Features to
// rounding (≈1e-15), with the construction's conventions:
//
//   - row j (after x_1..x_j; j = 0 is the last padding position) is
//     a^(2) at transformer position i = D+j and feeds the prediction of
//     x_{j+1};
//   - the dummy context x_{1−D}^0 = 0 (symbols before x_1 are 0);
//   - s = (x_j, …, x_{j−D}) one-hot; g_l (l = 0..D) is the empirical
//     distribution of the symbols x_u (u ≤ j) whose context x_{u−l}^{u−1}
//     equals the path suffix x_{j−l+1}^j, g←_l (l < D) that of x_{u−l−1};
//     g←_D = 0;
//   - an unseen suffix gets what the hard attention returns: the average
//     over the positions u whose context agrees with the suffix in the most
//     symbols (the paper's "initialised arbitrarily");
//   - row 0 (only padding seen) averages over the padding positions (and,
//     for l = 0, the BOS sink, whose value is 0);
//   - pos_i = (1, cos(iπ/N), sin(iπ/N)) with N = PosN under the Paper
//     encoding (Enc = "" or Paper), (1, j) — raw, normalised like a count
//     by the model — under Log and Linear;
//   - the counts of WithAllCounts are n_{j,s_l} (0 for an unseen suffix) and
//     the total count is j.
//
// An Extractor is not safe for concurrent use; make one per goroutine.
type Extractor struct {
	A, D, PosN int
	V          Variant
	// Enc is the encoding (Paper, Log, Linear; "" = Paper); it changes
	// TF20's position block only. Set by NewExtractorEnc.
	Enc string

	pow        []int     // A^l, l = 0..D+1
	cnt, back  [][]int32 // [l][key·A + symbol]
	tot        [][]int32 // [l][key]
	seen       [][]int32 // [l]: keys with tot > 0, in order of first occurrence
	hist       []byte    // x_1..x_j
	sumC, sumB []float64 // scratch (length A)
}

// NewExtractor returns an extractor for alphabet size A (2..256), depth D
// ≥ 1 and positional period posN (it must exceed D + the longest sequence's
// length, as the construction's N). A^(D+1) is limited to 2^22.
func NewExtractor(A, D, posN int, v Variant) (*Extractor, error) {
	return NewExtractorEnc(A, D, posN, v, Paper)
}

// NewExtractorEnc is NewExtractor with the position block of encoding enc
// (see Paper, Log, Linear).
func NewExtractorEnc(A, D, posN int, v Variant, enc string) (*Extractor, error) {
	enc, err := ParseEncoding(enc)
	if err != nil {
		return nil, err
	}
	if A < 2 || A > 256 {
		return nil, fmt.Errorf("synth: alphabet size %d outside 2..256", A)
	}
	if D < 1 || D > 16 {
		return nil, fmt.Errorf("synth: depth D=%d outside 1..16", D)
	}
	if v < TF20 || v > WithAllCounts {
		return nil, fmt.Errorf("synth: unknown variant %d", int(v))
	}
	if posN < D+2 {
		return nil, fmt.Errorf("synth: positional period N=%d must be at least D+2=%d", posN, D+2)
	}
	e := &Extractor{A: A, D: D, PosN: posN, V: v, Enc: enc, sumC: make([]float64, A), sumB: make([]float64, A)}
	p := 1
	for l := 0; l <= D+1; l++ {
		e.pow = append(e.pow, p)
		if l <= D {
			if p > maxTable/A {
				return nil, fmt.Errorf("synth: A^(D+1) = %d^%d exceeds the count-table limit %d", A, D+1, maxTable)
			}
			p *= A
		}
	}
	for l := 0; l <= D; l++ {
		e.cnt = append(e.cnt, make([]int32, e.pow[l]*A))
		e.back = append(e.back, make([]int32, e.pow[l]*A))
		e.tot = append(e.tot, make([]int32, e.pow[l]))
		e.seen = append(e.seen, nil)
	}
	return e, nil
}

// Dim is the number of features per row.
func (e *Extractor) Dim() int { return DimEnc(e.A, e.D, e.V, e.Enc) }

// Len is j, the number of symbols pushed since the last Reset.
func (e *Extractor) Len() int { return len(e.hist) }

// Reset empties the history (cost proportional to the contexts seen).
func (e *Extractor) Reset() {
	A := e.A
	for l := 0; l <= e.D; l++ {
		for _, k := range e.seen[l] {
			clear(e.cnt[l][int(k)*A : int(k)*A+A])
			clear(e.back[l][int(k)*A : int(k)*A+A])
			e.tot[l][k] = 0
		}
		e.seen[l] = e.seen[l][:0]
	}
	e.hist = e.hist[:0]
}

// sym is x_k (1-based), 0 for k ≤ 0 (the dummy context).
func (e *Extractor) sym(k int) int {
	if k < 1 {
		return 0
	}
	return int(e.hist[k-1])
}

// Push appends x_{j+1} = s (s < A; not checked) and counts it under each of
// its contexts x_{j+1−l}^{j}, l = 0..D.
func (e *Extractor) Push(s byte) {
	e.hist = append(e.hist, s)
	j, A := len(e.hist), e.A
	key := 0
	for l := 0; l <= e.D; l++ {
		if l > 0 {
			key += e.sym(j-l) * e.pow[l-1]
		}
		if e.tot[l][key] == 0 {
			e.seen[l] = append(e.seen[l], int32(key))
		}
		e.tot[l][key]++
		e.cnt[l][key*A+int(s)]++
		if l < e.D {
			e.back[l][key*A+e.sym(j-l-1)]++
		}
	}
}

// Row writes the feature row of the current position j = Len() into dst
// (length Dim()); see Extractor for its contents.
func (e *Extractor) Row(dst []float64) {
	A, D := e.A, e.D
	j := len(e.hist)
	dst = dst[:e.Dim()]
	clear(dst)
	stride := (D + 1) * A
	s, g := dst[:stride], dst[stride:2*stride]
	var gb, n []float64
	switch e.V {
	case TF20:
		gb = dst[2*stride : 3*stride]
	case WithAllCounts:
		n = dst[2*stride : 3*stride]
	}
	for k := 0; k <= D; k++ {
		s[k*A+e.sym(j-k)] = 1
	}
	q := 0
	for l := 0; l <= D; l++ {
		if l > 0 {
			q += e.sym(j-l+1) * e.pow[l-1]
		}
		gl := g[l*A : l*A+A]
		var gbl []float64
		if gb != nil && l < D {
			gbl = gb[l*A : l*A+A]
		}
		if j == 0 {
			// Only padding (symbol 0) and the BOS sink are visible; the
			// statistics heads' penalty row is the same for all of them, so
			// the arg-max is the padding positions, whose copied symbols
			// are all 0 — plus, for l = 0 (no symbol to match), the BOS
			// sink with value 0.
			w := 1.0
			if l == 0 {
				w = float64(D) / float64(D+1)
			}
			gl[0] = w
			if gbl != nil {
				gbl[0] = w
			}
			continue
		}
		if t := e.tot[l][q]; t > 0 {
			inv := 1 / float64(t)
			c := e.cnt[l][q*A : q*A+A]
			b := e.back[l][q*A : q*A+A]
			for a := 0; a < A; a++ {
				gl[a] = float64(c[a]) * inv
				if gbl != nil {
					gbl[a] = float64(b[a]) * inv
				}
				if n != nil {
					n[l*A+a] = float64(c[a])
				}
			}
			continue
		}
		e.partial(l, q, gl, gbl)
	}
	switch e.V {
	case TF20:
		p := dst[3*stride:]
		if posCols(e.Enc) == 2 {
			p[0], p[1] = 1, float64(j)
			break
		}
		th := float64(D+j) * math.Pi / float64(e.PosN)
		p[0], p[1], p[2] = 1, math.Cos(th), math.Sin(th)
	case TotalCountsOnly:
		dst[2*stride] = float64(j)
	case WithAllCounts:
		dst[3*stride] = float64(j)
	}
}

// Counts writes n_{j,s_l}(a), a = 0..A−1, into dst (length A): how often
// the path suffix s_l = x_{j−l+1}^j of the current position j = Len()
// (symbols before x_1 are 0) has been followed by a among x_1..x_j — the
// counts block of WithAllCounts's Row for l (0 for an unseen suffix), in
// O(l + A), whatever the variant.
func (e *Extractor) Counts(l int, dst []float64) {
	A, j, q := e.A, len(e.hist), 0
	for k := 1; k <= l; k++ {
		q += e.sym(j-k+1) * e.pow[k-1]
	}
	for a, c := range e.cnt[l][q*A : q*A+A] {
		dst[a] = float64(c)
	}
}

// partial fills g_l (and g←_l) for a suffix (key q) that has not occurred
// as a context: the hard attention averages over every position whose
// context agrees with q in the largest number of the l symbols.
func (e *Extractor) partial(l, q int, gl, gbl []float64) {
	A := e.A
	best, total := -1, 0
	clear(e.sumC)
	clear(e.sumB)
	for _, k32 := range e.seen[l] {
		k := int(k32)
		agree := 0
		for a, b, d := k, q, 0; d < l; d++ {
			if a%A == b%A {
				agree++
			}
			a /= A
			b /= A
		}
		if agree < best {
			continue
		}
		if agree > best {
			best, total = agree, 0
			clear(e.sumC)
			clear(e.sumB)
		}
		total += int(e.tot[l][k])
		for a := 0; a < A; a++ {
			e.sumC[a] += float64(e.cnt[l][k*A+a])
			e.sumB[a] += float64(e.back[l][k*A+a])
		}
	}
	inv := 1 / float64(total)
	for a := 0; a < A; a++ {
		gl[a] = e.sumC[a] * inv
		if gbl != nil {
			gbl[a] = e.sumB[a] * inv
		}
	}
}

// Features returns the rows j = 0..len(x)−1 for x (symbols < A), the same
// rows as construct.Construction.Features in the hard-attention limit.
func (e *Extractor) Features(x []byte) ([][]float64, error) {
	for i, s := range x {
		if int(s) >= e.A {
			return nil, fmt.Errorf("synth: symbol %d at position %d outside 0..%d", s, i, e.A-1)
		}
	}
	if len(x)+e.D >= e.PosN {
		return nil, fmt.Errorf("synth: %d symbols need a positional period N > %d (have %d)", len(x), len(x)+e.D, e.PosN)
	}
	e.Reset()
	rows := make([][]float64, len(x))
	for j := range x {
		rows[j] = make([]float64, e.Dim())
		e.Row(rows[j])
		e.Push(x[j])
	}
	return rows, nil
}
