// Package dataset builds, writes and reads data sets of sequences drawn from
// random context-tree sources, as in the paper's Appendix "Training
// Details": K trees are drawn from the prior π_CTW (package source), and
// each tree gives ⌊N_K/N⌋ windows of N symbols.
//
// A data set is built deterministically from a seed: tree i and its
// sequence(s) are drawn from source.RNG(seed, i) alone, so the bytes do not
// depend on the number of workers.
//
// # On disk
//
// A data set is a directory holding
//
//	manifest.json  format name and version, all parameters, the K trees
//	               (leaf lists as in source.Tree.WriteJSON), the file names
//	               and their SHA-256 checksums; see Manifest
//	symbols.bin    all windows concatenated, one byte per symbol 0..A−1:
//	               windows × N bytes, window w at bytes [w·N, (w+1)·N)
//	tree_of.bin    the tree index of each window, int32 little-endian:
//	               windows × 4 bytes
//
// Write creates the directory atomically; Read checks everything. ExportNPY
// writes the same arrays as NumPy .npy files.
package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/source"
)

const (
	// MaxBytes bounds the memory of a data set (symbols, tree indices and
	// the expected size of the trees): 16 GiB.
	MaxBytes = 16 << 30
	// MaxTrees bounds K so that tree indices fit in an int32.
	MaxTrees = math.MaxInt32
)

// Config describes a data set. The paper's training sets use K = 20000,
// N_K = 5120 and N = 512 (1536 for D = 5); its test sets K = 8192.
type Config struct {
	// Prior is the prior π_CTW the trees are drawn from (Section 4.2).
	Prior source.Prior
	// K is the number of trees (sources), 1..MaxTrees.
	K int
	// NK is the number of symbols N_K drawn per tree, ≥ N.
	NK int
	// N is the window (context) length, ≥ 1. Each tree gives ⌊NK/N⌋
	// windows.
	N int
	// Fresh makes every window an independent sequence x_1..x_N drawn from
	// the dummy initial context of D zeros (Section 4.2), so that CTW with
	// the prior's parameters is exactly Bayes-optimal on every window: use
	// it for TEST sets. When false (training sets, as in the paper), one
	// sequence of ⌊NK/N⌋·N symbols is drawn per tree from the dummy context
	// and cut into consecutive windows (the NK − ⌊NK/N⌋·N symbols that
	// would not fill a window are not drawn).
	Fresh bool
	// Seed is the seed of every random choice; tree i uses
	// source.RNG(Seed, i).
	Seed uint64
}

// WindowsPerTree returns ⌊NK/N⌋ (0 when N ≤ 0).
func (c Config) WindowsPerTree() int {
	if c.N <= 0 || c.NK < 0 {
		return 0
	}
	return c.NK / c.N
}

// EstimatedBytes estimates the memory of the built data set in bytes:
// K·⌊NK/N⌋·(N + 4) for the symbols and tree indices plus K times the
// expected tree size (source.Prior.ExpectedNodes nodes of about 48 + 8A
// bytes). It returns +Inf when the parameters overflow.
func (c Config) EstimatedBytes() float64 {
	w := float64(c.K) * float64(c.WindowsPerTree())
	return w*float64(c.N+4) + float64(c.K)*c.Prior.ExpectedNodes()*(48+8*float64(c.Prior.A))
}

// BuildMemoryEstimate estimates the peak memory of building and writing the
// data set (Build, then Dataset.Write): the trees (source.NodeBytes per
// node), the symbols and tree indices with their on-disk copies, and the
// manifest, which holds every tree as JSON (about 18 bytes per
// probability) and is built in a growing buffer; the garbage collector may
// let the heap reach about twice what is live.
func (c Config) BuildMemoryEstimate() int64 {
	nodes := float64(c.K) * c.Prior.ExpectedNodes()
	trees := nodes * float64(source.NodeBytes(c.Prior.A))
	windows := float64(c.K) * float64(c.WindowsPerTree())
	data := windows * float64(c.N+4) * 2
	manifest := nodes * (20 + 18*float64(c.Prior.A)) * 2
	return int64(2 * (trees + data + manifest))
}

// Validate checks the configuration: a valid prior; 1 ≤ K ≤ MaxTrees;
// N ≥ 1; NK ≥ N; and an estimated size (EstimatedBytes) of at most
// MaxBytes. Errors name the parameter.
func (c Config) Validate() error {
	if err := c.Prior.Validate(); err != nil {
		return fmt.Errorf("dataset: prior: %w", err)
	}
	if c.K < 1 || c.K > MaxTrees {
		return fmt.Errorf("dataset: K (number of trees) = %d outside 1..%d", c.K, MaxTrees)
	}
	if c.N < 1 {
		return fmt.Errorf("dataset: N (window length) = %d must be ≥ 1", c.N)
	}
	if c.NK < c.N {
		return fmt.Errorf("dataset: NK (sequence length per tree) = %d is shorter than the window N = %d", c.NK, c.N)
	}
	if b := c.EstimatedBytes(); b > MaxBytes {
		return fmt.Errorf("dataset: K = %d trees × %d windows × N = %d symbols needs about %.3g GiB, more than the limit of %d GiB",
			c.K, c.WindowsPerTree(), c.N, b/(1<<30), MaxBytes>>30)
	}
	return nil
}

// Dataset is a built or loaded data set.
type Dataset struct {
	// Manifest describes the data set; its Trees are the same trees as
	// Trees below.
	Manifest Manifest
	// Symbols holds all windows concatenated: window w is
	// Symbols[w·N : (w+1)·N].
	Symbols []byte
	// TreeOf[w] is the index of the tree that generated window w; windows
	// are stored tree by tree, so TreeOf[w] = w / ⌊NK/N⌋.
	TreeOf []int32
	// Trees are the K context-tree sources, Trees[i] drawn from
	// source.RNG(Seed, i).
	Trees []*source.Tree
}

// Windows returns the number of windows, K·⌊NK/N⌋.
func (d *Dataset) Windows() int { return len(d.TreeOf) }

// Window returns window i (a sub-slice of Symbols, not a copy), or nil when
// i is out of range.
func (d *Dataset) Window(i int) []byte {
	N := d.Manifest.N
	if i < 0 || i >= d.Windows() || (i+1)*N > len(d.Symbols) {
		return nil
	}
	return d.Symbols[i*N : (i+1)*N : (i+1)*N]
}

// Config returns the configuration the data set was built with.
func (d *Dataset) Config() Config { return d.Manifest.Config() }

// Checksum returns the lower-case hex SHA-256 of Symbols, i.e. of
// symbols.bin.
func (d *Dataset) Checksum() string { return sha256Hex(d.Symbols) }

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// treeOfBytes encodes tree indices as int32 little-endian.
func treeOfBytes(t []int32) []byte {
	b := make([]byte, 4*len(t))
	for i, v := range t {
		u := uint32(v)
		b[4*i] = byte(u)
		b[4*i+1] = byte(u >> 8)
		b[4*i+2] = byte(u >> 16)
		b[4*i+3] = byte(u >> 24)
	}
	return b
}

// Build draws the data set described by cfg on workers goroutines (≤ 0
// means runtime.GOMAXPROCS(0)). Tree i is sampled from cfg.Prior with
// source.RNG(cfg.Seed, i) and its windows are generated from the same
// generator right after (see Config.Fresh), so the result is the same for
// every number of workers. progress, if not nil, is called after each tree
// with the number of trees done so far and K; calls are serialised and done
// increases by one each time. A panic on a worker (of progress, say) is
// returned as an error wrapping a *panics.Error.
func Build(cfg Config, workers int, progress func(done, total int)) (*Dataset, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, cfg.K)
	W, N := cfg.WindowsPerTree(), cfg.N
	per := W * N
	d := &Dataset{
		Symbols: make([]byte, cfg.K*per),
		TreeOf:  make([]int32, cfg.K*W),
		Trees:   make([]*source.Tree, cfg.K),
	}
	var (
		next     atomic.Int64
		failed   atomic.Bool
		mu       sync.Mutex
		done     int
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		failed.Store(true)
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if err := panics.Of(recover()); err != nil {
					fail(fmt.Errorf("dataset: %w", err))
				}
			}()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= cfg.K {
					return
				}
				rng := source.RNG(cfg.Seed, uint64(i))
				tree, err := cfg.Prior.Sample(rng)
				if err != nil {
					fail(fmt.Errorf("dataset: tree %d: %w", i, err))
					return
				}
				s, err := source.NewSampler(tree)
				if err != nil {
					fail(fmt.Errorf("dataset: tree %d: %w", i, err))
					return
				}
				block := d.Symbols[i*per : (i+1)*per]
				if cfg.Fresh {
					for w := range W {
						err = s.Fill(rng, block[w*N:(w+1)*N], nil)
						if err != nil {
							break
						}
					}
				} else {
					err = s.Fill(rng, block, nil)
				}
				if err != nil {
					fail(fmt.Errorf("dataset: tree %d: %w", i, err))
					return
				}
				for w := range W {
					d.TreeOf[i*W+w] = int32(i)
				}
				d.Trees[i] = tree
				func() {
					mu.Lock()
					defer mu.Unlock() // also when progress panics
					done++
					if progress != nil {
						progress(done, cfg.K)
					}
				}()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	d.Manifest = newManifest(cfg, d)
	return d, nil
}

// check verifies that the in-memory data set is consistent: its manifest
// parameters, the lengths of Symbols and TreeOf, the trees, every symbol
// < A and every tree index equal to w / ⌊NK/N⌋.
func (d *Dataset) check() error {
	if d == nil {
		return errors.New("dataset: nil data set")
	}
	m := &d.Manifest
	cfg := m.Config()
	if err := cfg.Validate(); err != nil {
		return err
	}
	W := cfg.WindowsPerTree()
	if len(d.Trees) != cfg.K {
		return fmt.Errorf("dataset: %d trees, want K = %d", len(d.Trees), cfg.K)
	}
	for i, t := range d.Trees {
		if err := checkTree(t, cfg.Prior); err != nil {
			return fmt.Errorf("dataset: tree %d: %w", i, err)
		}
	}
	if want := cfg.K * W * cfg.N; len(d.Symbols) != want {
		return fmt.Errorf("dataset: %d symbols, want K·⌊NK/N⌋·N = %d", len(d.Symbols), want)
	}
	if len(d.TreeOf) != cfg.K*W {
		return fmt.Errorf("dataset: %d tree indices, want K·⌊NK/N⌋ = %d", len(d.TreeOf), cfg.K*W)
	}
	if err := checkSymbols(d.Symbols, cfg.Prior.A, cfg.N); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := checkTreeOf(d.TreeOf, W); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	return nil
}

// checkTree checks that a tree is valid and could come from the prior.
func checkTree(t *source.Tree, p source.Prior) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if t.A != p.A {
		return fmt.Errorf("alphabet size %d differs from the prior's %d", t.A, p.A)
	}
	for _, D := range p.Depths {
		if t.D == D {
			return nil
		}
	}
	return fmt.Errorf("maximum depth %d is not one of the prior's depths %v", t.D, p.Depths)
}

// checkSymbols reports the first symbol ≥ A with its byte offset, window
// and position.
func checkSymbols(sym []byte, A, N int) error {
	if A >= 256 {
		return nil
	}
	for i, s := range sym {
		if int(s) >= A {
			return fmt.Errorf("symbol %d at byte %d (window %d, position %d) is outside the alphabet 0..%d", s, i, i/N, i%N, A-1)
		}
	}
	return nil
}

// checkTreeOf reports the first tree index that is not w / W.
func checkTreeOf(t []int32, W int) error {
	for w, v := range t {
		if int(v) != w/W {
			return fmt.Errorf("window %d has tree index %d, want %d (windows are stored tree by tree, %d per tree)", w, v, w/W, W)
		}
	}
	return nil
}
