package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vomc/vomc/panics"
)

// A fanout runs the parts 0..parts−1 of a piece of work on the calling
// goroutine and on whichever pool workers are idle: every participant
// claims an unclaimed part until none is left, so the caller never
// waits for a part that nobody has started (nested fan-outs cannot
// deadlock), and the split into parts, not the scheduling, determines the
// result. A fanout is reused across calls without allocating; stale
// notifications of an earlier call are recognised by the generation.
//
// The engine runs dozens of parallel regions per training step, many of
// them a few hundred microseconds long, so waking a parked goroutine (a
// futex wake of an idle core, tens of microseconds to milliseconds on a
// virtual machine) for each would cost a large part of every region. So
// the pool's workers, after a region, spin for a while (spinWindow,
// yielding to other goroutines between polls) watching the board, where
// each fan-out is posted, and the caller spins for its helpers' last parts
// before it blocks: back-to-back regions start and end without a wake-up.
// At most GOMAXPROCS−1 workers spin at a time, and none with GOMAXPROCS =
// 1 (Run and the kernels then run serially on the caller). The windows
// are short and the polling loops yield the CPU now and then (yield), so
// that on a machine with more runnable threads than CPUs a spinning
// thread does not keep the CPU from the helper it waits for: there, with
// 2-ms windows and no yield, C1 trained at 2 threads at a third of the
// speed of the parked pool.
type fanout struct {
	work     partRunner
	state    atomic.Uint64 // generation<<32 | end<<16 | next: parts next..end−1 are unclaimed
	left     atomic.Int32  // parts of the generation not yet finished
	sleeping atomic.Bool   // the caller blocks on wake
	wake     chan struct{} // capacity 1; made by the caller's first run
	gen      uint32        // owned by the caller
	// caught is the first panic of a part on a pool worker: the part
	// counts as done, and run raises it again on the caller (a panic on a
	// worker goroutine would end the process — a Python interpreter
	// holding libvomc with it — where the caller's can be recovered).
	caught atomic.Pointer[panics.Error]
}

// partRunner does one part of a fanout.
type partRunner interface{ runPart(i int) }

type note struct {
	f   *fanout
	gen uint32
}

const maxParts = 1<<16 - 1

// spinWindow is how long a worker polls the board after its last part,
// and callerSpin how long a caller spins for its helpers' last parts
// before it blocks.
const (
	spinWindow = 1 * time.Millisecond
	callerSpin = 200 * time.Microsecond
)

var (
	notes     chan note
	notesOnce sync.Once
	// board is the fan-out posted last (spinning workers help it);
	// spinners counts the workers polling it.
	board    atomic.Pointer[fanout]
	spinners atomic.Int32
)

func startPool() {
	n := max(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	notes = make(chan note, 4*n)
	for i := 0; i < n; i++ {
		go func() {
			for nt := range notes {
				nt.f.help(nt.gen, true)
				spin()
			}
		}()
	}
}

// spin polls the board (and the notes) for work for spinWindow after the
// last part it did, unless GOMAXPROCS−1 workers spin already.
func spin() {
	if spinners.Add(1) > int32(runtime.GOMAXPROCS(0)-1) {
		spinners.Add(-1)
		return
	}
	last := time.Now()
	for i := 1; ; i++ {
		if f := board.Load(); f != nil {
			if v := f.state.Load(); int(v>>16&0xffff) > int(v&0xffff) {
				spinners.Add(-1)
				f.help(uint32(v>>32), true)
				spinners.Add(1)
				last = time.Now()
				continue
			}
		}
		select {
		case nt := <-notes:
			spinners.Add(-1)
			nt.f.help(nt.gen, true)
			spinners.Add(1)
			last = time.Now()
			continue
		default:
		}
		if i%16 != 0 {
			pause()
			continue
		}
		if time.Since(last) > spinWindow {
			break
		}
		yield(i)
	}
	spinners.Add(-1)
}

// yield is the polling loops' pause every 16 polls: other goroutines of
// the process get the processor, and every fourth time other threads —
// the helper being waited for, other processes — the CPU (osYield), so
// that spinning costs little when the machine has more runnable threads
// than CPUs.
func yield(i int) {
	if i%64 == 0 {
		osYield()
		return
	}
	runtime.Gosched()
}

// claim returns an unclaimed part of generation gen, or −1: the first
// one, or with back the last one. The caller takes parts from the front
// and its helpers from the back, so that with two goroutines the caller
// does the first parts and the helper the last ones of every fan-out: the
// rows one op writes are mostly those the next op on the same goroutine
// reads, still in that core's cache, instead of a random half of them
// being in the other core's.
func (f *fanout) claim(gen uint32, back bool) int {
	for {
		v := f.state.Load()
		if uint32(v>>32) != gen {
			return -1
		}
		end, next := int(v>>16&0xffff), int(v&0xffff)
		if next >= end {
			return -1
		}
		if !back && f.state.CompareAndSwap(v, v+1) {
			return next
		}
		if back && f.state.CompareAndSwap(v, v-1<<16) {
			return end - 1
		}
	}
}

func (f *fanout) help(gen uint32, back bool) {
	for {
		i := f.claim(gen, back)
		if i < 0 {
			return
		}
		if back {
			f.workerPart(i)
		} else {
			f.work.runPart(i) // the caller's: a panic unwinds the caller
		}
		if f.left.Add(-1) == 0 && f.sleeping.Load() {
			select {
			case f.wake <- struct{}{}:
			default:
			}
		}
	}
}

// workerPart runs part i on a pool worker, keeping a panic for the
// caller (caught).
func (f *fanout) workerPart(i int) {
	defer func() {
		if err := panics.Of(recover()); err != nil {
			f.caught.CompareAndSwap(nil, err.(*panics.Error))
		}
	}()
	f.work.runPart(i)
}

// run does parts 0..parts−1 (≤ maxParts) of f.work, helped by up to
// helpers idle pool workers, and returns when all are done. A part's
// panic on a worker is raised again here, on the caller, once every part
// is done, as a *panics.Error with the worker's stack.
func (f *fanout) run(parts, helpers int) {
	if parts <= 0 {
		return
	}
	notesOnce.Do(startPool)
	if f.wake == nil {
		f.wake = make(chan struct{}, 1)
	}
	f.gen++
	gen := f.gen
	f.left.Store(int32(parts))
	f.state.Store(uint64(gen)<<32 | uint64(parts)<<16)
	if want := min(helpers, parts-1); want > 0 {
		board.Store(f)
		for i := int(spinners.Load()); i < want; i++ {
			select {
			case notes <- note{f, gen}:
			default:
			}
		}
	}
	f.help(gen, false)
	f.wait()
	board.CompareAndSwap(f, nil)
	if err := f.caught.Swap(nil); err != nil {
		panic(err)
	}
}

// wait returns when every part of the generation is done: it spins for
// callerSpin, then blocks until the last helper wakes it.
func (f *fanout) wait() {
	if f.left.Load() == 0 {
		return
	}
	t0 := time.Now()
	for i := 1; f.left.Load() > 0; i++ {
		if i%16 != 0 {
			pause()
			continue
		}
		if time.Since(t0) < callerSpin {
			yield(i)
			continue
		}
		f.sleeping.Store(true)
		for f.left.Load() > 0 {
			<-f.wake
		}
		f.sleeping.Store(false)
		select { // a token sent after left reached 0
		case <-f.wake:
		default:
		}
		return
	}
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
// time) and returns when all are done. The caller does parts from the
// first one on, the workers from the last one back (see claim). Parts may run in any order and
// concurrently; a part may itself call Run or a Kernel. A part's panic
// reaches the caller of Run (on a worker it is kept until every part is
// done, then raised as a *panics.Error with the worker's stack). Run does
// not allocate (in steady state) when p is a pointer.
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
