package eval

import (
	"math"
	"testing"
)

func TestCriticalValue(t *testing.T) {
	cases := []struct {
		n      int
		conf   float64
		want   float64
		method string
	}{
		{2, 0.95, 12.706204736174707, "student-t"},
		{3, 0.95, 4.302652729749464, "student-t"},
		{6, 0.95, 2.570581835636314, "student-t"},
		{11, 0.95, 2.228138851986274, "student-t"},
		{31, 0.95, 2.042272456301238, "student-t"},
		{101, 0.95, 1.983971518523552, "student-t"},
		{11, 0.99, 3.169272672616951, "student-t"},
		{1001, 0.95, 1.959963984540054, "normal"},
		{8192, 0.95, 1.959963984540054, "normal"},
		{8192, 0.99, 2.575829303548901, "normal"},
	}
	for _, tc := range cases {
		got, method, err := CriticalValue(tc.n, tc.conf)
		if err != nil {
			t.Fatal(err)
		}
		if method != tc.method || math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("CriticalValue(%d, %v) = %v (%s), want %v (%s)", tc.n, tc.conf, got, method, tc.want, tc.method)
		}
	}
	if c, _, err := CriticalValue(1, 0.95); err != nil || !math.IsNaN(c) {
		t.Errorf("n=1: %v %v", c, err)
	}
	for _, conf := range []float64{0, 1, -0.5, math.NaN()} {
		if _, _, err := CriticalValue(10, conf); err == nil {
			t.Errorf("conf %v accepted", conf)
		}
	}
}

// TestCriticalValueUnchanged compares the Student-t critical values with
// those of the hand-written quantile (bisection on the regularised
// incomplete beta function) that gonum's distuv.StudentsT replaced: every
// interval must stay the same to 1e-9 relative.
func TestCriticalValueUnchanged(t *testing.T) {
	old := []struct {
		n    int
		conf float64
		want float64
	}{
		{2, 0.9, 6.3137515146750296},
		{2, 0.95, 12.706204736174669},
		{2, 0.99, 63.656741162870844},
		{2, 0.999, 636.61924876871876},
		{3, 0.9, 2.919985580353722},
		{3, 0.95, 4.3026527297494557},
		{3, 0.99, 9.9248432009182359},
		{3, 0.999, 31.599054576443599},
		{4, 0.9, 2.3533634348018211},
		{4, 0.95, 3.1824463052837046},
		{4, 0.99, 5.840909309733334},
		{4, 0.999, 12.92397863668748},
		{5, 0.9, 2.1318467863266495},
		{5, 0.95, 2.7764451051977908},
		{5, 0.99, 4.6040948713499787},
		{5, 0.999, 8.6103015813792751},
		{6, 0.9, 2.0150483733330233},
		{6, 0.95, 2.5705818356363128},
		{6, 0.99, 4.0321429835552145},
		{6, 0.999, 6.868826625881109},
		{8, 0.9, 1.8945786050900062},
		{8, 0.95, 2.364624251592784},
		{8, 0.99, 3.4994832973504844},
		{8, 0.999, 5.4078825208617243},
		{11, 0.9, 1.8124611228116763},
		{11, 0.95, 2.2281388519862722},
		{11, 0.99, 3.1692726726169438},
		{11, 0.999, 4.5868938587026342},
		{16, 0.9, 1.7530503556925723},
		{16, 0.95, 2.1314495455597724},
		{16, 0.99, 2.9467128834752323},
		{16, 0.999, 4.0727651959037896},
		{21, 0.9, 1.7247182429207841},
		{21, 0.95, 2.0859634472658612},
		{21, 0.99, 2.8453397097861011},
		{21, 0.999, 3.8495162749308252},
		{30, 0.9, 1.6991270265334948},
		{30, 0.95, 2.0452296421327016},
		{30, 0.99, 2.7563859036705995},
		{30, 0.999, 3.6594050194663312},
		{31, 0.9, 1.6972608865939587},
		{31, 0.95, 2.0422724563012373},
		{31, 0.99, 2.7499956535672201},
		{31, 0.999, 3.6459586350420228},
		{51, 0.9, 1.6759050251630772},
		{51, 0.95, 2.0085591121007642},
		{51, 0.99, 2.6777932709408425},
		{51, 0.999, 3.4960128818111409},
		{100, 0.9, 1.6603911560170599},
		{100, 0.95, 1.9842169515864096},
		{100, 0.99, 2.6264054572808195},
		{100, 0.999, 3.3915288333636475},
		{128, 0.9, 1.6569403435421703},
		{128, 0.95, 1.9788195347028474},
		{128, 0.99, 2.6150960084298509},
		{128, 0.999, 3.3687852985743323},
		{256, 0.9, 1.6508510924989004},
		{256, 0.95, 1.9693105698498448},
		{256, 0.99, 2.5952464847916037},
		{256, 0.999, 3.3290876552892898},
		{501, 0.9, 1.6479068539295492},
		{501, 0.95, 1.96471983746736},
		{501, 0.99, 2.585697835141942},
		{501, 0.999, 3.3100911515226592},
		{999, 0.9, 1.6463818766330434},
		{999, 0.95, 1.9623438462164882},
		{999, 0.99, 2.580764586385488},
		{999, 0.999, 3.3003022520497307},
		{1000, 0.9, 1.6463803454287489},
		{1000, 0.95, 1.9623414611333367},
		{1000, 0.99, 2.5807596372675485},
		{1000, 0.999, 3.3002924403986578},
	}
	for _, tc := range old {
		got, _, err := CriticalValue(tc.n, tc.conf)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("CriticalValue(%d, %v) = %.17g, the old quantile gave %.17g (relative difference %.2g)", tc.n, tc.conf, got, tc.want, math.Abs(got-tc.want)/tc.want)
		}
	}
}

func TestWelfordMerge(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	all := newWelford(1)
	for _, x := range xs {
		all.add([]float64{x})
	}
	a, b := newWelford(1), newWelford(1)
	for _, x := range xs[:4] {
		a.add([]float64{x})
	}
	for _, x := range xs[4:] {
		b.add([]float64{x})
	}
	e := newWelford(1)
	e.merge(a)
	e.merge(newWelford(1))
	e.merge(b)
	if e.n != all.n || math.Abs(e.mean[0]-all.mean[0]) > 1e-14 || math.Abs(e.m2[0]-all.m2[0]) > 1e-12 {
		t.Fatalf("merge %+v vs sequential %+v", e, all)
	}
	mean := 44.0 / 11
	m2 := 0.0
	for _, x := range xs {
		m2 += (x - mean) * (x - mean)
	}
	if math.Abs(all.mean[0]-mean) > 1e-14 || math.Abs(all.m2[0]-m2) > 1e-12 {
		t.Fatalf("welford %v %v, want %v %v", all.mean[0], all.m2[0], mean, m2)
	}
}

// TestHolm: Holm's adjusted p-values against ones worked by hand —
// sorted p_(k) times m−k+1, made non-decreasing in sorted order, capped at
// 1 — returned in the input's order.
func TestHolm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ps     []float64
		want   []float64
		reason string
	}{
		{"none", nil, []float64{}, ""},
		{"one", []float64{0.03}, []float64{0.03}, "m = 1: unadjusted"},
		// sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → 0.06
		{"step-down", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}, "the multiplier and the running maximum"},
		// 0.3·3 = 0.9, 0.5·2 = 1.0, 0.9·1 = 0.9 → 1
		{"cap", []float64{0.5, 0.3, 0.9}, []float64{1, 0.9, 1}, "capped at 1"},
		{"over one", []float64{0.6, 0.7}, []float64{1, 1}, "1.2 capped at 1"},
		{"ties", []float64{0.02, 0.02, 0.02}, []float64{0.06, 0.06, 0.06}, "equal p-values share the first's adjustment"},
		{"tiny", []float64{1e-300, 1e-200, 0.5}, []float64{3e-300, 2e-200, 0.5}, "no underflow"},
	} {
		got := Holm(tc.ps)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: Holm(%v) = %v", tc.name, tc.ps, got)
		}
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12*tc.want[i] {
				t.Errorf("%s: Holm(%v) = %v, want %v (%s)", tc.name, tc.ps, got, tc.want, tc.reason)
				break
			}
		}
		// Adjusted ≥ raw, ≤ 1, and in the raw p-values' order.
		for i := range got {
			if got[i] < tc.ps[i] || got[i] > 1 {
				t.Errorf("%s: adjusted %v of raw %v", tc.name, got[i], tc.ps[i])
			}
			for j := range got {
				if tc.ps[i] < tc.ps[j] && got[i] > got[j] {
					t.Errorf("%s: p %v < %v but adjusted %v > %v", tc.name, tc.ps[i], tc.ps[j], got[i], got[j])
				}
			}
		}
	}
}
