package logexp

import (
	"math"
	"testing"
)

func TestAdd(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct{ x, y, want float64 }{
		{0, 0, math.Ln2},
		{math.Log(2), math.Log(3), math.Log(5)},
		{-1000, -1000, -1000 + math.Ln2}, // e^-1000 underflows
		{800, 800, 800 + math.Ln2},       // e^800 overflows
		{3, -inf, 3}, {-inf, 3, 3}, {-inf, -inf, -inf},
		{inf, 1, inf},
	} {
		if got := Add(c.x, c.y); !(math.Abs(got-c.want) <= 1e-12*math.Max(1, math.Abs(c.want))) && got != c.want {
			t.Errorf("Add(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
