package predict

import (
	"math"
	"testing"
)

func TestUniform(t *testing.T) {
	p := make([]float64, 3)
	Uniform(p)
	for _, v := range p {
		if v != 1.0/3 {
			t.Fatalf("%v", p)
		}
	}
}

func TestFromFloat32(t *testing.T) {
	q := []float32{0.1, 0.2, 0.3, 0.4000001}
	p := make([]float64, len(q))
	FromFloat32(p, q)
	sum := 0.0
	for i, v := range p {
		sum += v
		if math.Abs(v-float64(q[i])) > 1e-6 {
			t.Errorf("p[%d] = %v from %v", i, v, q[i])
		}
	}
	if math.Abs(sum-1) > 1e-15 {
		t.Errorf("sums to 1%+.3g", sum-1)
	}
	// the float64 renormalisation, in this order
	want := float64(q[2]) / (((float64(q[0]) + float64(q[1])) + float64(q[2])) + float64(q[3]))
	if p[2] != want {
		t.Errorf("p[2] = %v, want %v", p[2], want)
	}
}
