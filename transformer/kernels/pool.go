package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A fanout runs the parts 0..parts−1 of a piece of work on the calling
// goroutine and on whichever pool workers are idle: every participant
// claims the next unclaimed part until none is left, so the caller never
// waits for a part that nobody has started (nested fan-outs cannot
// deadlock), and the split into parts, not the scheduling, determines the
// result. A fanout is reused across calls without allocating; stale
// notifications of an earlier call are recognised by the generation.
type fanout struct {
	work  partRunner
	state atomic.Uint64 // generation<<32 | parts<<16 | next part
	done  sync.WaitGroup
	gen   uint32 // owned by the caller
}

// partRunner does one part of a fanout.
type partRunner interface{ runPart(i int) }

type note struct {
	f   *fanout
	gen uint32
}

const maxParts = 1<<16 - 1

var (
	notes     chan note
	notesOnce sync.Once
)

func startPool() {
	n := max(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	notes = make(chan note, 4*n)
	for i := 0; i < n; i++ {
		go func() {
			for nt := range notes {
				nt.f.help(nt.gen)
			}
		}()
	}
}

// claim returns the next part of generation gen, or −1.
func (f *fanout) claim(gen uint32) int {
	for {
		v := f.state.Load()
		if uint32(v>>32) != gen {
			return -1
		}
		parts, next := int(v>>16&0xffff), int(v&0xffff)
		if next >= parts {
			return -1
		}
		if f.state.CompareAndSwap(v, v+1) {
			return next
		}
	}
}

func (f *fanout) help(gen uint32) {
	for {
		i := f.claim(gen)
		if i < 0 {
			return
		}
		f.work.runPart(i)
		f.done.Done()
	}
}

// run does parts 0..parts−1 (≤ maxParts) of f.work, helped by up to
// helpers idle pool workers, and returns when all are done.
func (f *fanout) run(parts, helpers int) {
	if parts <= 0 {
		return
	}
	notesOnce.Do(startPool)
	f.gen++
	gen := f.gen
	f.done.Add(parts)
	f.state.Store(uint64(gen)<<32 | uint64(parts)<<16)
	for i := 0; i < min(helpers, parts-1); i++ {
		select {
		case notes <- note{f, gen}:
		default:
		}
	}
	f.help(gen)
	f.done.Wait()
}

// Parts is work split into independent, numbered parts.
type Parts interface{ RunPart(i int) }

// extFanout runs a caller's Parts.
type extFanout struct {
	fanout
	p   Parts
	off int
}

func (e *extFanout) runPart(i int) { e.p.RunPart(e.off + i) }

var extPool = sync.Pool{New: func() any {
	e := &extFanout{}
	e.work = e
	return e
}}

// Run calls p.RunPart(i) for i = 0..n−1 on the calling goroutine and on
// idle workers of the package's goroutine pool (at most GOMAXPROCS at a
// time) and returns when all are done. Parts may run in any order and
// concurrently; a part may itself call Run or a Kernel. Run does not
// allocate (in steady state) when p is a pointer.
func Run(p Parts, n int) {
	w := runtime.GOMAXPROCS(0)
	if n <= 1 || w <= 1 {
		for i := 0; i < n; i++ {
			p.RunPart(i)
		}
		return
	}
	e := extPool.Get().(*extFanout)
	e.p = p
	for off := 0; off < n; off += maxParts {
		e.off = off
		e.run(min(n-off, maxParts), w-1)
	}
	e.p = nil
	extPool.Put(e)
}
