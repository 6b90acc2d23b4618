package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
