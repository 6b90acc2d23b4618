package attnmap

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestPositionProfile checks the profile on hand-made heads: a
// previous-token head (all mass on i−1), a uniform causal head (1/(i+1) on
// every key) and a head spread uniformly over the k=1 suffix matches
// (offset 1), whose suffix_1 mass is 1 wherever a match exists.
func TestPositionProfile(t *testing.T) {
	const T, W, A, maxK = 24, 5, 3, 2
	rng := rand.New(rand.NewPCG(3, 4))
	var xs [][]byte
	for range W {
		x := make([]byte, T)
		for i := range x {
			x[i] = byte(rng.IntN(A))
		}
		xs = append(xs, x)
	}
	mapsOf := func(w int) ([][][]float32, error) {
		x := xs[w]
		prev, uni, suf := make([]float32, T*T), make([]float32, T*T), make([]float32, T*T)
		for i := range T {
			prev[i*T+max(i-1, 0)] = 1
			for j := 0; j <= i; j++ {
				uni[i*T+j] = 1 / float32(i+1)
			}
			s := SuffixMatches(x, i, 1, 1)
			if len(s) == 0 {
				suf[i*T+i] = 1
			}
			for _, j := range s {
				suf[i*T+j] = 1 / float32(len(s))
			}
		}
		return [][][]float32{{prev, uni}, {suf}}, nil
	}
	p, err := PositionProfile(xs, mapsOf, maxK)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	for i := range T {
		for d := 0; d <= maxK; d++ {
			got := p.Rel[0][0][i][d]
			want := 0.0
			if d == 1 || (i == 0 && d == 0) {
				want = 1
			}
			if d > i {
				if !math.IsNaN(got) {
					t.Errorf("prev head, position %d, d=%d: %v, want NaN (no key)", i, d, got)
				}
				continue
			}
			if !near(got, want) {
				t.Errorf("prev head, position %d, d=%d: %v, want %v", i, d, got, want)
			}
			if u := p.Rel[0][1][i][d]; !near(u, 1/float64(i+1)) {
				t.Errorf("uniform head, position %d, d=%d: %v, want %v", i, d, u, 1/float64(i+1))
			}
		}
		n := 0
		for _, x := range xs {
			if len(SuffixMatches(x, i, 1, 1)) > 0 {
				n++
			}
		}
		if p.Matched[1][i][1] != n {
			t.Errorf("position %d: matched %d windows, want %d", i, p.Matched[1][i][1], n)
		}
		if got := p.Suffix[1][1][0][i][1]; n > 0 && !near(got, 1) || n == 0 && !math.IsNaN(got) {
			t.Errorf("suffix head, position %d: suffix_1 mass %v (matched in %d windows)", i, got, n)
		}
	}
	var buf bytes.Buffer
	if err := p.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1+3*T || lines[0] != "layer,head,position,rel_0,rel_1,rel_2,suffix0_0,suffix0_1,suffix0_2,suffix1_0,suffix1_1,suffix1_2,matched0_0,matched0_1,matched0_2,matched1_0,matched1_1,matched1_2" {
		t.Errorf("CSV: %d lines, header %q", len(lines), lines[0])
	}
	if !strings.HasPrefix(lines[1], "1,1,0,1,,,") {
		t.Errorf("first row %q: want rel_0 = 1 and empty rel_1, rel_2 at position 0", lines[1])
	}
	// Series picks the label's column; Drops finds a head that fails in
	// part of the window: the previous-token head keeps d=1 everywhere,
	// but as a d=2 head it would have no mass, and the uniform head's d=0
	// mass decays as 1/(i+1).
	prev := HeadScore{Layer: 1, Head: 1, Labelled: true, Best: Score{Kind: Relative, D: 1}}
	uni := HeadScore{Layer: 1, Head: 2, Labelled: true, Best: Score{Kind: Relative, D: 0}}
	suf := HeadScore{Layer: 2, Head: 1, Labelled: true, Best: Score{Kind: SuffixMatch, K: 1, Offset: 1}}
	if ser := p.Series(2, 1, suf.Best); ser == nil || !near(ser[T-1], p.Suffix[1][1][0][T-1][1]) {
		t.Error("Series of a suffix head")
	}
	if p.Series(3, 1, prev.Best) != nil || p.Series(1, 1, Score{Kind: Relative, D: maxK + 1}) != nil {
		t.Error("Series outside the profile should be nil")
	}
	drops := p.Drops([]HeadScore{prev, uni, suf}, 4)
	if len(drops) != 1 || drops[0].Head != 2 || drops[0].WorstTo != T-1 || !(drops[0].Worst < drops[0].Best/2) {
		t.Errorf("drops %+v: want only the uniform head, worst in the last quarter", drops)
	}
	for _, ext := range []string{"png", "svg"} {
		path := t.TempDir() + "/prof." + ext
		if err := ProfileFigure(path, p, []HeadScore{prev, uni, suf, {Layer: 1, Head: 2}}, 3, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := ProfileFigure(t.TempDir()+"/x.png", p, []HeadScore{{Layer: 1, Head: 1}}, 3, "none"); err == nil {
		t.Error("a figure without labelled heads should be an error")
	}
	if _, err := PositionProfile([][]byte{xs[0], xs[1][:T-1]}, mapsOf, maxK); err == nil {
		t.Error("windows of different lengths accepted")
	}
	if _, err := PositionProfile(nil, mapsOf, maxK); err == nil {
		t.Error("no windows accepted")
	}
}
