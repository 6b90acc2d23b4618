package attnmap

import (
	"bytes"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func seq(s string) []byte {
	x := make([]byte, len(s))
	for i := range s {
		x[i] = s[i] - '0'
	}
	return x
}

func TestSuffixMatches(t *testing.T) {
	//            0123456789012
	x := seq("0120120211201")
	cases := []struct {
		q, k, off int
		want      []int
	}{
		// suffix "01" (positions 11–12): ends at 1, 4; "01" followed at 2, 5
		{12, 2, 0, []int{1, 4}},
		{12, 2, 1, []int{2, 5}},
		// suffix "201" ends at 4 only; the position after it is 5
		{12, 3, 0, []int{4}},
		{12, 3, 1, []int{5}},
		// suffix "1": x_j = 1 at 1, 4, 8, 9; after a 1 at 2, 5, 9, 10
		{12, 1, 0, []int{1, 4, 8, 9}},
		{12, 1, 1, []int{2, 5, 9, 10}},
		// k = 0: every earlier position
		{3, 0, 0, []int{0, 1, 2}},
		{3, 0, 1, []int{0, 1, 2}},
		// suffix "12" (9–10) ends at 2 and 5, is followed at 3 and 6;
		// suffix "02" (6–7) has no earlier occurrence
		{10, 2, 0, []int{2, 5}},
		{10, 2, 1, []int{3, 6}},
		{7, 2, 0, nil},
		// too short a prefix for the suffix, and no match
		{1, 3, 0, nil},
		{0, 1, 0, nil},
		{2, 3, 0, nil}, // suffix "012" has no earlier occurrence
		{5, 3, 1, []int{3}},
	}
	for _, c := range cases {
		if got := SuffixMatches(x, c.q, c.k, c.off); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SuffixMatches(q=%d, k=%d, offset %d) = %v, want %v", c.q, c.k, c.off, got, c.want)
		}
	}
	for _, bad := range [][3]int{{13, 1, 0}, {-1, 1, 0}, {3, -1, 0}, {3, 1, 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SuffixMatches(q=%d, k=%d, offset %d) did not panic", bad[0], bad[1], bad[2])
				}
			}()
			SuffixMatches(x, bad[0], bad[1], bad[2])
		}()
	}
}

// TestSuffixMatchesBrute compares with a direct check of the definition.
func TestSuffixMatchesBrute(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]byte, 120)
	for i := range x {
		x[i] = byte(r.IntN(3))
	}
	for q := range x {
		for k := 0; k <= 5; k++ {
			for off := 0; off <= 1; off++ {
				var want []int
				for j := 0; j < q && q >= k-1; j++ {
					ok := j-off-k+1 >= 0
					for m := 0; ok && m < k; m++ {
						ok = x[j-off-m] == x[q-m]
					}
					if ok {
						want = append(want, j)
					}
				}
				if got := SuffixMatches(x, q, k, off); !reflect.DeepEqual(got, want) {
					t.Fatalf("q=%d k=%d offset %d: %v, want %v", q, k, off, got, want)
				}
			}
		}
	}
}

// headFrom builds a T×T map whose row i is uniform over sel(i) (or on i
// itself when sel(i) is empty).
func headFrom(T int, sel func(i int) []int) []float32 {
	a := make([]float32, T*T)
	for i := range T {
		s := sel(i)
		if len(s) == 0 {
			s = []int{i}
		}
		for _, j := range s {
			a[i*T+j] += 1 / float32(len(s))
		}
	}
	return a
}

func randomSeq(seed uint64, n, A int) []byte {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]byte, n)
	for i := range x {
		x[i] = byte(r.IntN(A))
	}
	return x
}

// skewedSeq draws n i.i.d. symbols with P(0) = p0 and the rest shared
// equally by 1..A−1.
func skewedSeq(r *rand.Rand, n, A int, p0 float64) []byte {
	x := make([]byte, n)
	for i := range x {
		if r.Float64() >= p0 {
			x[i] = byte(1 + r.IntN(A-1))
		}
	}
	return x
}

// peakedRandom is a content-blind head: row i is a softmax of β·N(0,1)
// scores over the keys 0..i.
func peakedRandom(r *rand.Rand, T int, beta float64) []float32 {
	a := make([]float32, T*T)
	for i := range T {
		z := make([]float64, i+1)
		s := 0.0
		for j := range z {
			z[j] = math.Exp(beta * r.NormFloat64())
			s += z[j]
		}
		for j := range z {
			a[i*T+j] = float32(z[j] / s)
		}
	}
	return a
}

// TestScoreWindowsNull: uniform and content-blind (random peaked, per
// window or fixed) heads are never labelled on skewed symbol frequencies
// at A = 2 and A = 3, where the old absolute 0.5 rule labelled the
// uniform head "suffix-match k=1"; a true suffix-match head and a
// previous-token head are labelled.
func TestScoreWindowsNull(t *testing.T) {
	const T, W, maxK = 128, 12, 3
	for _, A := range []int{2, 3} {
		r := rand.New(rand.NewPCG(uint64(A), 11))
		xs := make([][]byte, W)
		for w := range xs {
			xs[w] = skewedSeq(r, T, A, 0.75)
		}
		uniform := headFrom(T, func(i int) []int {
			s := make([]int, i+1)
			for j := range s {
				s[j] = j
			}
			return s
		})
		prev := headFrom(T, func(i int) []int {
			if i == 0 {
				return nil
			}
			return []int{i - 1}
		})
		fixed := peakedRandom(r, T, 5)
		all := make([][][][]float32, W)
		for w, x := range xs {
			suf := headFrom(T, func(i int) []int { return SuffixMatches(x, i, 2, 1) })
			all[w] = [][][]float32{{uniform, peakedRandom(r, T, 5), fixed}, {prev, suf}}
		}
		mapsOf := func(w int) ([][][]float32, error) { return all[w], nil }
		scores, err := ScoreWindows(xs, mapsOf, maxK, NullOptions{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scores {
			t.Logf("A=%d head %d.%d: %s", A, s.Layer, s.Head, s.Label)
		}
		// the failure mode of the old rule: uniform attention puts more
		// than half its mass on the k = 1 matches
		if u, _ := scores[0].SuffixScore(1, 0); A == 3 && !(u.Mass > 0.5) {
			t.Errorf("A=3: uniform head k=1 mass %.3f, expected > 0.5 (the case the test is about)", u.Mass)
		}
		for n, name := range []string{"uniform", "random peaked", "fixed random peaked"} {
			if s := scores[n]; s.Labelled || !strings.HasPrefix(s.Label, "unlabelled") {
				t.Errorf("A=%d: %s head labelled %q", A, name, s.Label)
			}
		}
		for _, s := range append(append([]Score(nil), scores[0].Suffix...), scores[0].Relative...) {
			if math.Abs(s.Mass-s.Chance) > 1e-6 || s.P != 1 {
				t.Errorf("A=%d uniform head %+v: mass ≠ chance or p ≠ 1", A, s)
			}
		}
		if s := scores[3]; !s.Labelled || s.Best.Kind != Relative || s.Best.D != 1 || math.Abs(s.Best.Mass-1) > 1e-6 {
			t.Errorf("A=%d previous-token head: %q", A, s.Label)
		}
		if s := scores[4]; !s.Labelled || s.Best.Kind != SuffixMatch || s.Best.K != 2 || s.Best.Offset != 1 || math.Abs(s.Best.Mass-1) > 1e-6 {
			t.Errorf("A=%d suffix head: %q", A, s.Label)
		}
		tests := float64(5 * (3*maxK + 1))
		if s, _ := scores[4].SuffixScore(2, 1); s.PAdj != min(1, s.P*tests) || s.P > 2.0/float64(1+int(math.Ceil(20*tests/Alpha))) {
			t.Errorf("A=%d suffix head k=2/1: p %g, p_adj %g", A, s.P, s.PAdj)
		}
		// the same seed gives the same scores; the panel picks the suffix head
		again, _ := ScoreWindows(xs, mapsOf, maxK, NullOptions{Seed: 7})
		if !reflect.DeepEqual(scores, again) {
			t.Errorf("A=%d: scores differ between two runs with one seed", A)
		}
		// the number of workers changes nothing
		for _, workers := range []int{1, 2, 3, 7} {
			if got, _ := ScoreWindows(xs, mapsOf, maxK, NullOptions{Seed: 7, Workers: workers}); !reflect.DeepEqual(scores, got) {
				t.Errorf("A=%d: scores with %d workers differ", A, workers)
			}
		}
		if i, off, ok := SuffixPanel(scores, 2, -1, 0, 0); !ok || i != 4 || off != 1 {
			t.Errorf("A=%d: SuffixPanel = %d, %d, %v; want head 2.2 offset 1", A, i, off, ok)
		}
		if i, off, ok := SuffixPanel(scores, 2, 0, 1, 2); !ok || i != 1 || off != 0 {
			t.Errorf("A=%d: SuffixPanel(head 1.2, offset 0) = %d, %d, %v", A, i, off, ok)
		}
	}
}

func TestScoreHeads(t *testing.T) {
	const T, maxK = 200, 4
	x := randomSeq(5, T, 3)
	prev := headFrom(T, func(i int) []int {
		if i == 0 {
			return nil
		}
		return []int{i - 1}
	})
	stripe := make([]float32, T*T) // d = 2, with 10% on d = 3
	for i := range T {
		switch {
		case i >= 3:
			stripe[i*T+i-2], stripe[i*T+i-3] = 0.9, 0.1
		default:
			stripe[i*T+i] = 1
		}
	}
	suf3 := headFrom(T, func(i int) []int { return SuffixMatches(x, i, 3, 1) })
	suf2 := headFrom(T, func(i int) []int { return SuffixMatches(x, i, 2, 0) })
	uniform := headFrom(T, func(i int) []int {
		s := make([]int, i+1)
		for j := range s {
			s[j] = j
		}
		return s
	})
	maps := [][][]float32{{prev, stripe, uniform}, {suf3, suf2}}
	scores := ScoreHeads(x, maps, maxK)
	if len(scores) != 5 {
		t.Fatalf("%d scores, want 5", len(scores))
	}
	for _, s := range scores {
		if len(s.Suffix) != 2*(maxK+1) || len(s.Relative) != maxK+1 {
			t.Fatalf("layer %d head %d: %d suffix and %d relative scores", s.Layer, s.Head, len(s.Suffix), len(s.Relative))
		}
		t.Logf("layer %d head %d: %s", s.Layer, s.Head, s.Label)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	check := func(i int, labelled bool, prefix string, best Score) {
		t.Helper()
		s := scores[i]
		if s.Labelled != labelled || !strings.HasPrefix(s.Label, prefix) {
			t.Errorf("layer %d head %d: label %q (labelled %v), want prefix %q", s.Layer, s.Head, s.Label, s.Labelled, prefix)
		}
		b := s.Best
		if b.Kind != best.Kind || b.K != best.K || b.Offset != best.Offset || b.D != best.D || !near(b.Mass, best.Mass) {
			t.Errorf("layer %d head %d: best %+v, want %+v", s.Layer, s.Head, b, best)
		}
	}
	check(0, true, "previous-token d=1, mass 1.00 vs chance 0.02", Score{Kind: Relative, D: 1, Mass: 1})
	check(1, true, "relative-position d=2, mass 0.90", Score{Kind: Relative, D: 2, Mass: 0.9})
	// one window: suffix matches cannot be tested, so never label (the
	// head attends itself where nothing matches: a current-token head)
	if s := scores[3]; s.Labelled && s.Best.Kind == SuffixMatch {
		t.Errorf("one window: suffix head labelled %q", s.Label)
	}
	if s, _ := scores[3].SuffixScore(3, 1); !near(s.Mass, 1) {
		t.Errorf("suffix head k=3 offset 1: mass %g, want 1", s.Mass)
	}
	for _, s := range scores[3].Suffix {
		if s.P != 1 {
			t.Errorf("one window: suffix %+v has p ≠ 1", s)
		}
	}
	if scores[2].Labelled {
		t.Errorf("uniform head labelled %q", scores[2].Label)
	}
	// Layer/Head are 1-based
	if scores[3].Layer != 2 || scores[3].Head != 1 {
		t.Errorf("fourth head is layer %d head %d", scores[3].Layer, scores[3].Head)
	}
	// a uniform head's mass is its chance level; queries i ≥ maxK
	for _, s := range append(append([]Score(nil), scores[2].Suffix...), scores[2].Relative...) {
		if !near(s.Mass, s.Chance) || !near(s.Mass, s.Uniform) {
			t.Errorf("uniform head %+v: mass ≠ chance", s)
		}
	}
	if s := scores[0].Relative[1]; s.Queries != T-maxK || !near(s.Chance, meanInv(maxK, T)) {
		t.Errorf("relative d=1: %d queries (want %d), chance %g (want %g)", s.Queries, T-maxK, s.Chance, meanInv(maxK, T))
	}
	// the k=4 matches are a subset of the k=3 ones: the k=3 head puts
	// only part of its mass on them
	if s, ok := scores[3].SuffixScore(4, 1); !ok || s.Mass > 0.8 {
		t.Errorf("suffix head k=4 offset 1: %+v (want well below 1)", s)
	}
	if _, ok := scores[3].SuffixScore(maxK+1, 0); ok {
		t.Error("SuffixScore beyond maxK reported ok")
	}
	// a query's count: the k=3 offset-1 score counts exactly the queries
	// with a match
	n := 0
	for i := maxK; i < T; i++ {
		if len(SuffixMatches(x, i, 3, 1)) > 0 {
			n++
		}
	}
	if s, _ := scores[3].SuffixScore(3, 1); s.Queries != n {
		t.Errorf("k=3 offset 1 averaged over %d queries, want %d", s.Queries, n)
	}
	// errors
	if _, err := ScoreWindows([][]byte{x, x[:10]}, func(int) ([][][]float32, error) { return maps, nil }, maxK, NullOptions{}); err == nil {
		t.Error("windows of different lengths accepted")
	}
}

func meanInv(lo, T int) float64 {
	s := 0.0
	for i := lo; i < T; i++ {
		s += 1 / float64(i+1)
	}
	return s / float64(T-lo)
}

// TestFigures draws both figures in every format.
func TestFigures(t *testing.T) {
	const T = 64
	x := randomSeq(9, T, 3)
	prev := headFrom(T, func(i int) []int {
		if i == 0 {
			return nil
		}
		return []int{i - 1}
	})
	suf := headFrom(T, func(i int) []int { return SuffixMatches(x, i, 2, 1) })
	maps := [][][]float32{{prev, suf}, {suf}}
	dir := t.TempDir()
	opts := Options{Title: "test", Labels: [][]string{{"previous-token", ""}}, DPI: 60}
	for _, ext := range []string{"png", "svg", "pdf"} {
		p := filepath.Join(dir, "heat."+ext)
		if err := Heatmaps(p, maps, opts); err != nil {
			t.Fatal(err)
		}
		q := filepath.Join(dir, "suf."+ext)
		if err := SuffixMatchFigure(q, x, suf, T, []int{40, 63}, 2, 1); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{p, q} {
			if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "heat.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if w := img.Bounds().Dx(); w < 2*int(2.6*60) {
		t.Errorf("heatmap PNG %d pixels wide, want ≥ 2 panels", w)
	}
	// errors: format, shapes, queries
	if err := Heatmaps(filepath.Join(dir, "h.gif"), maps, opts); err == nil {
		t.Error("gif accepted")
	}
	if err := Heatmaps(filepath.Join(dir, "h.png"), [][][]float32{{prev, make([]float32, 10)}}, opts); err == nil {
		t.Error("ragged maps accepted")
	}
	if err := Heatmaps(filepath.Join(dir, "h.png"), nil, opts); err == nil {
		t.Error("no maps accepted")
	}
	if err := SuffixMatchFigure(filepath.Join(dir, "s.png"), x, suf, T, []int{T}, 2, 1); err == nil {
		t.Error("query outside the window accepted")
	}
	if err := SuffixMatchFigure(filepath.Join(dir, "s.png"), x, suf, T, []int{3}, 2, 2); err == nil {
		t.Error("offset 2 accepted")
	}
	if err := SuffixMatchFigure(filepath.Join(dir, "s.png"), x, suf[:10], T, []int{3}, 2, 1); err == nil {
		t.Error("short map accepted")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 6 {
		t.Errorf("%d files in the output directory, want 6 (no temporaries left)", len(ents))
	}
}

// TestPValue: an underflowed p-value reads "< 1e-300", others keep two
// significant digits.
func TestPValue(t *testing.T) {
	for p, want := range map[float64]string{0: "< 1e-300", 0.0025: "0.0025", 4.1e-208: "4.1e-208", 1: "1"} {
		if got := PValue(p); got != want {
			t.Errorf("PValue(%g) = %q, want %q", p, got, want)
		}
	}
}
