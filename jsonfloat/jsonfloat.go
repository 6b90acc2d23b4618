// Package jsonfloat is vomc's one way of writing float64 values in JSON
// when they may be non-finite, which JSON numbers cannot be: a finite
// value is a number in its shortest form that parses back to the same
// float64 (strconv 'g', -1), and NaN, +Inf and −Inf are the strings "NaN",
// "+Inf" and "-Inf". Every value survives a round trip exactly, NaN and
// the infinities apart, and Python's float() and Go's strconv.ParseFloat
// read all of them (JavaScript: a JSON.parse reviver, as explore's page
// has). docs/formats.md states the convention.
//
// Reading also accepts null, as NaN: files of before this convention
// wrote some non-finite values as null.
package jsonfloat

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 written by the convention.
type Float float64

// Floats is a []float64 written element by element by the convention.
type Floats []float64

// Append appends v's JSON form to b.
func Append(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"+Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// Parse reads a value written by Append: a JSON number, one of the strings
// "NaN", "+Inf", "-Inf" (also "Inf", "Infinity" and their signed forms,
// any case), or null (NaN).
func Parse(b []byte) (float64, error) {
	s := string(b)
	if s == "null" {
		return math.NaN(), nil
	}
	quoted := len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	if quoted {
		s = s[1 : len(s)-1]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || quoted == isFinite(v) {
		return 0, fmt.Errorf("jsonfloat: %s is not a number, \"NaN\", \"+Inf\" or \"-Inf\"", b)
	}
	return v, nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return Append(nil, float64(f)), nil }

// UnmarshalJSON implements json.Unmarshaler (Parse).
func (f *Float) UnmarshalJSON(b []byte) error {
	v, err := Parse(b)
	*f = Float(v)
	return err
}

// MarshalJSON implements json.Marshaler.
func (fs Floats) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+len(fs)*20)
	b = append(b, '[')
	for i, v := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = Append(b, v)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler: an array of values Parse
// reads, or null (a nil slice).
func (fs *Floats) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*fs = nil
		return nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	out := make([]float64, len(raw))
	for i, r := range raw {
		v, err := Parse(r)
		if err != nil {
			return err
		}
		out[i] = v
	}
	*fs = out
	return nil
}
