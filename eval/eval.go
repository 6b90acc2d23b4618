// Package eval is vomc's in-context evaluation harness: it runs a set of
// predictors over a set of test windows, each window from a fresh State (the
// method learns the source in context, as in the paper's Fig. 3), and
// reports per-position mean log-loss with confidence intervals, window and
// second-half summaries, and every method's excess loss over a reference
// method (by default the first) with paired confidence intervals.
//
// # Conventions
//
// Windows are test sequences x_1..x_N of one common length N over the
// alphabet {0..A−1}. Position i (1-based, i = 1..N) carries the loss
// −ln P(x_i | x_1^{i−1}) of the method that has seen only the first i−1
// symbols of the same window. All losses are in nats unless a name says
// bits (bits = nats / ln 2).
//
// The "second half" of a window is positions SecondHalfStart..N with
// SecondHalfStart = ⌊N/2⌋ + 1.
//
// # Confidence intervals
//
// All intervals are taken across windows (windows are the independent
// samples): for n windows and per-window values v_1..v_n,
//
//	mean ± c·s/√n,   s² = Σ(v_j − mean)² / (n − 1),
//
// with c the two-sided critical value of CriticalValue: the Student-t
// quantile t_{(1+conf)/2, n−1} for n − 1 < NormalApproxDF and the normal
// quantile z_{(1+conf)/2} otherwise (conf = 0.95 by default). The per-window
// values are: the loss at one position (per-position curves); the mean loss
// over the window or over its second half (summaries); and, for excesses,
// the difference method − reference computed window by window (paired
// intervals, which are much narrower than the difference of two unpaired
// intervals because the methods see the same sequences). With a single
// window SD, Lo and Hi are NaN.
//
// # Determinism
//
// Windows are grouped into fixed chunks of consecutive windows. Each chunk
// is accumulated in window order (Welford's update) and the chunks are
// merged in chunk order (Chan et al.'s pairwise formula), so the Result is
// bit-for-bit the same for any number of workers. Memory is
// O(workers × G × methods × N·A), independent of the number of windows:
// no windows × N loss matrix is ever held.
//
// # Batches
//
// A method that implements predict.BatchPredictor (a transformer) is
// given G consecutive windows per call — a worker claims enough
// consecutive chunks for the largest BatchWindows(N) of the methods
// (G = 4 windows per chunk times that number of chunks; G = 1 chunk when
// no method batches) — while the other methods still run window by
// window. The grouping changes neither the chunks nor their order, so
// the Result is the one the method's PredictSequence gives, window by
// window.
package eval

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/predict"
)

// chunkWindows is the number of consecutive windows accumulated together
// before merging. It is fixed (not derived from the number of workers) so
// that results do not depend on the degree of parallelism.
const chunkWindows = 4

// DefaultConfidence is the confidence level used when Config.Confidence is 0.
const DefaultConfidence = 0.95

// Config controls an evaluation. The zero value is ready to use.
type Config struct {
	// Workers is the number of goroutines evaluating windows in parallel;
	// ≤ 0 means runtime.GOMAXPROCS(0). The result does not depend on it.
	Workers int
	// Reference is the exact Name of the method that excesses are measured
	// against; empty: the first. (Which method is the reference is decided
	// by the caller, which knows the methods' kinds: methods.Reference.)
	Reference string
	// Confidence is the two-sided confidence level of all intervals, in
	// (0, 1); 0 means DefaultConfidence (0.95).
	Confidence float64
	// Events, if non-nil, receives the progress of task "windows" after
	// every evaluated window: the number of windows done so far and the
	// total. Calls are serialised (never concurrent) and done increases
	// strictly by one per call, but they come from worker goroutines, so
	// the sink must not block for long.
	Events events.Sink
	// Labels are free-form key/value annotations (dataset, seed, model
	// checkpoint, …) copied into Result.Labels and the JSON output.
	Labels map[string]string
	// Pairs are pairs of methods (exact Names) whose paired difference
	// A − B is measured beside the excesses, window by window exactly as
	// an excess over the reference is (Result.Pairs).
	Pairs []Pair
}

// Pair names two methods, for the paired difference A − B of their
// losses.
type Pair struct{ A, B string }

// PairResult is the paired difference A − B of two methods' losses, in
// nats: the same statistics, computed the same way on the same windows,
// as a method's excess over the reference (MethodResult.Excess,
// ExcessWindow, ExcessSecondHalf are the pair (method, reference)), so
// that a pair (M, reference) gives M's excess to the last bit.
type PairResult struct {
	A, B string
	// Position[i−1] is the mean of A's loss − B's at position i, with
	// its paired confidence interval across windows.
	Position []Interval
	// Window and SecondHalf are the paired differences of the mean loss
	// per symbol over the window and over its second half.
	Window, SecondHalf Interval
}

// Interval is a sample mean with its confidence interval across windows.
// Units are those of the series it belongs to (nats in a Result).
type Interval struct {
	// Mean is the sample mean over windows.
	Mean float64
	// SD is the sample standard deviation over windows (divisor n − 1);
	// NaN for a single window.
	SD float64
	// Lo and Hi are the interval bounds Mean ∓ c·SD/√n (see the package
	// documentation for c); NaN for a single window.
	Lo, Hi float64
}

// HalfWidth is the half-width (Hi − Lo)/2 of the interval.
func (iv Interval) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }

// Bits returns the interval converted from nats to bits (every field divided
// by ln 2).
func (iv Interval) Bits() Interval {
	return Interval{
		Mean: predict.Nats2Bits(iv.Mean),
		SD:   predict.Nats2Bits(iv.SD),
		Lo:   predict.Nats2Bits(iv.Lo),
		Hi:   predict.Nats2Bits(iv.Hi),
	}
}

// MethodResult holds everything measured for one method. All values are
// in nats (per symbol); use Interval.Bits for bits.
type MethodResult struct {
	// Name is the predictor's Name.
	Name string
	// Position[i−1] is the mean loss at position i = 1..N with its
	// confidence interval across windows.
	Position []Interval
	// Excess[i−1] is the mean of (loss of this method − loss of the
	// reference) at position i, with its paired confidence interval. It is
	// identically zero for the reference itself.
	Excess []Interval
	// Window is the mean loss per symbol over the whole window (1..N); the
	// interval is across the per-window means.
	Window Interval
	// SecondHalf is the mean loss per symbol over positions
	// SecondHalfStart..N; the interval is across the per-window means.
	SecondHalf Interval
	// ExcessWindow and ExcessSecondHalf are the paired excesses over the
	// reference of Window and SecondHalf.
	ExcessWindow, ExcessSecondHalf Interval
	// SecondHalfWindows[j] is the mean loss per symbol over the second
	// half of window j (nats), so that two methods evaluated on the same
	// windows can be compared by a paired test (PairedSecondHalf); nil in
	// results written before it was kept.
	SecondHalfWindows []float64
	// FirstHalfWindows[j] is the mean loss per symbol over positions
	// 1..SecondHalfStart−1 of window j (nats), for paired tests of the
	// first half (PairedFirstHalf); nil in results written before it was
	// kept.
	FirstHalfWindows []float64
}

// PairedFirstHalf is PairedSecondHalf over the first halves of the
// windows (FirstHalfWindows).
func PairedFirstHalf(a, b *MethodResult, conf float64) (d Interval, ok bool) {
	return pairedOf(a.FirstHalfWindows, b.FirstHalfWindows, conf)
}

// pairedOf is the paired interval of the per-window values x − y.
func pairedOf(x, y []float64, conf float64) (Interval, bool) {
	n := len(x)
	if n < 2 || len(y) != n {
		return Interval{}, false
	}
	if _, _, err := CriticalValue(n, conf); err != nil {
		return Interval{}, false
	}
	diff := make([]float64, n)
	for j := range n {
		diff[j] = x[j] - y[j]
	}
	return MeanInterval(diff, conf), true
}

// PairedSecondHalf is the mean over windows of a's second-half loss minus
// b's, with its paired confidence interval (MeanInterval of the
// differences: Student-t at level conf, across windows); ok is false
// unless both hold per-window values for the same number (≥ 2) of windows
// and conf lies in (0, 1).
func PairedSecondHalf(a, b *MethodResult, conf float64) (d Interval, ok bool) {
	return pairedOf(a.SecondHalfWindows, b.SecondHalfWindows, conf)
}

// Result is the outcome of Evaluate. It is plain data: it can be written
// with WriteCSV, WriteJSON and WriteSummaryTable and read back with
// LoadJSON.
type Result struct {
	// Windows is the number of windows evaluated (n, the sample size of
	// every interval).
	Windows int
	// N is the window length: positions are 1..N.
	N int
	// AlphabetSize is A: symbols are 0..A−1.
	AlphabetSize int
	// Confidence is the two-sided confidence level of the intervals.
	Confidence float64
	// Critical is the multiplier c of the intervals mean ± c·SD/√n (NaN for
	// a single window).
	Critical float64
	// CIMethod is "student-t" or "normal": where Critical came from.
	CIMethod string
	// SecondHalfStart is the first (1-based) position of the second half,
	// ⌊N/2⌋ + 1.
	SecondHalfStart int
	// Reference is the index in Methods of the reference method.
	Reference int
	// Labels are the annotations from Config.Labels.
	Labels map[string]string
	// Methods are the results in the order of the predictors given.
	Methods []MethodResult
	// Pairs are the paired differences of Config.Pairs, in their order.
	Pairs []PairResult
}

// Pair returns the paired difference a − b, or nil when it was not
// measured.
func (r *Result) Pair(a, b string) *PairResult {
	for i := range r.Pairs {
		if r.Pairs[i].A == a && r.Pairs[i].B == b {
			return &r.Pairs[i]
		}
	}
	return nil
}

// Ref returns the reference method's result.
func (r *Result) Ref() *MethodResult { return &r.Methods[r.Reference] }

// Method returns the result of the method with the given name, or nil.
func (r *Result) Method(name string) *MethodResult {
	for i := range r.Methods {
		if r.Methods[i].Name == name {
			return &r.Methods[i]
		}
	}
	return nil
}

// EvaluateFlat is Evaluate on windows stored back to back in one slice:
// window j is data[j·N : (j+1)·N]. len(data) must be a positive multiple
// of N. The data are not copied.
func EvaluateFlat(ctx context.Context, data []byte, N, A int, preds []predict.Predictor, cfg Config) (*Result, error) {
	if N <= 0 {
		return nil, fmt.Errorf("eval: window length %d must be positive", N)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("eval: no windows (empty data)")
	}
	if len(data)%N != 0 {
		return nil, fmt.Errorf("eval: data length %d is not a multiple of the window length %d", len(data), N)
	}
	windows := make([][]byte, len(data)/N)
	for j := range windows {
		windows[j] = data[j*N : (j+1)*N : (j+1)*N]
	}
	return Evaluate(ctx, windows, A, preds, cfg)
}

// Evaluate runs every predictor on every window, each window from a fresh
// State (in-context learning), and returns per-position and summary
// statistics as described in the package documentation. windows must be
// non-empty, of one common non-zero length N, with symbols in 0..A−1; every
// predictor must have alphabet size A and a distinct, non-empty Name.
//
// It returns an error (never panics) on bad input, if a predictor assigns a
// non-finite loss (probability 0 or NaN to an observed symbol), if ctx
// is cancelled (the error then wraps ctx.Err()), or if a predictor panics
// on a worker goroutine (the error then wraps a *panics.Error: the value
// and the worker's stack).
func Evaluate(ctx context.Context, windows [][]byte, A int, preds []predict.Predictor, cfg Config) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ref, conf, err := validate(windows, A, preds, cfg)
	if err != nil {
		return nil, err
	}
	pairs, err := pairIndices(preds, cfg.Pairs)
	if err != nil {
		return nil, err
	}
	crit, ciMethod, err := CriticalValue(len(windows), conf)
	if err != nil {
		return nil, err
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nChunks := (len(windows) + chunkWindows - 1) / chunkWindows
	workers = min(workers, nChunks)

	M, N := len(preds), len(windows[0])
	lay := layout{M: M, N: N, half: N/2 + 1}
	for m := range M {
		lay.diffs = append(lay.diffs, [2]int{m, ref})
	}
	lay.diffs = append(lay.diffs, pairs...)
	perWindow := make([]float64, 2*len(windows)*M) // [j*M+m]: second-half mean; [(n+j)*M+m]: first-half mean
	var progress func(done, total int)
	if cfg.Events != nil {
		progress = events.ProgressFunc(cfg.Events, "windows")
	}
	total, err := run(ctx, windows, preds, lay, workers, progress, perWindow)
	if err != nil {
		return nil, err
	}

	res := &Result{
		Windows:         len(windows),
		N:               N,
		AlphabetSize:    A,
		Confidence:      conf,
		Critical:        crit,
		CIMethod:        ciMethod,
		SecondHalfStart: lay.half,
		Reference:       ref,
		Methods:         make([]MethodResult, M),
	}
	if len(cfg.Labels) > 0 {
		res.Labels = make(map[string]string, len(cfg.Labels))
		for k, v := range cfg.Labels {
			res.Labels[k] = v
		}
	}
	res.fill(preds, lay, total, crit, perWindow)
	return res, nil
}

// fill sets the methods' and the pairs' statistics of res from the
// merged accumulator (critical value crit) and the per-window half means.
func (res *Result) fill(preds []predict.Predictor, lay layout, total *welford, crit float64, perWindow []float64) {
	M, N, n, nw := lay.M, lay.N, total.n, res.Windows
	iv := func(k int) Interval { return interval(total.mean[k], total.m2[k], n, crit) }
	diff := func(d int) (pos []Interval, whole, second Interval) {
		pos = make([]Interval, N)
		for i := range N {
			pos[i] = iv(lay.diff(d, i))
		}
		return pos, iv(lay.diffSummary(d, 0)), iv(lay.diffSummary(d, 1))
	}
	for m := range M {
		mr := &res.Methods[m]
		mr.Name = preds[m].Name()
		mr.Position = make([]Interval, N)
		for i := range N {
			mr.Position[i] = iv(lay.loss(m, i))
		}
		mr.Window = iv(lay.summary(m, 0))
		mr.SecondHalf = iv(lay.summary(m, 1))
		mr.Excess, mr.ExcessWindow, mr.ExcessSecondHalf = diff(m)
		mr.SecondHalfWindows = make([]float64, nw)
		mr.FirstHalfWindows = make([]float64, nw)
		for j := range nw {
			mr.SecondHalfWindows[j] = perWindow[j*M+m]
			mr.FirstHalfWindows[j] = perWindow[(nw+j)*M+m]
		}
	}
	for d := M; d < len(lay.diffs); d++ {
		ab := lay.diffs[d]
		pr := PairResult{A: preds[ab[0]].Name(), B: preds[ab[1]].Name()}
		pr.Position, pr.Window, pr.SecondHalf = diff(d)
		res.Pairs = append(res.Pairs, pr)
	}
}

// pairIndices are the indices (a, b) of the predictors each pair names.
func pairIndices(preds []predict.Predictor, pairs []Pair) ([][2]int, error) {
	index := func(name string) int {
		for m, p := range preds {
			if p.Name() == name {
				return m
			}
		}
		return -1
	}
	var out [][2]int
	for k, p := range pairs {
		a, b := index(p.A), index(p.B)
		switch {
		case a < 0 || b < 0:
			all := make([]string, len(preds))
			for m, q := range preds {
				all[m] = fmt.Sprintf("%q", q.Name())
			}
			return nil, fmt.Errorf("eval: pair %q − %q: %q not among the predictors (%s)", p.A, p.B, map[bool]string{true: p.A, false: p.B}[a < 0], strings.Join(all, ", "))
		case a == b:
			return nil, fmt.Errorf("eval: pair %q − %q: a method paired with itself", p.A, p.B)
		case slices.Index(pairs[:k], p) >= 0:
			return nil, fmt.Errorf("eval: pair %q − %q given twice", p.A, p.B)
		}
		out = append(out, [2]int{a, b})
	}
	return out, nil
}

// validate checks the inputs and returns the reference index and the
// confidence level to use.
func validate(windows [][]byte, A int, preds []predict.Predictor, cfg Config) (int, float64, error) {
	if A < 1 || A > 256 {
		return 0, 0, fmt.Errorf("eval: alphabet size %d outside 1..256", A)
	}
	if len(preds) == 0 {
		return 0, 0, fmt.Errorf("eval: no predictors")
	}
	names := make(map[string]int, len(preds))
	for m, p := range preds {
		if p == nil {
			return 0, 0, fmt.Errorf("eval: predictor %d is nil", m)
		}
		name := p.Name()
		if name == "" {
			return 0, 0, fmt.Errorf("eval: predictor %d has an empty name", m)
		}
		if prev, dup := names[name]; dup {
			return 0, 0, fmt.Errorf("eval: predictors %d and %d have the same name %q", prev, m, name)
		}
		names[name] = m
		if a := p.AlphabetSize(); a != A {
			return 0, 0, fmt.Errorf("eval: predictor %d (%q) has alphabet size %d, want %d", m, name, a, A)
		}
	}
	ref := 0
	if cfg.Reference != "" {
		r, ok := names[cfg.Reference]
		if !ok {
			all := make([]string, len(preds))
			for m, p := range preds {
				all[m] = fmt.Sprintf("%q", p.Name())
			}
			return 0, 0, fmt.Errorf("eval: reference method %q not among the predictors (%s)", cfg.Reference, strings.Join(all, ", "))
		}
		ref = r
	}
	conf := cfg.Confidence
	if conf == 0 {
		conf = DefaultConfidence
	}
	if !(conf > 0 && conf < 1) {
		return 0, 0, fmt.Errorf("eval: confidence level %v outside (0, 1)", conf)
	}
	if len(windows) == 0 {
		return 0, 0, fmt.Errorf("eval: no windows")
	}
	N := len(windows[0])
	if N == 0 {
		return 0, 0, fmt.Errorf("eval: window 0 is empty")
	}
	for j, w := range windows {
		if len(w) != N {
			return 0, 0, fmt.Errorf("eval: window %d has length %d, want %d (the length of window 0)", j, len(w), N)
		}
		if A == 256 {
			continue
		}
		for i, s := range w {
			if int(s) >= A {
				return 0, 0, fmt.Errorf("eval: window %d (0-based), position %d (1-based): symbol %d outside the alphabet 0..%d", j, i+1, s, A-1)
			}
		}
	}
	return ref, conf, nil
}

// layout maps the series onto the flat per-window sample vector: M·N
// losses, then N differences per entry of diffs, then 2 summaries per
// method (window mean, second-half mean), then 2 per difference (the same
// differences). The differences are loss(a) − loss(b) for each (a, b) of
// diffs: (m, reference) for the excess of every method m < M, then the
// pairs of Config.Pairs.
type layout struct {
	M, N, half int
	diffs      [][2]int
}

func (l layout) series() int              { return (l.M + len(l.diffs)) * l.N }
func (l layout) size() int                { return l.series() + 2*l.M + 2*len(l.diffs) }
func (l layout) loss(m, i int) int        { return m*l.N + i }
func (l layout) diff(d, i int) int        { return (l.M+d)*l.N + i }
func (l layout) summary(m, which int) int { return l.series() + 2*m + which }
func (l layout) diffSummary(d, which int) int {
	return l.series() + 2*l.M + 2*d + which
}

// run evaluates all windows and returns the merged accumulator.
//
// perWindow[j*M+m] receives method m's second-half mean on window j and
// perWindow[(n+j)*M+m] its first-half mean (n windows).
func run(ctx context.Context, windows [][]byte, preds []predict.Predictor, lay layout, workers int, progress func(done, total int), perWindow []float64) (*welford, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nChunks := (len(windows) + chunkWindows - 1) / chunkWindows
	group := groupChunks(preds, lay.N, nChunks)
	r := &runner{
		ctx:       ctx,
		cancel:    cancel,
		windows:   windows,
		lay:       lay,
		progress:  progress,
		perWindow: perWindow,
		nChunks:   nChunks,
		group:     group,
		total:     newWelford(lay.size()),
		pending:   map[int]*welford{},
		// at most 2·workers groups are started but not yet merged, so
		// memory stays O(workers) even if one group is slow
		tokens: make(chan struct{}, 2*workers),
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { // a predictor's bug: the call's error, not a crash
				if err := panics.Of(recover()); err != nil {
					r.fail(fmt.Errorf("eval: %w", err))
				}
			}()
			w := &worker{lay: lay, preds: preds}
			w.init(group * chunkWindows)
			r.work(w)
		}()
	}
	wg.Wait()

	if r.firstErr != nil {
		return nil, r.firstErr
	}
	if r.merged != r.nChunks {
		err := ctx.Err()
		if err == nil {
			err = context.Canceled
		}
		return nil, fmt.Errorf("eval: evaluation interrupted after %d of %d windows: %w", r.done, len(windows), err)
	}
	return r.total, nil
}

// groupChunks is the number of consecutive chunks a worker evaluates
// together: enough for the largest batch (predict.BatchPredictor's
// BatchWindows for windows of N symbols) of the methods, 1 when none
// batches, at most nChunks.
func groupChunks(preds []predict.Predictor, N, nChunks int) int {
	g := 1
	for _, p := range preds {
		if bp, ok := p.(predict.BatchPredictor); ok {
			g = max(g, (bp.BatchWindows(N)+chunkWindows-1)/chunkWindows)
		}
	}
	return max(1, min(g, nChunks))
}

// runner is the state that run's workers share. Groups of group
// consecutive chunks of chunkWindows windows are handed out in order;
// each chunk is accumulated on its own and the accumulators are merged
// into total in chunk order, so the result does not depend on the number
// of workers, their timing or the grouping.
type runner struct {
	ctx       context.Context
	cancel    context.CancelFunc
	windows   [][]byte
	lay       layout
	progress  func(done, total int)
	perWindow []float64
	nChunks   int
	group     int // chunks per claim
	total     *welford
	tokens    chan struct{} // one per group started but not yet merged

	mu       sync.Mutex
	firstErr error
	next     int              // first chunk of the next group to hand out
	merged   int              // chunks merged into total so far
	pending  map[int]*welford // finished, not yet merged
	free     []*welford       // merged accumulators for reuse
	done     int              // windows evaluated
}

// work evaluates groups of chunks with w until none is left, the context
// is cancelled or a window fails.
func (r *runner) work(w *worker) {
	var accs []*welford
	for {
		c, ok := r.claim(&accs)
		if !ok {
			return
		}
		if !r.chunks(w, c, accs) {
			return
		}
		r.commit(c, accs)
	}
}

// claim takes a token and the next group of chunks, c..c+len(*accs)−1,
// with an accumulator for each (reset, reused when one is free) in
// *accs. ok is false when the context is cancelled or every chunk has
// been handed out.
func (r *runner) claim(accs *[]*welford) (c int, ok bool) {
	select {
	case r.tokens <- struct{}{}:
	case <-r.ctx.Done():
		return 0, false
	}
	r.mu.Lock()
	c = r.next
	n := max(0, min(r.group, r.nChunks-c))
	r.next += n
	*accs = (*accs)[:0]
	for range n {
		var acc *welford
		if k := len(r.free); k > 0 {
			acc, r.free = r.free[k-1], r.free[:k-1]
		}
		*accs = append(*accs, acc)
	}
	r.mu.Unlock()
	if n == 0 {
		<-r.tokens
		return 0, false
	}
	for i, acc := range *accs {
		if acc == nil {
			acc = newWelford(r.lay.size())
			(*accs)[i] = acc
		}
		acc.reset()
	}
	return c, true
}

// chunks evaluates the windows of the chunks c, c+1, … (one accumulator
// each in accs) with w into the accumulators and the per-window half
// means; it reports false when the context was cancelled or a window
// failed (the failure recorded by fail).
func (r *runner) chunks(w *worker, c int, accs []*welford) bool {
	lo, hi := c*chunkWindows, min((c+len(accs))*chunkWindows, len(r.windows))
	if err := r.ctx.Err(); err != nil {
		return false
	}
	if err := w.batch(lo, r.windows[lo:hi]); err != nil {
		r.fail(err)
		return false
	}
	for j := lo; j < hi; j++ {
		if err := r.ctx.Err(); err != nil {
			return false
		}
		if err := w.window(j, j-lo, r.windows[j]); err != nil {
			r.fail(err)
			return false
		}
		accs[j/chunkWindows-c].add(w.x)
		r.halves(j, w.x)
		r.step()
	}
	return true
}

// step counts a window evaluated and reports the progress (unlocking
// even when the callback panics, so that the recovering worker can record
// the failure).
func (r *runner) step() {
	if r.progress == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	r.progress(r.done, len(r.windows))
}

// halves stores window j's second-half and first-half mean loss of each
// method m (nats per symbol) from its sample vector x. The first half
// (positions 1..half−1) is recovered from the window mean and the
// second-half mean (positions half..N): (whole·N − second·(N−half+1)) /
// (half−1); it is NaN when N = 1, which has no first half.
func (r *runner) halves(j int, x []float64) {
	lay, nw := r.lay, len(r.windows)
	for m := range lay.M {
		whole, second := x[lay.summary(m, 0)], x[lay.summary(m, 1)]
		r.perWindow[j*lay.M+m] = second
		first := math.NaN() // no first half when N = 1
		if lay.half > 1 {
			first = (whole*float64(lay.N) - second*float64(lay.N-lay.half+1)) / float64(lay.half-1)
		}
		r.perWindow[(nw+j)*lay.M+m] = first
	}
}

// commit records the accumulators of chunks c, c+1, … and merges every
// finished chunk that is next in order into total, keeping their
// accumulators for reuse and releasing a group's token when its last
// chunk is merged.
func (r *runner) commit(c int, accs []*welford) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, acc := range accs {
		r.pending[c+i] = acc
	}
	for {
		p, ok := r.pending[r.merged]
		if !ok {
			return
		}
		r.total.merge(p)
		delete(r.pending, r.merged)
		r.free = append(r.free, p)
		r.merged++
		if r.merged%r.group == 0 || r.merged == r.nChunks {
			<-r.tokens
		}
	}
}

// fail records the first error and cancels the evaluation.
func (r *runner) fail(err error) {
	r.mu.Lock()
	if r.firstErr == nil {
		r.firstErr = err
	}
	r.mu.Unlock()
	r.cancel()
}

// worker holds one goroutine's scratch buffers.
type worker struct {
	lay   layout
	preds []predict.Predictor
	// loss[k*M+m] is method m's loss at every position (length N) of
	// the k-th window of a group
	loss [][]float64
	// dist[k] holds the distributions (N·A) of the k-th window of a
	// group for a batching method
	dist [][]float64
	x    []float64 // the sample vector of one window
}

// init makes the buffers of groups of up to windows windows.
func (w *worker) init(windows int) {
	M, N := w.lay.M, w.lay.N
	w.loss = make([][]float64, windows*M)
	for k := range w.loss {
		w.loss[k] = make([]float64, N)
	}
	for _, p := range w.preds {
		if _, ok := p.(predict.BatchPredictor); ok {
			A := p.AlphabetSize()
			w.dist = make([][]float64, windows)
			for k := range w.dist {
				w.dist[k] = make([]float64, N*A)
			}
			break
		}
	}
	w.x = make([]float64, w.lay.size())
}

// batch computes the losses of the methods that batch
// (predict.BatchPredictor) on the windows xs, the first of which is
// window lo, with one PredictBatch call each.
func (w *worker) batch(lo int, xs [][]byte) error {
	M := w.lay.M
	for m, p := range w.preds {
		bp, ok := p.(predict.BatchPredictor)
		if !ok {
			continue
		}
		A := p.AlphabetSize()
		dist := w.dist[:len(xs)]
		if err := bp.PredictBatch(xs, dist); err != nil {
			return fmt.Errorf("eval: method %q on windows %d..%d: %w", p.Name(), lo, lo+len(xs)-1, err)
		}
		for k, x := range xs {
			loss, d := w.loss[k*M+m], dist[k]
			for i, s := range x {
				loss[i] = -math.Log(d[i*A+int(s)])
			}
		}
	}
	return nil
}

// window evaluates window j (x, the k-th of its group) with every method
// that does not batch, checks the losses of all, and fills w.x.
func (w *worker) window(j, k int, x []byte) error {
	lay := w.lay
	N := lay.N
	losses := w.loss[k*lay.M : (k+1)*lay.M]
	for m, p := range w.preds {
		if _, ok := p.(predict.BatchPredictor); !ok {
			if _, err := predict.LogLoss(p, x, losses[m]); err != nil {
				return fmt.Errorf("eval: method %q on window %d: %w", p.Name(), j, err)
			}
		}
		for i, v := range losses[m] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("eval: method %q, window %d (0-based), position %d (1-based): loss is %v (probability 0 or NaN assigned to the observed symbol %d)", p.Name(), j, i+1, v, x[i])
			}
		}
	}
	nSecond := float64(N - lay.half + 1)
	for m := range w.preds {
		lx := w.x[lay.loss(m, 0) : lay.loss(m, 0)+N]
		var sWhole, sSecond float64
		for i, v := range losses[m] {
			lx[i] = v
			sWhole += v
			if i+1 >= lay.half {
				sSecond += v
			}
		}
		w.x[lay.summary(m, 0)] = sWhole / float64(N)
		w.x[lay.summary(m, 1)] = sSecond / nSecond
	}
	// the excesses over the reference and the pairs: differences a − b
	// position by position and of the summaries, the same arithmetic for
	// both
	for d, ab := range lay.diffs {
		la, lb := losses[ab[0]], losses[ab[1]]
		ex := w.x[lay.diff(d, 0) : lay.diff(d, 0)+N]
		for i := range ex {
			ex[i] = la[i] - lb[i]
		}
		for which := range 2 {
			w.x[lay.diffSummary(d, which)] = w.x[lay.summary(ab[0], which)] - w.x[lay.summary(ab[1], which)]
		}
	}
	return nil
}
