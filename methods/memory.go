package methods

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
// evaluate w: per worker a count-based state of at most one node per
// context of the window (ctw.MemoryEstimate at the method's depth) for
// ctw, ppm, markov, construct and kn; for kn without a fixed delta also
// the δ tuning (kn.TuneMemoryEstimate and a state per worker); an npy
// method's distributions; twice a tf or synth model's files (its weights,
// read and in memory) and, for tf, per worker the forward-only buffers of
// a batch of windows (transformer.Config.PredictionBytes, from the model
// file's header) and the batch's distributions (windows × N × A
// float64s, see eval's batches); for bayes a CTW state per depth 0..D per worker
// (the prior's depths are at most D) and the sparse leaves' memo at its
// cap (leafprior.MemoEntries entries). Other methods count nothing.
func MemoryEstimate(list string, w Workload) int64 {
	W, n := int64(w.Windows), int64(w.N)
	tuneW, tuneN := w.Windows, w.N
	if w.Tune > 0 {
		tuneW, tuneN = w.Tune, w.TuneN
	}
	workers := int64(max(1, w.Workers))
	est := int64(0)
	for _, item := range strings.Split(list, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		name, params := parts[0], map[string]string{}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			params[k] = v
		}
		depth := w.D
		for _, k := range []string{"D", "order", "k"} {
			if v, err := strconv.Atoi(params[k]); err == nil && v >= 0 {
				depth = v
			}
		}
		state := ctw.MemoryEstimate(ctw.Config{A: w.A, D: depth}, n)
		switch name {
		case "ctw", "ppm", "markov", "construct":
			est += workers * state
		case "kn":
			est += workers * state
			if _, fixed := params["delta"]; !fixed {
				est += kn.TuneMemoryEstimate(tuneW, tuneN, depth) + workers*state
			}
		case "bayes":
			for d := 0; d <= depth; d++ {
				est += workers * ctw.MemoryEstimate(ctw.Config{A: w.A, D: d}, n)
			}
			est += leafprior.MemoEntries * int64(64+8*w.A)
		case "npy":
			est += W * n * int64(w.A) * 8
		case "tf":
			est += 2 * pathBytes(params["path"])
			est += workers * tfBatchBytes(params["path"], w)
		case "synth":
			est += 2 * pathBytes(params["path"])
		}
	}
	return est
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
