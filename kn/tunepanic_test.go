package kn

import (
	"strings"
	"testing"

	"github.com/vomc/vomc/panics"
)

// TestTunerPanic: a panic on one of the tuner's workers is raised again on
// the caller's goroutine, with the worker's stack, where a caller's recover
// (cmd/libvomc's) sees it, instead of ending the process.
func TestTunerPanic(t *testing.T) {
	tu := &tuner{windows: make([][]byte, 20), workers: 3}
	got := func() (v any) {
		defer func() { v = recover() }()
		tu.parallel(func(_, i int) {
			if i == 11 {
				tunerBug()
			}
		})
		return nil
	}()
	pe, ok := got.(*panics.Error)
	if !ok || pe.Value != "tuner bug" || !strings.Contains(string(pe.Stack), "kn.tunerBug") {
		t.Errorf("recovered %v, want the worker's *panics.Error", got)
	}
}

func tunerBug() { panic("tuner bug") }
