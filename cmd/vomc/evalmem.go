package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/study"
)

// knCacheBudget mirrors kn's cacheBudget: the largest δ-tuning cache (12
// bytes per position and order) that kn.Tune keeps in memory.
const knCacheBudget = 1 << 28

// evalBytes estimates the peak memory of `vomc eval`: the process itself,
// the evaluated data (dataBytes: symbols and tree indices, plus a slice
// header per window), the tuning windows (tune of them, 0 when they are
// the evaluated ones), every method's state (one per worker; KN's δ-tuning
// cache; an npy method's distributions; a transformer's weights) and the
// result accumulators. windows are of length N over A symbols; D is the
// methods' default depth. spec is the --methods list.
func evalBytes(spec string, dataBytes int64, windows, N, A, D, tune, tuneN, workers int) int64 {
	W, n := int64(windows), int64(N)
	est := int64(baseBytes) + dataBytes + 24*W
	tuneW, tN := W, n
	if tune > 0 {
		tuneW, tN = int64(tune), int64(tuneN)
		est += tuneW * (tN + 4 + 24)
	}
	workers = max(1, workers)
	items := strings.Split(spec, ",")
	for _, item := range items {
		parts := strings.Split(strings.TrimSpace(item), ":")
		name, params := parts[0], map[string]string{}
		for _, p := range parts[1:] {
			k, v, _ := strings.Cut(p, "=")
			params[k] = v
		}
		depth := D
		for _, k := range []string{"D", "order", "k"} {
			if v, err := strconv.Atoi(params[k]); err == nil && v >= 0 {
				depth = v
			}
		}
		// A count-based state per worker: at most one node per context
		// of the window, as in a CTW tree.
		state := ctw.MemoryEstimate(ctw.Config{A: A, D: depth}, n)
		switch name {
		case "ctw", "ppm", "markov", "construct":
			est += int64(workers) * state
		case "kn":
			est += int64(workers) * state
			if _, fixed := params["delta"]; !fixed {
				entries := int64(0)
				for j := int64(0); j < tN; j++ {
					entries += min(int64(depth), j) + 1
				}
				entries *= tuneW
				if entries*12 <= knCacheBudget {
					est += entries*12 + 24*tuneW
				}
				est += 8*tuneW + int64(workers)*state
			}
		case "npy":
			est += W * n * int64(A) * 8
		case "tf", "synth":
			est += 2 * pathBytes(params["path"])
		}
	}
	// per-position accumulators: results, and up to 2 chunks per worker
	M := int64(len(items))
	est += M * n * 8 * 8 * int64(2*workers+2)
	return est
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

// checkEvalMemory reads the headers of the data set (and the tuning set,
// if any) and refuses the evaluation when evalBytes exceeds the available
// memory.
func checkEvalMemory(data, train, spec string, workers int) error {
	h, err := dataset.ReadHeader(data)
	if err != nil {
		return err
	}
	tune, tuneN := 0, 0
	if train != "" {
		th, err := dataset.ReadHeader(train)
		if err != nil {
			return err
		}
		tune, tuneN = th.Windows, th.N
	}
	d := study.DefaultsFor(h.Prior)
	W := int64(h.Windows)
	est := evalBytes(spec, W*int64(h.N)+4*W, h.Windows, h.N, d.A, d.D, tune, tuneN, workers)
	return checkMemory(fmt.Sprintf("evaluating %s (%d windows of N=%d)", data, h.Windows, h.N), est)
}

// checkEvalOutputs checks eval's outputs before any work: the files of
// --out (or half.txt with --half) and the --export directory.
func checkEvalOutputs(out, export string, half, force bool) error {
	names := []string{study.Outputs.JSON, study.Outputs.CSV, study.Outputs.Summary, study.Outputs.PNG, study.Outputs.SVG}
	if half {
		names = []string{"half.txt"}
	}
	if err := checkOutputDir(out, force, names...); err != nil {
		return err
	}
	if export != "" {
		return checkOutputDir(export, force)
	}
	return nil
}
