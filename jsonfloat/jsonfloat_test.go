package jsonfloat

import (
	"encoding/json"
	"math"
	"testing"
)

// TestRoundTrip: every value, finite (shortest exact form) or not, comes
// back bit for bit (NaN as a NaN), alone and in a slice.
func TestRoundTrip(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -2.5, 0.1, 1e-300, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1)}
	want := []string{`0`, `-0`, `1`, `-2.5`, `0.1`, `1e-300`, `1.7976931348623157e+308`, `5e-324`, `"NaN"`, `"+Inf"`, `"-Inf"`}
	for i, v := range vals {
		b, err := json.Marshal(Float(v))
		if err != nil || string(b) != want[i] {
			t.Errorf("Marshal(%g) = %s, %v; want %s", v, b, err, want[i])
		}
		var back Float
		if err := json.Unmarshal(b, &back); err != nil || !same(float64(back), v) {
			t.Errorf("Unmarshal(%s) = %g, %v; want %g", b, float64(back), err, v)
		}
	}
	b, err := json.Marshal(struct{ X Floats }{vals})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ X Floats }
	if err := json.Unmarshal(b, &back); err != nil || len(back.X) != len(vals) {
		t.Fatalf("Floats: %s → %v, %v", b, back.X, err)
	}
	for i := range vals {
		if !same(back.X[i], vals[i]) {
			t.Errorf("Floats[%d] = %g, want %g", i, back.X[i], vals[i])
		}
	}
	if b, _ := json.Marshal(Floats(nil)); string(b) != "null" {
		t.Errorf("nil Floats: %s", b)
	}
}

// TestParse: the other spellings readers meet (null from older files,
// Infinity), and what is refused.
func TestParse(t *testing.T) {
	for in, want := range map[string]float64{`null`: math.NaN(), `"Inf"`: math.Inf(1), `"Infinity"`: math.Inf(1),
		`"-Infinity"`: math.Inf(-1), `"nan"`: math.NaN(), `3`: 3} {
		if v, err := Parse([]byte(in)); err != nil || !same(v, want) {
			t.Errorf("Parse(%s) = %g, %v; want %g", in, v, err, want)
		}
	}
	for _, in := range []string{`"1.5"`, `"x"`, `true`, `""`, `[1]`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%s) accepted", in)
		}
	}
}

func same(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}
