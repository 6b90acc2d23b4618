package methods

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/kn"
	"github.com/vomc/vomc/leafprior"
	"github.com/vomc/vomc/transformer"
)

// Workload is what MemoryEstimate sizes the methods' memory for: Windows
// windows of N symbols over A symbols, evaluated on Workers workers, with
// D the methods' default depth, and the Tune training windows of TuneN
// symbols on which KN tunes δ (Tune = 0: the evaluated windows).
type Workload struct {
	A, D        int
	Windows, N  int
	Tune, TuneN int
	Workers     int
}

// MemoryEstimate estimates the memory the methods of list hold while they
// evaluate w, each by its kind's estimate (kinds): per worker a
// count-based state of at most one node per context of the window
// (ctw.MemoryEstimate at the method's depth D, order or k, else w.D) for
// ctw, ppm, markov, construct and kn; for kn without a fixed delta also
// the δ tuning (kn.TuneMemoryEstimate and a state per worker); an npy
// method's distributions; a torch method's distributions, as float64s
// and as the engine's float32 file, and the windows handed to the engine
// (not the engine's own process); twice a tf or synth model's files (its weights,
// read and in memory) and, for tf, per worker the forward-only buffers of
// a batch of windows (transformer.Config.PredictionBytes, from the model
// file's header) and the batch's distributions (windows × N × A
// float64s, see eval's batches); for bayes a CTW state per depth 0..D per
// worker (the prior's depths are at most D) and the sparse leaves' memo
// at its cap (leafprior.MemoEntries entries). Other methods count nothing.
func MemoryEstimate(list List, w Workload) int64 {
	est := int64(0)
	for _, s := range list {
		if f := kinds[s.Kind].memory; f != nil {
			est += f(s, w)
		}
	}
	return est
}

// workers is w.Workers, at least 1.
func (w Workload) workers() int64 { return int64(max(1, w.Workers)) }

// state is a count-based state's memory at depth D on windows of w.
func (w Workload) state(D int) int64 {
	return ctw.MemoryEstimate(ctw.Config{A: w.A, D: D}, int64(w.N))
}

// stateMemory is the estimate of a count-based method whose depth is the
// parameter depth (w.D when not given): a state per worker.
func stateMemory(depth string) func(Spec, Workload) int64 {
	return func(s Spec, w Workload) int64 {
		return w.workers() * w.state((&args{Spec: s}).int(depth, w.D))
	}
}

// knMemory is kn's estimate: a state per worker, and without a fixed
// delta the tuning's (on the Tune windows, else the evaluated ones).
func knMemory(s Spec, w Workload) int64 {
	a := &args{Spec: s}
	depth := a.int("order", w.D)
	est := w.workers() * w.state(depth)
	if _, fixed := a.float("delta", 0); !fixed {
		tuneW, tuneN := w.Windows, w.N
		if w.Tune > 0 {
			tuneW, tuneN = w.Tune, w.TuneN
		}
		est += kn.TuneMemoryEstimate(tuneW, tuneN, depth) + w.workers()*w.state(depth)
	}
	return est
}

// bayesMemory is bayes's estimate: a CTW state per depth 0..w.D per
// worker and the sparse leaves' memo at its cap.
func bayesMemory(_ Spec, w Workload) int64 {
	est := int64(0)
	for d := 0; d <= w.D; d++ {
		est += w.workers() * w.state(d)
	}
	return est + leafprior.MemoEntries*int64(64+8*w.A)
}

// npyMemory is npy's estimate: the distributions, windows × N × A float64s.
func npyMemory(_ Spec, w Workload) int64 {
	return int64(w.Windows) * int64(w.N) * int64(w.A) * 8
}

// tfMemory is tf's estimate: twice the model's files and a batch per
// worker (tfBatchBytes).
func tfMemory(s Spec, w Workload) int64 {
	path, _ := s.Value("path")
	return 2*pathBytes(path) + w.workers()*tfBatchBytes(path, w) + interveneBytes(s)
}

// interveneBytes is what an intervention keeps besides the model: the
// reference windows (refs·N bytes) and, per ablated head, its outputs on
// them (resample: refs·N·hs floats; mean: their sum, then N·hs floats).
func interveneBytes(s Spec) int64 {
	v, ok := s.Value("ablate")
	mode, _ := s.Value("mode")
	if !ok || (mode != "mean" && mode != "resample") {
		return 0
	}
	path, _ := s.Value("path")
	cfg, err := transformer.ReadModelConfig(modelFile(path))
	if err != nil {
		return 0
	}
	refs := int64(DefaultRefs)
	if r, ok := s.Value("refs"); ok && r != RefsTest { // the evaluated windows are counted already
		n, _ := strconv.Atoi(r)
		refs = int64(n)
	}
	hs, _ := transformer.ParseHeads(v)
	N := int64(cfg.Context)
	total := refs * N
	for _, h := range hs {
		if h.Layer < len(cfg.Heads) {
			total += 4 * refs * N * int64(cfg.Embed/cfg.Heads[h.Layer])
		}
	}
	return total
}

// synthMemory is synth's estimate: twice the model's files.
func synthMemory(s Spec, _ Workload) int64 {
	path, _ := s.Value("path")
	return 2 * pathBytes(path)
}

// tfBatchBytes is what one worker evaluating the tf model at path (a
// run's directory or its model file) holds besides the model: the
// forward-only buffers of its passes and the distributions of the batch
// of windows eval gives it (BatchWindows rounded up to eval's chunks of
// 4). It is 0 when the model's header cannot be read (Build then
// reports why).
func tfBatchBytes(path string, w Workload) int64 {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "model.safetensors")
	}
	cfg, err := transformer.ReadModelConfig(file)
	if err != nil {
		return 0
	}
	batch := (cfg.BatchWindows(w.N) + 3) / 4 * 4
	return int64(cfg.PredictionBytes()) + int64(batch)*int64(w.N)*int64(w.A)*8
}

// pathBytes is the size of a file, or of the files directly in a
// directory (0 when it cannot be read).
func pathBytes(p string) int64 {
	info, err := os.Stat(p)
	if err != nil {
		return 0
	}
	if !info.IsDir() {
		return info.Size()
	}
	ents, _ := os.ReadDir(p)
	var s int64
	for _, e := range ents {
		if fi, err := os.Stat(filepath.Join(p, e.Name())); err == nil && fi.Mode().IsRegular() {
			s += fi.Size()
		}
	}
	return s
}
