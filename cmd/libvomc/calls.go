package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"sync"

	"github.com/vomc/vomc/panics"
)

// An op is one operation of vomc_call: it decodes req, reads and writes
// the caller's arrays and returns a value encoded as the answer's
// "result" and the answer's blobs.
type op func(ctx context.Context, req []byte, arrays [][]byte) (result any, blobs [][]byte, err error)

// registry holds the answers not yet released and the cancel functions of
// the calls under way, by the caller's call id.
type registry struct {
	mu        sync.Mutex
	next      int64
	answers   map[int64][][]byte
	running   map[int64]context.CancelFunc
	cancelled map[int64]bool // cancelled before the call registered
}

var calls = &registry{answers: map[int64][][]byte{}, running: map[int64]context.CancelFunc{}, cancelled: map[int64]bool{}}

// run runs op name and returns the handle of its answer.
func (r *registry) run(id int64, name string, req []byte, arrays [][]byte) int64 {
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	if r.cancelled[id] {
		cancel()
		delete(r.cancelled, id)
	}
	r.running[id] = cancel
	r.mu.Unlock()
	answer := dispatch(ctx, name, req, arrays)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.running, id)
	cancel()
	r.next++
	r.answers[r.next] = answer
	return r.next
}

// cancel cancels the call made with id (or, when it has not started yet,
// marks it cancelled).
func (r *registry) cancel(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.running[id]; ok {
		c()
	} else {
		r.cancelled[id] = true
	}
}

func (r *registry) part(h int64, i int) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.answers[h]
	if !ok || i < 0 || i >= len(a) {
		return nil, false
	}
	return a[i], true
}

func (r *registry) release(h int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.answers, h)
}

// dispatch runs op name, turning an error or a panic into an error
// answer: the answer's parts are the JSON object and the blobs.
func dispatch(ctx context.Context, name string, req []byte, arrays [][]byte) (answer [][]byte) {
	defer func() {
		if v := recover(); v != nil {
			answer = [][]byte{errorJSON("internal", fmt.Sprintf("vomc: internal error in %s: %v\n%s", name, v, debug.Stack()))}
		}
	}()
	f, ok := ops[name]
	if !ok {
		return [][]byte{errorJSON("value", fmt.Sprintf("vomc: no operation %q (the Python package and the library disagree: reinstall it)", name))}
	}
	res, blobs, err := f(ctx, req, arrays)
	var pe *panics.Error
	switch {
	case errors.As(err, &pe): // recovered on a worker goroutine by the pool
		return [][]byte{errorJSON("internal", fmt.Sprintf("vomc: internal error in %s: %v", name, err))}
	case err != nil:
		return [][]byte{errorJSON(errorKind(ctx, err), err.Error())}
	}
	js, err := json.Marshal(struct {
		Result any `json:"result"`
	}{res})
	if err != nil {
		return [][]byte{errorJSON("internal", "vomc: encoding the answer of "+name+": "+err.Error())}
	}
	return append([][]byte{js}, blobs...)
}

// errorKind names the Python exception an error becomes: not_found
// (FileNotFoundError), exists (FileExistsError), permission
// (PermissionError), cancelled (KeyboardInterrupt) or value (ValueError).
func errorKind(ctx context.Context, err error) string {
	switch {
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return "cancelled"
	case errors.Is(err, fs.ErrNotExist):
		return "not_found"
	case errors.Is(err, fs.ErrExist):
		return "exists"
	case errors.Is(err, fs.ErrPermission):
		return "permission"
	}
	return "value"
}

func errorJSON(kind, msg string) []byte {
	js, _ := json.Marshal(struct {
		Error string `json:"error"`
		Kind  string `json:"kind"`
	}{msg, kind})
	return js
}

// decode reads a request strictly: an unknown field is an error naming it.
func decode(req []byte, v any) error {
	d := json.NewDecoder(bytesReader(req))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("vomc: bad request: %w", err)
	}
	return nil
}
