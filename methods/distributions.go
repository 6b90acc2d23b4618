package methods

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

// Distributions fills out (length len(windows)·N·A, windows all of length
// N) with p's predictive distributions on every window, in the layout
// ExportNPY writes and the npy method reads: row [w, t], at
// out[(w·N+t)·A:], is P(x_{t+1} = · | x_1..x_t) of window w, each window
// from a fresh state (predict.Sequence, so the rows are exactly those of
// an export). Windows are spread over workers goroutines (≤ 0:
// GOMAXPROCS); the result does not depend on it. It stops with ctx's
// error when ctx is cancelled, checked before every window; a panic of the
// predictor on a worker is returned as an error wrapping a *panics.Error
// (the value and the worker's stack).
func Distributions(ctx context.Context, p predict.Predictor, windows [][]byte, out []float64, workers int) error {
	if len(windows) == 0 {
		return fmt.Errorf("distributions: no windows")
	}
	N, A := len(windows[0]), p.AlphabetSize()
	for w, x := range windows {
		if len(x) != N {
			return fmt.Errorf("distributions: windows of different lengths (%d and %d at window %d)", N, len(x), w)
		}
	}
	if len(out) != len(windows)*N*A {
		return fmt.Errorf("distributions: output of %d values, want %d·%d·%d", len(out), len(windows), N, A)
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		next     atomic.Int64
		stop     atomic.Bool
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		stop.Store(true)
	}
	for range min(workers, len(windows)) {
		wg.Go(func() {
			w := -1
			defer func() {
				if err := panics.Of(recover()); err != nil {
					fail(fmt.Errorf("distributions: %s on window %d: %w", p.Name(), w, err))
				}
			}()
			for {
				w = int(next.Add(1)) - 1
				if w >= len(windows) || stop.Load() {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				if err := predict.Sequence(p, windows[w], out[w*N*A:(w+1)*N*A]); err != nil {
					fail(fmt.Errorf("window %d: %w", w, err))
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
