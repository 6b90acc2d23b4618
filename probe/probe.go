package probe

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// The conditions every probe is fitted in: the model as trained, the
// trained model's features with the training and validation targets
// permuted among the rows of each position band (a probe that can only
// memorise), and the same architecture at its seeded initialisation
// (Result.Init says which).
const (
	Trained  = "trained"
	Shuffled = "shuffled"
	Init     = "init"
)

// Options are the settings of Run.
type Options struct {
	// Model is a run directory of 'vomc train' (either engine) or 'vomc
	// synth', or its model.safetensors.
	Model string
	// Data is the data set (from 'vomc data') whose windows are probed and
	// whose prior defines the targets.
	Data string
	// Backend runs the models (required: the caller chooses it).
	Backend backend.Backend
	// Train, Val and Test are the numbers of windows of each split (0:
	// 400, 100, 200). The splits take whole trees of the data set, in an
	// order drawn from Seed, so no tree has windows in two splits.
	Train, Val, Test int
	// Positions is the number of positions probed per window, drawn
	// uniformly without replacement from Seed (0: 64; −1: every position).
	Positions int
	// Bands are the upper edges of the position bands (0-based positions;
	// nil: 16, 64, 256); the last band ends at the window's end.
	Bands []int
	// Penalties are the relative ridge penalties tried (nil:
	// DefaultPenalties); see ridge.
	Penalties []float64
	// Seed draws the splits, the positions, the shuffles and the
	// bootstrap; InitSeed the control model's initial parameters.
	Seed, InitSeed uint64
	// Bootstrap is the number of resamples of the test windows behind each
	// 95% interval (0: 500).
	Bootstrap int
	// Workers computes the targets (0: GOMAXPROCS).
	Workers int
	// MemoryLimit refuses a run whose features and targets would need more
	// bytes (0: no check).
	MemoryLimit int64
	// Out, if set, is the directory Write stores the result in (checked
	// before any work: an existing output is an error unless Force).
	Out   string
	Force bool
	// Events receives progress (features, targets, probes) and log lines.
	Events events.Sink
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Train, 400)
	def(&o.Val, 100)
	def(&o.Test, 200)
	def(&o.Positions, 64)
	def(&o.Bootstrap, 500)
	def(&o.Workers, runtime.GOMAXPROCS(0))
	if o.Bands == nil {
		o.Bands = []int{16, 64, 256}
	}
	if o.Penalties == nil {
		o.Penalties = DefaultPenalties
	}
	o.Events = events.Or(o.Events)
}

// check reports the first impossible setting.
func (o *Options) check() error {
	bad := func(option string, value any, want string) error { return opterr.Bad("probe", option, value, want) }
	switch {
	case o.Backend == nil:
		return fmt.Errorf("probe: %w", transformer.ErrNoBackend)
	case o.Model == "":
		return bad("Model", "", "a run directory of 'vomc train' or 'vomc synth', or its model.safetensors")
	case o.Data == "":
		return bad("Data", "", "a data set directory (from 'vomc data')")
	case o.Train < 1:
		return bad("Train", o.Train, "at least 1 window")
	case o.Val < 1:
		return bad("Val", o.Val, "at least 1 window")
	case o.Test < 2:
		return bad("Test", o.Test, "at least 2 windows")
	case o.Positions < -1:
		return bad("Positions", o.Positions, "a positive number, or -1 for every position")
	case o.Bootstrap < 1:
		return bad("Bootstrap", o.Bootstrap, "at least 1 resample")
	case !slices.IsSorted(o.Bands) || len(o.Bands) > 0 && o.Bands[0] < 1:
		return bad("Bands", o.Bands, "positive edges in ascending order")
	}
	for _, c := range o.Penalties {
		if !(c > 0) || math.IsInf(c, 0) {
			return bad("Penalties", o.Penalties, "positive numbers")
		}
	}
	return nil
}

// Result is what Run found; Write stores it.
type Result struct {
	Model     string         `json:"model"`
	ModelName string         `json:"model_name"`
	Data      string         `json:"data"`
	Prior     source.Prior   `json:"prior"`
	Streams   []string       `json:"streams"`
	Width     int            `json:"width"`
	Positions int            `json:"positions_per_window"` // −1: every position
	Length    int            `json:"window_length"`        // symbols probed per window: min(data N, model context)
	Windows   map[string]int `json:"windows"`              // per split
	Rows      map[string]int `json:"rows"`                 // per split
	Targets   []Target       `json:"targets"`
	Bands     []Band         `json:"bands"` // the first is every position
	Penalties []float64      `json:"penalties"`
	Seed      uint64         `json:"seed"`
	InitSeed  uint64         `json:"init_seed"`
	Init      string         `json:"init"` // what the Init control's parameters are
	Bootstrap int            `json:"bootstrap"`
	Probes    []Probe        `json:"probes"`
}

// Band is a range [Lo, Hi) of 0-based positions.
type Band struct {
	Lo int `json:"lo"`
	Hi int `json:"hi"`
}

func (b Band) String() string { return fmt.Sprintf("%d-%d", b.Lo, b.Hi) }

// Probe is the probes of one condition, stream and target: one per band
// of Result.Bands (the first over every position), each fitted on that
// band's training rows.
type Probe struct {
	Condition string  `json:"condition"`
	Stream    int     `json:"stream"`
	Target    string  `json:"target"`
	Metric    string  `json:"metric"` // "r2" or "accuracy"
	Scores    []Score `json:"scores"`
}

// Score is a band's probe: the penalty chosen on the band's validation
// rows (relative, see DefaultPenalties) with its validation score, and
// the test score over the band's test rows with its 95% bootstrap
// interval across test windows; for accuracy, Chance is the test accuracy
// of always answering the training rows' most frequent class.
type Score struct {
	Penalty float64         `json:"penalty"`
	Val     jsonfloat.Float `json:"val"`
	Rows    int             `json:"rows"`
	Value   jsonfloat.Float `json:"value"`
	Lo      jsonfloat.Float `json:"lo"`
	Hi      jsonfloat.Float `json:"hi"`
	Chance  jsonfloat.Float `json:"chance,omitempty"`
}

// split is one split's windows, probed positions, features and targets.
type split struct {
	name    string
	windows [][]byte
	pos     [][]int // per window, ascending
	win     []int   // window of each row
	at      []int   // position of each row
	y       matrix  // targets
}

func (s *split) rows() int { return len(s.win) }

// Run fits ridge probes from every residual stream of the model (and of
// the same architecture at initialisation) to every target on the data
// set's windows: the probe of each (condition, stream, target) is fitted
// on the training rows for every penalty, the penalty with the best
// validation score is kept, and its test score is reported for all
// positions and per band, with a 95% percentile interval from resampling
// the test windows.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.Out != "" {
		if err := fsutil.CheckOutputs(io.Discard, o.Force, outputs(o.Out)...); err != nil {
			return nil, fmt.Errorf("probe: %w", err)
		}
	}
	ds, err := dataset.Read(o.Data)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	ts, err := newTargetSet(ds.Manifest.Prior)
	if err != nil {
		return nil, err
	}
	model, err := loadStreamer(o.Backend, o.Model)
	if err != nil {
		return nil, err
	}
	defer model.Free()
	if model.Alphabet() != ds.Manifest.Prior.A {
		return nil, fmt.Errorf("probe: the model has alphabet size %d, the data %d", model.Alphabet(), ds.Manifest.Prior.A)
	}
	T := min(ds.Manifest.N, model.Context())
	res := &Result{Model: ModelFile(o.Model), ModelName: model.Name(), Data: o.Data, Prior: ds.Manifest.Prior,
		Streams: model.Streams(), Width: model.Width(), Positions: o.Positions, Length: T,
		Windows: map[string]int{}, Rows: map[string]int{}, Targets: ts.targets, Penalties: o.Penalties,
		Seed: o.Seed, InitSeed: o.InitSeed, Init: model.initAbout(o.InitSeed), Bootstrap: o.Bootstrap}
	res.Bands = bands(o.Bands, T)
	splits, err := makeSplits(ds, o, T)
	if err != nil {
		return nil, err
	}
	nrows := 0
	for _, s := range splits {
		res.Windows[s.name], res.Rows[s.name] = len(s.windows), s.rows()
		nrows += s.rows()
	}
	need := float64(nrows) * (2*float64(len(res.Streams)*res.Width)*4 + float64(ts.cols)*8)
	if o.MemoryLimit > 0 && need > float64(o.MemoryLimit) {
		return nil, sysmem.Limit(fmt.Sprintf("the features and targets of %d rows", nrows), int64(need), o.MemoryLimit)
	}
	if err := computeTargets(ctx, ts, splits, T, o); err != nil {
		return nil, err
	}
	trained, err := features(ctx, model, splits, T, "features (trained)", o.Events)
	if err != nil {
		return nil, err
	}
	init, err := model.fresh(o.InitSeed)
	if err != nil {
		return nil, err
	}
	defer init.Free()
	initF, err := features(ctx, init, splits, T, "features (init)", o.Events)
	if err != nil {
		return nil, err
	}
	if res.Probes, err = fitAll(ctx, ts, splits, map[string][][]fmatrix{Trained: trained, Shuffled: trained, Init: initF}, res, o); err != nil {
		return nil, err
	}
	if o.Out != "" {
		if err := Write(res, o.Out, o.Force); err != nil {
			return nil, err
		}
		o.Events.Log(fmt.Sprintf("wrote %s, %s and %s in %s", JSONFile, CSVFile, FigureFile, o.Out))
	}
	return res, nil
}

// bands returns every position [0, T) followed by the bands of the edges
// that start before T.
func bands(edges []int, T int) []Band {
	out := []Band{{0, T}}
	lo := 0
	for _, e := range append(slices.Clone(edges), T) {
		if lo >= T {
			break
		}
		hi := min(e, T)
		if hi > lo {
			out = append(out, Band{lo, hi})
		}
		lo = hi
	}
	if len(out) == 2 { // one band: the same as every position
		out = out[:1]
	}
	return out
}

// makeSplits assigns the data set's trees, in an order drawn from the
// seed, to the training, validation and test splits until each has its
// windows, and draws each window's probed positions.
func makeSplits(ds *dataset.Dataset, o Options, T int) ([]*split, error) {
	want := []int{o.Train, o.Val, o.Test}
	if total := o.Train + o.Val + o.Test; total > ds.Windows() {
		return nil, fmt.Errorf("probe: %d windows asked for (%d + %d + %d), the data set has %d", total, o.Train, o.Val, o.Test, ds.Windows())
	}
	byTree := map[int32][]int{}
	var trees []int32
	for w := range ds.Windows() {
		t := ds.TreeOf[w]
		if _, ok := byTree[t]; !ok {
			trees = append(trees, t)
		}
		byTree[t] = append(byTree[t], w)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x70726f6265)) // "probe"
	rng.Shuffle(len(trees), func(i, j int) { trees[i], trees[j] = trees[j], trees[i] })
	splits := []*split{{name: "train"}, {name: "val"}, {name: "test"}}
	k := 0
	for _, t := range trees {
		for k < 3 && len(splits[k].windows) == want[k] {
			k++
		}
		if k == 3 {
			break
		}
		for _, w := range byTree[t] {
			if len(splits[k].windows) < want[k] {
				splits[k].windows = append(splits[k].windows, ds.Window(w)[:T])
			}
		}
	}
	if n := len(splits[2].windows); n < want[2] {
		return nil, fmt.Errorf("probe: only %d test windows left after the other splits took whole trees (want %d): ask for fewer windows", n, want[2])
	}
	for _, s := range splits {
		for w := range s.windows {
			pos := positions(rng, T, o.Positions)
			s.pos = append(s.pos, pos)
			for _, t := range pos {
				s.win, s.at = append(s.win, w), append(s.at, t)
			}
		}
	}
	return splits, nil
}

// positions draws p of 0..T−1 without replacement, ascending (all of
// them when p is −1 or at least T).
func positions(rng *rand.Rand, T, p int) []int {
	if p < 0 || p >= T {
		all := make([]int, T)
		for i := range all {
			all[i] = i
		}
		return all
	}
	pos := rng.Perm(T)[:p]
	slices.Sort(pos)
	return pos
}

// computeTargets fills every split's targets (windows of T symbols), windows
// in parallel.
func computeTargets(ctx context.Context, ts *targetSet, splits []*split, T int, o Options) error {
	total := 0
	for _, s := range splits {
		s.y = newMatrix(s.rows(), ts.cols)
		total += len(s.windows)
	}
	type job struct {
		s    *split
		w, r int
	}
	jobs := make(chan job)
	var (
		mu   sync.Mutex
		done int
		errs []error
		wg   sync.WaitGroup
	)
	exs := make([]*synth.Extractor, o.Workers)
	for i := range exs {
		var err error
		if exs[i], err = ts.extractor(T); err != nil {
			return err
		}
	}
	for _, ex := range exs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				err := ts.fill(ex, j.s.windows[j.w], j.s.pos[j.w], j.s.y, j.r)
				mu.Lock()
				done++
				if err != nil {
					errs = append(errs, err)
				}
				o.Events.Progress("targets", done, total)
				mu.Unlock()
			}
		}()
	}
	for _, s := range splits {
		r := 0
		for w := range s.windows {
			if ctx.Err() != nil {
				break
			}
			jobs <- job{s, w, r}
			r += len(s.pos[w])
		}
	}
	close(jobs)
	wg.Wait()
	if len(errs) > 0 {
		return errs[0]
	}
	return ctx.Err()
}

// features runs the model over every split's windows, B = ⌊InferRows/T⌋
// at a time, and keeps each stream's rows at the probed positions:
// out[split][stream].
func features(ctx context.Context, m streamer, splits []*split, T int, task string, ev events.Sink) ([][]fmatrix, error) {
	S, W := len(m.Streams()), m.Width()
	B := max(1, transformer.InferRows/T)
	total := 0
	for _, s := range splits {
		total += len(s.windows)
	}
	out := make([][]fmatrix, len(splits))
	done := 0
	dst := make([][]float32, S)
	for i, s := range splits {
		out[i] = make([]fmatrix, S)
		for k := range out[i] {
			out[i][k] = fmatrix{s.rows(), W, make([]float32, s.rows()*W)}
		}
		r := 0
		inputs := make([]byte, 0, B*T)
		var rows []int
		for w0 := 0; w0 < len(s.windows); w0 += B {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			nb := min(B, len(s.windows)-w0)
			inputs, rows = inputs[:0], rows[:0]
			for b, x := range s.windows[w0 : w0+nb] {
				inputs = append(inputs, x...)
				for _, t := range s.pos[w0+b] {
					rows = append(rows, b*T+t)
				}
			}
			for k := range dst {
				dst[k] = out[i][k].v[r*W : (r+len(rows))*W]
			}
			if err := m.run(inputs, nb, T, rows, dst); err != nil {
				return nil, fmt.Errorf("probe: %w", err)
			}
			r += len(rows)
			done += nb
			ev.Progress(task, done, total)
		}
	}
	return out, nil
}
