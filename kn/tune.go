package kn

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

// TuneTolerance is the width of the final golden-section bracket of Tune:
// the returned δ is within TuneTolerance of a local minimiser of the loss.
const TuneTolerance = 1e-4

// cacheBudget is the largest memory, in bytes, that Tune spends on caching
// the δ-independent counts of every window and position; above it each
// evaluation recounts the windows.
const cacheBudget = 1 << 28

// TuneMemoryEstimate estimates the memory that Tune spends on windows
// windows of n symbols at the given order besides its states (one per
// worker): the cached counts when they fit in cacheBudget (12 bytes per
// position and order, and a slice header per window) and a loss per window.
func TuneMemoryEstimate(windows, n, order int) int64 {
	W, N := int64(windows), int64(n)
	entries := int64(0)
	for j := int64(0); j < N; j++ {
		entries += min(int64(order), j) + 1
	}
	entries *= W
	est := 8 * W
	if entries*12 <= cacheBudget {
		est += entries*12 + 24*W
	}
	return est
}

// MeanLoss returns the average per-symbol log-loss, in nats, of the order-D
// Kneser–Ney predictor with discount δ (paper appendix app:kn) over the windows:
//
//	L(δ) = Σ_w Σ_i −ln p_kn(x^w_i | x^w_1..x^w_{i−1}) / Σ_w |w|,
//
// each window evaluated from a fresh state (in context: counts come only from
// the window's own earlier symbols). Windows are evaluated in parallel on
// GOMAXPROCS goroutines and their losses summed in window order, so the
// result does not depend on the number of workers. It returns an error for
// invalid parameters, a symbol outside 0..A−1, or no symbols at all.
func MeanLoss(windows [][]byte, A, order int, delta float64, opts Options) (float64, error) {
	m, err := New(A, order, delta, opts)
	if err != nil {
		return 0, err
	}
	tu, err := newTuner(windows, m, runtime.GOMAXPROCS(0), false)
	if err != nil {
		return 0, err
	}
	return tu.loss(delta), nil
}

// Tune chooses the discount δ ∈ (0, 1) of an order-D Kneser–Ney predictor
// (D = order) that minimises MeanLoss over the training windows, each window
// evaluated in context from a fresh state, and returns it with its mean
// per-symbol log-loss in nats.
//
// The search is a golden-section search on (0, 1), stopped when the bracket
// is narrower than TuneTolerance (22 loss evaluations); the best evaluated
// point is returned. It finds the minimiser when L(δ) is unimodal, as it
// typically is, and a local minimiser otherwise. The search is deterministic
// and, because each window's loss is computed sequentially and the windows'
// losses are summed in a fixed order, its result is identical whatever the
// number of worker goroutines (GOMAXPROCS). The counts that do not depend on
// δ are computed once and cached when they fit in 256 MiB.
func Tune(windows [][]byte, A, order int, opts Options) (delta, meanLossNats float64, err error) {
	return tune(windows, A, order, opts, runtime.GOMAXPROCS(0), true, nil)
}

// TuneEvaluations is the number of loss evaluations (passes over the
// windows) that Tune makes: 22 at TuneTolerance.
var TuneEvaluations = goldenEvaluations(0, 1, TuneTolerance)

// TuneProgress is Tune reporting as it goes: after each loss evaluation it
// calls progress(done, TuneEvaluations) (nil: no reports). Tuning on many
// windows takes minutes: each evaluation is a pass over all of them, and
// their counts are recounted in each pass when they do not fit the cache.
func TuneProgress(windows [][]byte, A, order int, opts Options, progress func(done, total int)) (delta, meanLossNats float64, err error) {
	return tune(windows, A, order, opts, runtime.GOMAXPROCS(0), true, progress)
}

func tune(windows [][]byte, A, order int, opts Options, workers int, cache bool, progress func(done, total int)) (float64, float64, error) {
	m, err := New(A, order, 0.5, opts)
	if err != nil {
		return 0, 0, err
	}
	tu, err := newTuner(windows, m, workers, cache)
	if err != nil {
		return 0, 0, err
	}
	f, done := tu.loss, 0
	if progress != nil {
		f = func(delta float64) float64 {
			l := tu.loss(delta)
			done++
			progress(done, TuneEvaluations)
			return l
		}
	}
	x, fx := goldenSection(f, 0, 1, TuneTolerance)
	return x, fx, nil
}

// goldenEvaluations is the number of evaluations goldenSection makes on
// (lo, hi) at tolerance tol: two, and one per narrowing of the bracket by
// the golden ratio until it is narrower than tol.
func goldenEvaluations(lo, hi, tol float64) int {
	r := (math.Sqrt(5) - 1) / 2
	n := 2
	for a, b := lo, hi; b-a >= tol; n++ {
		b = a + r*(b-a)
	}
	return n
}

// goldenSection minimises f on (lo, hi) until the bracket is narrower than
// tol and returns the best point evaluated and its value. Only interior
// points are evaluated.
func goldenSection(f func(float64) float64, lo, hi, tol float64) (float64, float64) {
	r := (math.Sqrt(5) - 1) / 2
	a, b := lo, hi
	c, d := b-r*(b-a), a+r*(b-a)
	fc, fd := f(c), f(d)
	for b-a >= tol {
		if fc <= fd {
			b, d, fd = d, c, fc
			c = b - r*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + r*(b-a)
			fd = f(d)
		}
	}
	if fd < fc {
		return d, fd
	}
	return c, fc
}

// stat is the δ-independent part of one order's term for one position: the
// count of the symbol that occurred, the context total and distinct count.
type stat struct{ c, t, n uint32 }

type tuner struct {
	m       *KN
	windows [][]byte
	total   int
	workers int
	stats   [][]stat // per window, nil unless cached
	states  []*state // per worker, for recounting
	losses  []float64
}

func newTuner(windows [][]byte, m *KN, workers int, cache bool) (*tuner, error) {
	tu := &tuner{m: m, windows: windows, workers: max(1, min(workers, len(windows)))}
	entries := 0
	for i, w := range windows {
		if err := predict.Check(w, m.a); err != nil {
			return nil, fmt.Errorf("kn: window %d: %w", i, err)
		}
		tu.total += len(w)
		for j := range w {
			entries += min(m.order, j) + 1
		}
	}
	if tu.total == 0 {
		return nil, errors.New("kn: no symbols in the windows")
	}
	tu.losses = make([]float64, len(windows))
	tu.states = make([]*state, tu.workers)
	for i := range tu.states {
		tu.states[i] = m.newState()
	}
	if cache && entries*12 <= cacheBudget {
		tu.stats = make([][]stat, len(windows))
		tu.parallel(func(worker, i int) {
			tu.stats[i] = tu.count(tu.states[worker], windows[i])
		})
	}
	return tu, nil
}

// count runs st over w from a fresh state and records, for every position
// and every order k = 0..min(D, i), the stats of the symbol that occurred.
func (tu *tuner) count(st *state, w []byte) []stat {
	st.reset()
	out := make([]stat, 0, len(w)*(tu.m.order+1))
	for _, a := range w {
		st.lookup(a)
		for k := range st.ctx {
			c, T, N := st.stats(k, st.found[k+1])
			out = append(out, stat{c, T, N})
		}
		st.update(a)
	}
	return out
}

// parallel runs f(worker, i) for every window i on tu.workers goroutines;
// a panic of f on a worker is raised again on the caller's goroutine, as
// a *panics.Error with the worker's stack, once the workers have returned.
func (tu *tuner) parallel(f func(worker, i int)) {
	n := len(tu.windows)
	if tu.workers == 1 {
		for i := 0; i < n; i++ {
			f(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var caught panics.Catcher
	for w := 0; w < tu.workers; w++ {
		wg.Add(1)
		go func(worker int) {
			defer wg.Done()
			defer caught.Recover()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				f(worker, i)
			}
		}(w)
	}
	wg.Wait()
	caught.Repanic()
}

// loss returns L(δ): every window's summed log-loss is computed sequentially
// and the windows are added in order, so the value is independent of the
// number of workers and of caching.
func (tu *tuner) loss(delta float64) float64 {
	A := tu.m.a
	D := tu.m.order
	tu.parallel(func(worker, i int) {
		w := tu.windows[i]
		sum := 0.0
		if tu.stats != nil {
			st := tu.stats[i]
			j := 0
			for pos := range w {
				p := 1 / float64(A)
				for k := 0; k <= min(D, pos); k++ {
					s := st[j]
					j++
					p = interp(p, s.c, s.t, s.n, delta)
				}
				sum -= math.Log(p)
			}
		} else {
			st := tu.states[worker]
			st.reset()
			for _, a := range w {
				st.lookup(a)
				sum -= math.Log(st.prob(delta))
				st.update(a)
			}
		}
		tu.losses[i] = sum
	})
	total := 0.0
	for _, l := range tu.losses {
		total += l
	}
	return total / float64(tu.total)
}
