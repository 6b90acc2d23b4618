package parallel

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vomc/vomc/panics"
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

// TestForPanic: a panic of f on a worker (every worker, or one) is raised
// again on the caller's goroutine as a *panics.Error with the worker's
// stack, after the workers have returned; the caller is never left blocked.
func TestForPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  func(i int) bool
	}{{"every call", func(int) bool { return true }}, {"one call", func(i int) bool { return i == 17 }}} {
		got := func() (v any) {
			defer func() { v = recover() }()
			For(40, 4, func(i int) {
				if tc.bad(i) {
					failAt(i)
				}
			})
			return nil
		}()
		pe, ok := got.(*panics.Error)
		if !ok || !strings.Contains(fmt.Sprint(pe.Value), "index 17") && tc.name == "one call" || !strings.Contains(string(pe.Stack), "parallel.failAt") {
			t.Errorf("%s: recovered %v, want a *panics.Error from failAt", tc.name, got)
		}
	}
}

func failAt(i int) { panic(fmt.Sprintf("index %d", i)) }
