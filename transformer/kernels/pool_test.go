package kernels

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vomc/vomc/panics"
)

// countParts counts the calls of each part; a part may fan out again.
type countParts struct {
	hits   []atomic.Int32
	nested int
}

func (c *countParts) RunPart(i int) {
	c.hits[i].Add(1)
	if c.nested > 0 {
		inner := &countParts{hits: make([]atomic.Int32, c.nested)}
		Run(inner, c.nested)
		for j := range inner.hits {
			if n := inner.hits[j].Load(); n != 1 {
				panic("nested part run other than once")
			}
		}
	}
}

// TestRunEachPartOnce runs fan-outs back to back, nested and from
// several goroutines at once, with 1 to 4 threads and with the workers
// both spinning (back-to-back calls) and parked (after a pause longer
// than the spin window): every part runs exactly once.
func TestRunEachPartOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		for round := 0; round < 3; round++ {
			var wg sync.WaitGroup
			for g := 0; g < 3; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := 0; k < 50; k++ {
						n := 1 + (k*7+g)%40
						c := &countParts{hits: make([]atomic.Int32, n), nested: k % 3}
						Run(c, n)
						for i := range c.hits {
							if h := c.hits[i].Load(); h != 1 {
								t.Errorf("GOMAXPROCS=%d: part %d of %d ran %d times", procs, i, n, h)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			if round == 1 {
				time.Sleep(spinWindow + 5*time.Millisecond) // the workers park
			}
		}
	}
}

// slowParts sleeps in part 0, so that the caller waits past its spin.
type slowParts struct{ done atomic.Int32 }

func (s *slowParts) RunPart(i int) {
	if i == 0 {
		time.Sleep(callerSpin + 3*time.Millisecond)
	}
	s.done.Add(1)
}

// TestRunCallerBlocks: a caller whose helper is still busy after
// callerSpin blocks and is woken when the last part ends.
func TestRunCallerBlocks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	for k := 0; k < 5; k++ {
		s := &slowParts{}
		Run(s, 8)
		if n := s.done.Load(); n != 8 {
			t.Fatalf("Run returned after %d of 8 parts", n)
		}
	}
}

// panicParts panics in every part but 0, which first sleeps so that the
// pool's workers take the others.
type panicParts struct{ ran atomic.Int32 }

func (p *panicParts) RunPart(i int) {
	p.ran.Add(1)
	if i == 0 {
		time.Sleep(20 * time.Millisecond)
		return
	}
	panic(fmt.Sprintf("part %d fails", i))
}

// TestRunWorkerPanic: a part's panic on a pool worker reaches the caller
// of Run (as a *panics.Error with the worker's stack, or as itself when
// the caller ran that part) after every part has run, instead of ending
// the process; the pool then works as before. Without the recovery in the
// workers this test binary dies.
func TestRunWorkerPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	workers := 0
	for k := 0; k < 5; k++ {
		p := &panicParts{}
		got := func() (v any) {
			defer func() { v = recover() }()
			Run(p, 4)
			return nil
		}()
		var pe *panics.Error
		switch e := got.(type) {
		case *panics.Error:
			pe, workers = e, workers+1
			if s, _ := pe.Value.(string); !strings.HasPrefix(s, "part ") || !strings.Contains(string(pe.Stack), "RunPart") {
				t.Errorf("worker panic %v, stack %q", pe.Value, pe.Stack)
			}
		case string:
			if !strings.HasPrefix(e, "part ") {
				t.Errorf("caller panic %q", e)
			}
		default:
			t.Fatalf("Run with panicking parts returned %v (%T)", got, got)
		}
		if pe != nil && p.ran.Load() != 4 {
			t.Errorf("a worker's panic raised after %d of 4 parts", p.ran.Load())
		}
		c := &countParts{hits: make([]atomic.Int32, 16)}
		Run(c, 16)
		for i := range c.hits {
			if h := c.hits[i].Load(); h != 1 {
				t.Fatalf("after a panic: part %d ran %d times", i, h)
			}
		}
	}
	t.Logf("%d of 5 panics came from a worker", workers)
}

// sumParts sums a row of 256 floats in each part: about the smallest
// part the engine fans out.
type sumParts struct {
	rows [][]float32
	out  []float32
}

func (s *sumParts) RunPart(i int) {
	t := float32(0)
	for _, v := range s.rows[i] {
		t += v
	}
	s.out[i] = t
}

// BenchmarkRunSmallParts is the pool's cost per fan-out of 64 small
// parts (the workers' panic recovery included).
func BenchmarkRunSmallParts(b *testing.B) {
	s := &sumParts{rows: make([][]float32, 64), out: make([]float32, 64)}
	for i := range s.rows {
		s.rows[i] = make([]float32, 256)
	}
	b.ReportAllocs()
	for b.Loop() {
		Run(s, 64)
	}
}
