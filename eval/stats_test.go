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

func TestStudentTCDF(t *testing.T) {
	// df = 1 is the Cauchy distribution: F(t) = ½ + atan(t)/π.
	for _, x := range []float64{-5, -1, 0, 0.3, 2, 40} {
		want := 0.5 + math.Atan(x)/math.Pi
		if got := studentTCDF(x, 1); math.Abs(got-want) > 1e-13 {
			t.Errorf("F1(%v) = %v, want %v", x, got, want)
		}
	}
	// df = 2: F(t) = ½ + t / (2√(2+t²)).
	for _, x := range []float64{-3, 0.5, 7} {
		want := 0.5 + x/(2*math.Sqrt(2+x*x))
		if got := studentTCDF(x, 2); math.Abs(got-want) > 1e-13 {
			t.Errorf("F2(%v) = %v, want %v", x, got, want)
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
