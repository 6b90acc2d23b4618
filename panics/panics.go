// Package panics turns a panic on a worker goroutine into a value that its
// pool can hand to the goroutine that called it: an error the call returns
// (Of), or a panic re-raised on the caller's goroutine (Catcher), where the
// caller's own recover sees it. A panic that no goroutine recovers ends the
// process; vomc's pools recover theirs, so that a bug in a predictor
// becomes an error of the call (cmd/libvomc answers it as an internal
// error and the Python interpreter that loaded the library lives on)
// instead of a crash with the worker's stack only.
package panics

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Error is a recovered panic: the value panic was called with and the
// stack of the goroutine that panicked, taken where it was recovered (so
// it shows the panicking call).
type Error struct {
	Value any
	Stack []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("panic: %v\n\ngoroutine stack of the panic:\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic's value when it is an error (a runtime error,
// say), else nil.
func (e *Error) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Of returns v, a value recover returned, as an *Error with the stack of
// the goroutine that calls Of, or nil when v is nil (no panic). Call it in
// the deferred function itself:
//
//	defer func() {
//		if err := panics.Of(recover()); err != nil {
//			fail(err)
//		}
//	}()
func Of(v any) error {
	if v == nil {
		return nil
	}
	if e, ok := v.(*Error); ok {
		return e // re-raised by an inner pool: keep the worker's stack
	}
	return &Error{Value: v, Stack: debug.Stack()}
}

// Catcher keeps the first panic of a pool's workers for a pool whose call
// returns no error: each worker defers Recover, and the caller, once every
// worker has returned, calls Repanic, which panics with that *Error on the
// caller's goroutine. The zero Catcher is ready to use.
type Catcher struct {
	mu  sync.Mutex
	err error
}

// Recover recovers a panic of the goroutine that deferred it (defer
// c.Recover()) and keeps it if it is the first.
func (c *Catcher) Recover() {
	if err := Of(recover()); err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
}

// Err is the first panic recovered (an *Error), or nil.
func (c *Catcher) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Repanic panics with the first panic recovered, if there was one.
func (c *Catcher) Repanic() {
	if err := c.Err(); err != nil {
		panic(err)
	}
}
