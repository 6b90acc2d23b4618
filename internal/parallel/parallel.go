// Package parallel runs independent calls of a function on several
// goroutines.
package parallel

import (
	"runtime"
	"sync"

	"github.com/vomc/vomc/panics"
)

// For calls f(0), …, f(n−1), each once, on up to workers goroutines (≤ 0:
// GOMAXPROCS; 1: in order on the caller's goroutine) and returns when all
// calls have returned. The calls must be independent: results that do not
// depend on the number of workers are the caller's to ensure (e.g. each
// call writes only its own slot). A panic of f on a worker goroutine is
// recovered and, once every worker has returned, raised again on the
// caller's goroutine as a *panics.Error (the value and the worker's
// stack), where the caller's recover sees it.
func For(n, workers int, f func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var caught panics.Catcher
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				for range next { // after a panic, take the rest: the caller is not left blocked
				}
			}()
			defer caught.Recover()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	caught.Repanic()
}
