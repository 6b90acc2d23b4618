package powerfit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFloor: excess(T) = c + a·T^(−b) is recovered through three
// budgets (exactly) and four (least squares, noisy); a floorless power law
// gives c = 0; too few points or an excess ≤ 0 cannot be fitted.
func TestFloor(t *testing.T) {
	law := func(c, a, b float64, ts ...float64) []float64 {
		var es []float64
		for _, x := range ts {
			es = append(es, c+a*math.Pow(x/1e8, -b))
		}
		return es
	}
	for _, tc := range []struct {
		name       string
		ts, es     []float64
		c, b       float64
		cTol, bTol float64
		maxSSE     float64
		wantsOK    bool
	}{
		{"three budgets, floor", []float64{1e8, 2e8, 4e8}, law(0.005, 0.1, 1.5, 1e8, 2e8, 4e8), 0.005, 1.5, 1e-6, 1e-4, 1e-12, true},
		{"three budgets, no floor", []float64{1e8, 2e8, 4e8}, law(0, 0.1, 1.2, 1e8, 2e8, 4e8), 0, 1.2, 1e-6, 1e-4, 1e-12, true},
		{"uneven budgets", []float64{1e8, 3e8, 4e8, 1e9}, law(0.012, 0.08, 0.8, 1e8, 3e8, 4e8, 1e9), 0.012, 0.8, 1e-6, 1e-4, 1e-12, true},
		// 0.0175 + 0.088·T^−1.7 rounded to 4 decimals and perturbed
		{"four budgets, noisy", []float64{1e8, 2e8, 4e8, 8e8}, []float64{0.1051, 0.0439, 0.0262, 0.0201}, 0.0175, 1.7, 0.004, 0.6, 1e-2, true},
		{"two budgets", []float64{1e8, 2e8}, []float64{0.1, 0.05}, 0, 0, 0, 0, 0, false},
		{"an excess at 0", []float64{1e8, 2e8, 4e8}, []float64{0.1, 0.05, 0}, 0, 0, 0, 0, 0, false},
		{"rising", []float64{1e8, 2e8, 4e8}, []float64{0.01, 0.02, 0.04}, 0, 0, 0, 0, 0, false},
	} {
		l, ok := Floor(tc.ts, tc.es)
		c, b, sse := l.C, l.B, l.SSE
		if ok != tc.wantsOK {
			t.Errorf("%s: ok %v, want %v (c %g b %g)", tc.name, ok, tc.wantsOK, c, b)
			continue
		}
		if !ok {
			continue
		}
		if math.Abs(c-tc.c) > tc.cTol || math.Abs(b-tc.b) > tc.bTol || sse > tc.maxSSE {
			t.Errorf("%s: c %.6f b %.4f sse %.2g, want c %.6f b %.4f", tc.name, c, b, sse, tc.c, tc.b)
		}
	}
}

// TestFloorClosedForm: at three doubling budgets the floor has the closed
// form c = (e1·e3 − e2²)/(e1 + e3 − 2·e2) when the falls shrink (e1 − e2 >
// e2 − e3 > 0); Floor finds it for random triples, including results that
// level off (a floor within 1e-4 of the last excess), and refuses flat ones.
func TestFloorClosedForm(t *testing.T) {
	ts := []float64{98.3e6, 196.6e6, 393.2e6}
	r := rand.New(rand.NewPCG(7, 11))
	cases := [][3]float64{{0.155, 0.046, 0.0455}, {0.1, 0.0501, 0.05}, {0.15545, 0.04605, 0.02205}}
	for len(cases) < 300 {
		e1 := 0.01 + 0.2*r.Float64()
		d1 := e1 * r.Float64()
		e2 := e1 - d1
		d2 := d1 * r.Float64() * 0.999
		if e3 := e2 - d2; e3 > 1e-6 {
			cases = append(cases, [3]float64{e1, e2, e3})
		}
	}
	for _, e := range cases {
		want := (e[0]*e[2] - e[1]*e[1]) / (e[0] + e[2] - 2*e[1])
		l, ok := Floor(ts, e[:])
		if want < 0 { // the falls shrink too slowly for a floor ≥ 0
			if ok && l.C > 1e-9*e[2] {
				t.Errorf("%v: floor %g where the exact one is negative (%g)", e, l.C, want)
			}
			continue
		}
		if !ok || math.Abs(l.C-want) > 1e-7*e[2] || l.SSE > 1e-12 {
			t.Errorf("%v: floor %.9f (ok %v, sse %.2g), want %.9f", e, l.C, ok, l.SSE, want)
		}
	}
	if l, ok := Floor(ts, []float64{0.05, 0.05, 0.05}); ok {
		t.Errorf("a flat series fitted: %+v", l)
	}
}

// TestPower: the floorless fit recovers a·T^(−b) exactly, says where it
// reaches a level, and refuses two few points or an excess ≤ 0; a law
// that does not fall reaches nothing.
func TestPower(t *testing.T) {
	ts := []float64{1e8, 2e8, 4e8}
	es := []float64{0.1, 0.1 * math.Pow(2, -1.3), 0.1 * math.Pow(4, -1.3)}
	l, ok := Power(ts, es)
	if !ok || math.Abs(l.B-1.3) > 1e-9 || l.SSE > 1e-20 {
		t.Fatalf("Power %+v %v", l, ok)
	}
	if T, ok := l.Reaches(0.01); !ok || math.Abs(T/1e8-math.Pow(10, 1/1.3)) > 1e-6 {
		t.Errorf("Reaches(0.01) = %g, %v; want %g", T, ok, 1e8*math.Pow(10, 1/1.3))
	}
	if math.Abs(l.At(8e8)-0.1*math.Pow(8, -1.3)) > 1e-12 {
		t.Errorf("At(8e8) = %g", l.At(8e8))
	}
	if _, ok := Power(ts[:1], es[:1]); ok {
		t.Error("one point fitted")
	}
	if _, ok := Power(ts, []float64{0.1, -0.01, 0.02}); ok {
		t.Error("an excess below 0 fitted")
	}
	flat, _ := Power(ts, []float64{0.05, 0.05, 0.05})
	if _, ok := flat.Reaches(0.01); ok {
		t.Errorf("a flat law reaches a lower level: %+v", flat)
	}
	floor := Law{A: 1, B: 1, C: 0.02}
	if _, ok := floor.Reaches(0.01); ok {
		t.Error("a law reaches a level below its floor")
	}
	if T, ok := (Law{A: 1, B: 1e-30}).Reaches(0.01); ok {
		t.Errorf("a rounding-flat law reaches a level at %g", T)
	}
	if _, ok := Power([]float64{1e8, 1e8, 1e8}, []float64{0.1, 0.05, 0.02}); ok {
		t.Error("equal budgets fitted")
	}
	if _, ok := Power(ts, []float64{0.1, math.Inf(1), 0.02}); ok {
		t.Error("an infinite excess fitted")
	}
}

// The ladder's TF(4,4) numbers (mean over two seeds, nats/symbol over the
// exact Bayes predictor, at 98M, 197M and 393M tokens): the floorless law
// and the law with a floor fitted to the same three budgets.
func Example() {
	ts := []float64{98.3e6, 196.6e6, 393.2e6}
	es := []float64{0.15545, 0.04605, 0.02205}
	p, _ := Power(ts, es)
	f, _ := Floor(ts, es)
	fmt.Printf("floorless: b = %.2f, at 8× %.4f\n", p.B, p.At(8*ts[0]))
	fmt.Printf("floor: c = %.4f, b = %.2f, at 8× %.4f\n", f.C, f.B, f.At(8*ts[0]))
	_, reaches := f.Reaches(0.0093)
	fmt.Println("floor form reaches CTW's 0.0093:", reaches)
	// Output:
	// floorless: b = 1.41, at 8× 0.0077
	// floor: c = 0.0153, b = 2.19, at 8× 0.0168
	// floor form reaches CTW's 0.0093: false
}

// TestLastSlope: the law goes through the last two points, continues
// their log–log slope, and refuses what it cannot fit.
func TestLastSlope(t *testing.T) {
	ts, es := []float64{1e8, 2e8, 4e8}, []float64{0.1546, 0.0482, 0.0220}
	l, ok := LastSlope(ts, es)
	if !ok {
		t.Fatal("not fitted")
	}
	slope := math.Log(0.0220/0.0482) / math.Log(2)
	for _, c := range []struct{ t, want float64 }{{2e8, 0.0482}, {4e8, 0.0220}, {8e8, 0.0220 * math.Pow(2, slope)}} {
		if got := l.At(c.t); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("At(%g) = %.6f, want %.6f", c.t, got, c.want)
		}
	}
	if l, ok := LastSlope([]float64{1, 2}, []float64{0.1, 0.2}); !ok || !(l.B < 0) {
		t.Errorf("a rise: %+v %t, want B < 0", l, ok)
	}
	for _, bad := range [][2][]float64{{{1}, {0.1}}, {{1, 2}, {0.1}}, {{1, 2, 2}, {0.3, 0.2, 0.1}}, {{1, 2}, {0.1, 0}}, {{1, 2}, {0.1, math.Inf(1)}}} {
		if _, ok := LastSlope(bad[0], bad[1]); ok {
			t.Errorf("LastSlope(%v, %v) fitted", bad[0], bad[1])
		}
	}
}
