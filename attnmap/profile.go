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
//	Rel[l][h][i][d]    = mean over windows of a_i(i−d), d = 0..MaxK
//	                     (NaN for d > i: no such key);
//	Suffix[l][h][i][k] = mean over windows with S_i ≠ ∅ of Σ_{j∈S_i} a_i(j)
//	                     for the suffix matches S_i of length k, offset 1
//	                     (SuffixMatches), k = 0..MaxK (NaN when no window
//	                     has a match);
//	Matched[i][k]      = the number of windows with S_i ≠ ∅.
//
// Masses are fractions of the query's attention (each row sums to 1).
type Profile struct {
	T, MaxK, Windows int
	Rel              [][][][]float64
	Suffix           [][][][]float64
	Matched          [][]int
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
	p.Matched = make([][]int, T)
	for i := range p.Matched {
		p.Matched[i] = make([]int, maxK+1)
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
			p.Rel = make([][][][]float64, len(maps))
			p.Suffix = make([][][][]float64, len(maps))
			for l := range maps {
				p.Rel[l] = make([][][]float64, len(maps[l]))
				p.Suffix[l] = make([][][]float64, len(maps[l]))
				for h := range maps[l] {
					p.Rel[l][h] = grid(T, maxK+1)
					p.Suffix[l][h] = grid(T, maxK+1)
				}
			}
		} else if len(maps) != len(p.Rel) {
			return nil, fmt.Errorf("attnmap: window %d has %d layers of maps, window 0 %d", w, len(maps), len(p.Rel))
		}
		for l := range maps {
			if len(maps[l]) != len(p.Rel[l]) {
				return nil, fmt.Errorf("attnmap: window %d layer %d has %d heads, window 0 %d", w, l+1, len(maps[l]), len(p.Rel[l]))
			}
			for h, a := range maps[l] {
				if len(a) != T*T {
					return nil, fmt.Errorf("attnmap: window %d layer %d head %d: map of %d values, want %d", w, l+1, h+1, len(a), T*T)
				}
			}
		}
		for i := range T {
			var sets [][]int
			for k := 0; k <= maxK; k++ {
				s := SuffixMatches(x, i, k, 1)
				sets = append(sets, s)
				if len(s) > 0 {
					p.Matched[i][k]++
				}
			}
			for l := range maps {
				for h, a := range maps[l] {
					row := a[i*T : (i+1)*T]
					for d := 0; d <= min(maxK, i); d++ {
						p.Rel[l][h][i][d] += float64(row[i-d])
					}
					for k, s := range sets {
						for _, j := range s {
							p.Suffix[l][h][i][k] += float64(row[j])
						}
					}
				}
			}
		}
	}
	W := float64(len(xs))
	for l := range p.Rel {
		for h := range p.Rel[l] {
			for i := range T {
				for d := 0; d <= maxK; d++ {
					if d > i {
						p.Rel[l][h][i][d] = nan
					} else {
						p.Rel[l][h][i][d] /= W
					}
					if n := p.Matched[i][d]; n > 0 {
						p.Suffix[l][h][i][d] /= float64(n)
					} else {
						p.Suffix[l][h][i][d] = nan
					}
				}
			}
		}
	}
	return p, nil
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
// suffix_k (k = 0..MaxK, offset 1) and matched_k columns; NaN is written
// as an empty field.
func (p *Profile) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("layer,head,position")
	for d := 0; d <= p.MaxK; d++ {
		fmt.Fprintf(bw, ",rel_%d", d)
	}
	for k := 0; k <= p.MaxK; k++ {
		fmt.Fprintf(bw, ",suffix_%d", k)
	}
	for k := 0; k <= p.MaxK; k++ {
		fmt.Fprintf(bw, ",matched_%d", k)
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
				for _, v := range p.Suffix[l][h][i] {
					bw.WriteString("," + num(v))
				}
				for _, n := range p.Matched[i] {
					fmt.Fprintf(bw, ",%d", n)
				}
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}
