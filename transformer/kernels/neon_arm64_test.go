//go:build arm64 && !purego

package kernels

import (
	"math"
	"testing"
)

// TestNeonExpSpecial checks the NEON exp on the values Exp32 treats
// specially (NaN, ±Inf, the overflow and underflow thresholds, results
// that are subnormal) against Exp32 itself, and counts the inputs of the
// exp test grid where the two differ in the last bit (the algorithm is
// the same, fused the same way, so there should be none; a few would
// still be within the accuracy bound that TestExp32 checks).
func TestNeonExpSpecial(t *testing.T) {
	nan := float32(math.NaN())
	xs := []float32{nan, float32(math.Inf(1)), float32(math.Inf(-1)), 88.8, 88.80001, 89, 88.7, -103.9, -104, -104.1,
		-87.4, -88, -90, -95, -100, -103, 0, float32(math.Copysign(0, -1)), 1e30, -1e30}
	got := append([]float32(nil), xs...)
	expNEON(&got[0], len(got))
	for i, x := range xs {
		want := Exp32(x)
		if math.IsNaN(float64(want)) {
			if !math.IsNaN(float64(got[i])) {
				t.Errorf("exp(%v) = %v, want NaN", x, got[i])
			}
			continue
		}
		if got[i] != want {
			t.Errorf("exp(%v) = %v (%#x), Exp32 %v (%#x)", x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
		}
	}
	grid := expInputs()
	v := append([]float32(nil), grid...)
	expNEON(&v[0], len(v))
	diff := 0
	for i, x := range grid {
		if v[i] != Exp32(x) {
			diff++
		}
	}
	t.Logf("NEON exp differs from Exp32 in the last bit at %d of %d inputs", diff, len(grid))
}
