package leafprior

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// FuzzSparse feeds arbitrary alphabets, zeroing probabilities and counts to
// NewSparse, LogMarginal and Predictive: they must return an error or
// ln M ≤ 0 (not NaN) and a predictive distribution of non-negative entries
// summing to 1 within 1e−9, with ErrZeroMarginal exactly when ln M = −Inf.
func FuzzSparse(f *testing.F) {
	counts := func(v ...int32) []byte {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
		}
		return b
	}
	f.Add(uint8(3), 0.5, counts(1, 2, 0))
	f.Add(uint8(3), 1.0, counts(1, 2, 0))
	f.Add(uint8(2), 0.0, counts(0, 0))
	f.Add(uint8(16), 0.9, counts(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 300))
	f.Add(uint8(3), 0.5, counts(600000, 300000, 148575))
	f.Add(uint8(4), 0.25, counts(-1, 2, 3, 4))
	f.Add(uint8(17), 0.5, counts(1))
	f.Add(uint8(3), math.NaN(), counts(1, 1, 1))
	f.Fuzz(func(t *testing.T, A uint8, zero float64, raw []byte) {
		s, err := NewSparse(int(A), zero)
		if err != nil {
			return
		}
		n := make([]int32, int(A))
		for i := range n {
			if 4*i+4 <= len(raw) {
				n[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
			}
		}
		lm, err := s.LogMarginal(n)
		if err == nil && (math.IsNaN(lm) || lm > 1e-12) {
			t.Fatalf("A=%d zero=%v n=%v: ln M = %v", A, zero, n, lm)
		}
		out := make([]float64, int(A))
		perr := s.Predictive(n, out)
		if perr != nil {
			if errors.Is(perr, ErrZeroMarginal) && (err != nil || !math.IsInf(lm, -1)) {
				t.Fatalf("A=%d zero=%v n=%v: ErrZeroMarginal with ln M = %v, %v", A, zero, n, lm, err)
			}
			return
		}
		if err == nil && math.IsInf(lm, -1) {
			t.Fatalf("A=%d zero=%v n=%v: ln M = −Inf but Predictive = %v", A, zero, n, out)
		}
		sum := 0.0
		for _, p := range out {
			if !(p >= 0) || math.IsInf(p, 0) {
				t.Fatalf("A=%d zero=%v n=%v: predictive %v", A, zero, n, out)
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("A=%d zero=%v n=%v: predictive sums to %v", A, zero, n, sum)
		}
	})
}
