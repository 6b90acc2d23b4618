package panics_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/vomc/vomc/panics"
)

// worker panics with v on a goroutine of its own and returns what Of made
// of it there.
func worker(v any) error {
	ch := make(chan error)
	go func() {
		defer func() { ch <- panics.Of(recover()) }()
		panicker(v)
	}()
	return <-ch
}

func panicker(v any) {
	if v != nil {
		panic(v)
	}
}

func TestOf(t *testing.T) {
	var nilMap map[string]int
	for _, c := range []struct {
		name    string
		v       any
		want    string // in the message; "" for no error
		runtime bool   // errors.As a runtime.Error
	}{
		{"no panic", nil, "", false},
		{"string", "boom", "panic: boom", false},
		{"error", fmt.Errorf("wrapped: %w", errors.ErrUnsupported), "panic: wrapped: unsupported operation", false},
		{"runtime", func() (e any) { defer func() { e = recover() }(); nilMap["x"]++; return nil }(), "assignment to entry in nil map", true},
	} {
		err := worker(c.v)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var pe *panics.Error
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an *Error saying %q", c.name, err, c.want)
			continue
		}
		// the stack shows where the worker panicked
		if !strings.Contains(string(pe.Stack), "panics_test.panicker") {
			t.Errorf("%s: the stack does not show the panicking function:\n%s", c.name, pe.Stack)
		}
		var re runtime.Error
		if errors.As(err, &re) != c.runtime {
			t.Errorf("%s: errors.As runtime.Error = %v, want %v", c.name, !c.runtime, c.runtime)
		}
	}
	// an *Error re-raised by an inner pool keeps its stack
	inner := worker("deep")
	if got := worker(inner); got != inner {
		t.Errorf("re-raised *Error replaced: %v", got)
	}
}

func TestCatcher(t *testing.T) {
	var c panics.Catcher
	c.Repanic() // nothing caught: no panic
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Recover()
			if i == 2 {
				panicker(fmt.Sprintf("worker %d", i))
			}
		}()
	}
	wg.Wait()
	got := func() (v any) {
		defer func() { v = recover() }()
		c.Repanic()
		return nil
	}()
	err, ok := got.(*panics.Error)
	if !ok || err.Value != "worker 2" || !strings.Contains(string(err.Stack), "panicker") {
		t.Fatalf("Repanic raised %v, want the *Error of worker 2 with its stack", got)
	}
}

// A worker's panic becomes the error its pool returns.
func ExampleOf() {
	errs := make(chan error)
	go func() {
		defer func() {
			if err := panics.Of(recover()); err != nil {
				errs <- err
			}
		}()
		var m map[string]int
		m["x"]++
	}()
	err := <-errs
	fmt.Println(err.(*panics.Error).Value)
	// Output: assignment to entry in nil map
}
