// Package memest holds the memory models of vomc's commands: estimates of
// the peak memory of building a data set, sampling a tree, generating
// symbols, and evaluating methods, which the commands check against the
// available memory (internal/sysmem) before they start. The tests of
// cmd/vomc compare them with the measured peaks of child processes.
package memest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
)

// Base is the memory of the process itself (runtime, code, buffers) added
// to every estimate.
const Base = 24 << 20

// knCacheBudget mirrors kn's cacheBudget: the largest δ-tuning cache (12
// bytes per position and order) that kn.Tune keeps in memory.
const knCacheBudget = 1 << 28

// Eval estimates the peak memory of `vomc eval`: the process itself,
// the evaluated data (dataBytes: symbols and tree indices, plus a slice
// header per window), the tuning windows (tune of them, 0 when they are
// the evaluated ones), every method's state (one per worker; KN's δ-tuning
// cache; an npy method's distributions; a transformer's weights) and the
// result accumulators. windows are of length N over A symbols; D is the
// methods' default depth. spec is the --methods list.
func Eval(spec string, dataBytes int64, windows, N, A, D, tune, tuneN, workers int) int64 {
	W, n := int64(windows), int64(N)
	est := int64(Base) + dataBytes + 24*W
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
			est += 2 * PathBytes(params["path"])
		}
	}
	// per-position accumulators: results, and up to 2 chunks per worker
	M := int64(len(items))
	est += M * n * 8 * 8 * int64(2*workers+2)
	return est
}

// PathBytes is the size of a file, or of the files directly in a
// directory (0 when it cannot be read).
func PathBytes(p string) int64 {
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

// NodeBytes is the memory of one parsed or sampled tree node of an
// alphabet of A symbols: the struct, its A child pointers or A
// probabilities, and allocation overhead.
func NodeBytes(A int) int64 { return 96 + 8*int64(A) }

// Sample estimates the peak memory of sampling one tree from pr (its
// expected size; drawings and JSON are written from it).
func Sample(pr source.Prior) int64 {
	return Base + int64(2*pr.ExpectedNodes()*float64(NodeBytes(pr.A)))
}

// Tree estimates the memory of a parsed tree: per node the struct,
// its child pointers or its probabilities, and allocation overhead.
func Tree(t *source.Tree) int64 {
	leaves := int64(t.NumLeaves())
	internal := (leaves - 1) / int64(max(t.A-1, 1))
	return (leaves + internal) * NodeBytes(t.A)
}

// Generate estimates the peak memory of generate: the tree (twice:
// while its JSON is decoded, and the compiled sampler), one chunk of
// symbols and its text form.
func Generate(t *source.Tree) int64 {
	return Base + 2*Tree(t) + 4<<20 + 3*source.StreamChunk
}

// Data estimates the peak memory of building and writing a data set:
// the trees (per node its struct and A pointers or probabilities), the
// symbols and tree indices with their on-disk copies, and the manifest,
// which holds every tree as JSON (about 18 bytes per probability) and is
// built in a growing buffer; the garbage collector may let the heap reach
// about twice what is live.
func Data(cfg dataset.Config) int64 {
	nodes := float64(cfg.K) * cfg.Prior.ExpectedNodes()
	trees := nodes * float64(NodeBytes(cfg.Prior.A))
	windows := float64(cfg.K) * float64(cfg.WindowsPerTree())
	data := windows * float64(cfg.N+4) * 2
	manifest := nodes * (20 + 18*float64(cfg.Prior.A)) * 2
	return Base + int64(2*(trees+data+manifest))
}

// EvalDataSet reads the headers of the data set in data (and of the
// tuning set in train, if not empty) and returns Eval's estimate of
// evaluating the methods of spec on it with workers, with the data set's
// header (manifest without the trees).
func EvalDataSet(data, train, spec string, workers int) (int64, *dataset.Manifest, error) {
	h, err := dataset.ReadHeader(data)
	if err != nil {
		return 0, h, err
	}
	tune, tuneN := 0, 0
	if train != "" {
		th, err := dataset.ReadHeader(train)
		if err != nil {
			return 0, h, err
		}
		tune, tuneN = th.Windows, th.N
	}
	d := methods.DefaultsFor(h.Prior)
	W := int64(h.Windows)
	return Eval(spec, W*int64(h.N)+4*W, h.Windows, h.N, d.A, d.D, tune, tuneN, workers), h, nil
}

// CTW estimates the memory of CTW on the sequence x
// (ctw.SequenceMemoryEstimate: the contexts x creates, counted where nodes
// are large) and, with mapNodes > 0, of its MAP tree of that many nodes.
func CTW(cfg ctw.Config, x []byte, mapNodes int64) int64 {
	return ctw.SequenceMemoryEstimate(cfg, x) + mapNodes*int64(64+8*cfg.A) + Base
}
