package study

import "testing"

// TestLadderRule: K is the largest budget (at least ×2) with a TF(4,4,4)
// that extends the two-layer model, with that model at K and K/2; a rung
// above K with TF(4,4) alone, or a three-layer model of other heads, does
// not move it.
func TestLadderRule(t *testing.T) {
	for _, tc := range []struct {
		models          []string
		top, half, deep string
		ok              bool
	}{
		{[]string{"4,4", "4,4-x2", "4,4-x4", "4,4,4-x2"}, "TF(4,4) ×2 steps", "TF(4,4)", "TF(4,4,4) ×2 steps", true},
		{[]string{"4,4", "4,4-x2", "4,4-x4"}, "", "", "", false},
		{[]string{"4,4", "4,4,4"}, "", "", "", false}, // K = ×1: no K/2
		{[]string{"2,2", "4,4", "4,4-x2", "4,4-x4", "4,4,4-x4"}, "TF(4,4) ×4 steps", "TF(4,4) ×2 steps", "TF(4,4,4) ×4 steps", true},
		{[]string{"2,2", "2,2-x2", "4,4", "4,4-x2", "4,4-x4", "4,4,4-x2", "4,4,4-x4"}, "TF(4,4) ×4 steps", "TF(4,4) ×2 steps", "TF(4,4,4) ×4 steps", true},
		{[]string{"4,4", "4,4-x2", "4,4-x4", "4,4,4-x4", "4,4-x8", "4,4-x16"}, "TF(4,4) ×4 steps", "TF(4,4) ×2 steps", "TF(4,4,4) ×4 steps", true},
		{[]string{"4,4", "4,4-x2", "4,4-x4", "4,4,4-x4", "2,2,2-x8", "4,4-x8"}, "TF(4,4) ×4 steps", "TF(4,4) ×2 steps", "TF(4,4,4) ×4 steps", true},
		{[]string{"4,4", "4,4-x2", "4,4-x4", "4,4-sin-x4", "4,4,4-sin-x4"}, "", "", "", false}, // sinusoidal: not the rule's
	} {
		c := Config{Fig3Models: tc.models}
		top, half, deep, ok := c.LadderRule()
		if ok != tc.ok || ok && (top.Label() != tc.top || half.Label() != tc.half || deep.Label() != tc.deep) {
			t.Errorf("%q: %q %q %q %t, want %q %q %q %t", tc.models, top.Label(), half.Label(), deep.Label(), ok, tc.top, tc.half, tc.deep, tc.ok)
		}
	}
}
