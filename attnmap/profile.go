package attnmap

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
)

var nan = math.NaN()

// Profile is the attention of every head broken down by query position,
// averaged over windows: where in the window a head does what its label
// says, and where it does not (e.g. a relative-position head that loses its
// offset at a few positions because of the learned positional embedding).
//
// For head (l, h) and query position i (0-based):
//
//	Rel[l][h][i][d]        = mean over windows of a_i(i−d), d = 0..MaxK
//	                         (NaN for d > i: no such key);
//	Suffix[o][l][h][i][k]  = mean over windows with S_i ≠ ∅ of
//	                         Σ_{j∈S_i} a_i(j) for the suffix matches S_i of
//	                         length k at offset o = 0, 1 (SuffixMatches),
//	                         k = 0..MaxK (NaN when no window has a match);
//	Matched[o][i][k]       = the number of windows with S_i ≠ ∅.
//
// Masses are fractions of the query's attention (each row sums to 1).
type Profile struct {
	T, MaxK, Windows int
	Rel              [][][][]float64
	Suffix           [2][][][][]float64
	Matched          [2][][]int
}

// PositionProfile computes the Profile of the windows xs (all of length T;
// mapsOf(w) returns window w's maps, maps[l][h] a T×T row-major matrix
// whose row i is query position i) for hypotheses up to maxK.
func PositionProfile(xs [][]byte, mapsOf func(w int) ([][][]float32, error), maxK int) (*Profile, error) {
	if len(xs) == 0 {
		return nil, fmt.Errorf("attnmap: no windows")
	}
	if maxK < 0 {
		return nil, fmt.Errorf("attnmap: maxK %d < 0", maxK)
	}
	T := len(xs[0])
	p := &Profile{T: T, MaxK: maxK, Windows: len(xs)}
	for o := range 2 {
		p.Matched[o] = make([][]int, T)
		for i := range T {
			p.Matched[o][i] = make([]int, maxK+1)
		}
	}
	for w, x := range xs {
		if len(x) != T {
			return nil, fmt.Errorf("attnmap: window %d has %d symbols, window 0 %d", w, len(x), T)
		}
		maps, err := mapsOf(w)
		if err != nil {
			return nil, err
		}
		if p.Rel == nil {
			p.allocate(maps)
		}
		if err := p.check(w, maps); err != nil {
			return nil, err
		}
		p.add(x, maps)
	}
	p.average()
	return p, nil
}

// allocate makes the profile's sums for the heads of maps (maps[l][h]),
// zero.
func (p *Profile) allocate(maps [][][]float32) {
	T, maxK := p.T, p.MaxK
	p.Rel = make([][][][]float64, len(maps))
	for o := range 2 {
		p.Suffix[o] = make([][][][]float64, len(maps))
	}
	for l := range maps {
		p.Rel[l] = make([][][]float64, len(maps[l]))
		for o := range 2 {
			p.Suffix[o][l] = make([][][]float64, len(maps[l]))
		}
		for h := range maps[l] {
			p.Rel[l][h] = grid(T, maxK+1)
			for o := range 2 {
				p.Suffix[o][l][h] = grid(T, maxK+1)
			}
		}
	}
}

// check reports maps of window w that do not match the profile's heads
// (those of window 0) or are not T×T.
func (p *Profile) check(w int, maps [][][]float32) error {
	T := p.T
	if len(maps) != len(p.Rel) {
		return fmt.Errorf("attnmap: window %d has %d layers of maps, window 0 %d", w, len(maps), len(p.Rel))
	}
	for l := range maps {
		if len(maps[l]) != len(p.Rel[l]) {
			return fmt.Errorf("attnmap: window %d layer %d has %d heads, window 0 %d", w, l+1, len(maps[l]), len(p.Rel[l]))
		}
		for h, a := range maps[l] {
			if len(a) != T*T {
				return fmt.Errorf("attnmap: window %d layer %d head %d: map of %d values, want %d", w, l+1, h+1, len(a), T*T)
			}
		}
	}
	return nil
}

// add adds window x's attention to the sums: at every query i, the
// weight a_i(i−d) for d = 0..min(MaxK, i) and the mass Σ_{j∈S_i} a_i(j) of
// every suffix-match set, counting the windows whose set is not empty.
func (p *Profile) add(x []byte, maps [][][]float32) {
	T, maxK := p.T, p.MaxK
	for i := range T {
		var sets [2][][]int
		for o := range 2 {
			for k := 0; k <= maxK; k++ {
				s := SuffixMatches(x, i, k, o)
				sets[o] = append(sets[o], s)
				if len(s) > 0 {
					p.Matched[o][i][k]++
				}
			}
		}
		for l := range maps {
			for h, a := range maps[l] {
				row := a[i*T : (i+1)*T]
				for d := 0; d <= min(maxK, i); d++ {
					p.Rel[l][h][i][d] += float64(row[i-d])
				}
				for o := range 2 {
					for k, s := range sets[o] {
						for _, j := range s {
							p.Suffix[o][l][h][i][k] += float64(row[j])
						}
					}
				}
			}
		}
	}
}

// average turns the sums into means: Rel over the windows (NaN for d > i,
// no such key), Suffix over the windows with a match (NaN for none).
func (p *Profile) average() {
	W := float64(p.Windows)
	for l := range p.Rel {
		for h := range p.Rel[l] {
			for i := range p.T {
				for d := 0; d <= p.MaxK; d++ {
					if d > i {
						p.Rel[l][h][i][d] = nan
					} else {
						p.Rel[l][h][i][d] /= W
					}
					for o := range 2 {
						if n := p.Matched[o][i][d]; n > 0 {
							p.Suffix[o][l][h][i][d] /= float64(n)
						} else {
							p.Suffix[o][l][h][i][d] = nan
						}
					}
				}
			}
		}
	}
}

// Series is the mass of head (layer, head) (1-based) on the positions of
// hypothesis s, by query position: Rel for a relative position, Suffix
// for a suffix match; nil for a head or hypothesis outside the profile.
func (p *Profile) Series(layer, head int, s Score) []float64 {
	l, h := layer-1, head-1
	if l < 0 || l >= len(p.Rel) || h < 0 || h >= len(p.Rel[l]) {
		return nil
	}
	out := make([]float64, p.T)
	for i := range p.T {
		switch {
		case s.Kind == Relative && s.D >= 0 && s.D <= p.MaxK:
			out[i] = p.Rel[l][h][i][s.D]
		case s.Kind == SuffixMatch && s.K >= 0 && s.K <= p.MaxK && (s.Offset == 0 || s.Offset == 1):
			out[i] = p.Suffix[s.Offset][l][h][i][s.K]
		default:
			return nil
		}
	}
	return out
}

// labelled is a labelled head with its label's Series.
type labelled struct {
	head   HeadScore
	series []float64
}

// labelledSeries returns the labelled heads of scores that the profile
// covers, each with the Series of its label.
func (p *Profile) labelledSeries(scores []HeadScore) []labelled {
	var out []labelled
	for _, hs := range scores {
		if !hs.Labelled {
			continue
		}
		if ser := p.Series(hs.Layer, hs.Head, hs.Best); ser != nil {
			out = append(out, labelled{hs, ser})
		}
	}
	return out
}

// Drop is a labelled head whose mass on its label's positions falls, in
// some part of the window, far below what it reaches elsewhere.
type Drop struct {
	Layer, Head int
	Label       Score
	// Best and Worst are the highest and lowest mean mass over the Parts
	// equal parts of the queries ≥ MaxK; WorstFrom..WorstTo are the
	// worst part's positions (0-based, inclusive).
	Best, Worst        float64
	WorstFrom, WorstTo int
}

// Drops lists the labelled heads of scores whose label mass, averaged over
// each of parts equal parts of the query positions i ≥ MaxK, falls below
// half of its best part's: heads that do their job in one part of the
// window only (e.g. a previous-token head that fails late in the window).
func (p *Profile) Drops(scores []HeadScore, parts int) []Drop {
	var out []Drop
	q0 := min(p.MaxK, p.T-1)
	n := p.T - q0
	if parts < 1 || n < parts {
		return nil
	}
	for _, ls := range p.labelledSeries(scores) {
		hs, ser := ls.head, ls.series
		d := Drop{Layer: hs.Layer, Head: hs.Head, Label: hs.Best, Best: math.Inf(-1), Worst: math.Inf(1)}
		for k := range parts {
			a, b := q0+k*n/parts, q0+(k+1)*n/parts-1
			sum, cnt := 0.0, 0
			for _, v := range ser[a : b+1] {
				if !math.IsNaN(v) {
					sum += v
					cnt++
				}
			}
			if cnt == 0 {
				continue
			}
			m := sum / float64(cnt)
			d.Best = max(d.Best, m)
			if m < d.Worst {
				d.Worst, d.WorstFrom, d.WorstTo = m, a, b
			}
		}
		if d.Worst < d.Best/2 {
			out = append(out, d)
		}
	}
	return out
}

func grid(n, m int) [][]float64 {
	g := make([][]float64, n)
	for i := range g {
		g[i] = make([]float64, m)
	}
	return g
}

// WriteCSV writes the profile as CSV with a header: one row per layer,
// head (1-based) and query position (0-based), with rel_d (d = 0..MaxK),
// suffix0_k and suffix1_k (k = 0..MaxK, offsets 0 and 1) and matched0_k,
// matched1_k columns; NaN is written as an empty field.
func (p *Profile) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("layer,head,position")
	for d := 0; d <= p.MaxK; d++ {
		fmt.Fprintf(bw, ",rel_%d", d)
	}
	for o := range 2 {
		for k := 0; k <= p.MaxK; k++ {
			fmt.Fprintf(bw, ",suffix%d_%d", o, k)
		}
	}
	for o := range 2 {
		for k := 0; k <= p.MaxK; k++ {
			fmt.Fprintf(bw, ",matched%d_%d", o, k)
		}
	}
	bw.WriteByte('\n')
	num := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	for l := range p.Rel {
		for h := range p.Rel[l] {
			for i := range p.T {
				fmt.Fprintf(bw, "%d,%d,%d", l+1, h+1, i)
				for _, v := range p.Rel[l][h][i] {
					bw.WriteString("," + num(v))
				}
				for o := range 2 {
					for _, v := range p.Suffix[o][l][h][i] {
						bw.WriteString("," + num(v))
					}
				}
				for o := range 2 {
					for _, n := range p.Matched[o][i] {
						fmt.Fprintf(bw, ",%d", n)
					}
				}
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}
