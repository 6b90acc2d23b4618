package parallel

import (
	"sync/atomic"
	"testing"
)

// TestFor calls every index exactly once for several worker counts.
func TestFor(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 0}, {1, 4}, {7, 1}, {7, 3}, {100, 0}, {5, 50}, {3, -1}} {
		calls := make([]atomic.Int32, tc.n)
		For(tc.n, tc.workers, func(i int) { calls[i].Add(1) })
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Errorf("n=%d workers=%d: index %d called %d times", tc.n, tc.workers, i, c)
			}
		}
	}
}

// TestForInOrder: one worker calls in order on the caller's goroutine.
func TestForInOrder(t *testing.T) {
	var got []int
	For(5, 1, func(i int) { got = append(got, i) })
	for i, v := range got {
		if v != i {
			t.Fatalf("order %v", got)
		}
	}
}
