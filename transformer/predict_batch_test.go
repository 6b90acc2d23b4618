package transformer

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// forEachKernelSet runs f with every kernel set this build and CPU run
// (the others are reported as skipped).
func forEachKernelSet(t *testing.T, f func(t *testing.T, ks *kernels.Set)) {
	for _, info := range kernels.Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			ks, err := kernels.Lookup(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			f(t, ks)
		})
	}
}

// inferConfigs are architectures that take every branch of ForwardInfer:
// with and without LayerNorm and feed-forward, ReLU, sinusoidal
// positions, one layer and per-layer head counts.
func inferConfigs() []Config {
	base := predictConfig()
	noLN, noFF, relu, sin, one := base, base, base, base, base
	noLN.LayerNorm = false
	noFF.FeedForward = false
	noFF.Heads = []int{4, 2}
	relu.Activation = ReLU
	sin.Positional = Sinusoidal
	one.Layers, one.Heads, one.Embed, one.Alphabet = 1, []int{3}, 24, 5
	both := noFF
	both.LayerNorm = false
	return []Config{base, noLN, noFF, relu, sin, one, both}
}

// TestForwardInferMatchesForward checks that the forward-only pass gives
// the probabilities of Forward on (training and inference) Activations
// bit for bit, over a batch of several windows, for every architecture
// branch and kernel set.
func TestForwardInferMatchesForward(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T, ks *kernels.Set) {
		for ci, cfg := range inferConfigs() {
			m, err := NewOn(cpu.New(ks), cfg, uint64(ci+1))
			if err != nil {
				t.Fatal(err)
			}
			for _, shape := range [][2]int{{1, 1}, {1, cfg.Context}, {3, 7}, {5, cfg.Context}} {
				B, T := shape[0], shape[1]
				x := randomInputs(uint64(B*T), B*T, cfg.Alphabet)
				in, err := m.AllocInference(B * T)
				if err != nil {
					t.Fatal(err)
				}
				m.ForwardInfer(in, x, B, T)
				got := in.Probs()
				for _, training := range []bool{false, true} {
					a := m.NewActivations(B, T, training)
					m.Forward(a, x, B, T)
					want := a.Probs()
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("config %d, (B,T)=(%d,%d), training activations %v: probability %d is %v, Forward gives %v", ci, B, T, training, i, got[i], want[i])
						}
					}
				}
				if err := in.Free(); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// batchWindows are windows of many lengths around the context N: empty,
// one symbol (uniform only), shorter than N, N, N+1 (the longest without
// sliding), longer (sliding rows), in a shuffled order.
func batchWindows(N, A int) [][]byte {
	lengths := []int{N + 1, 0, 5, N + 1, 1, N, 3*N + 5, 2, N + 1, N + 2, 5, N - 1, N + 1}
	var xs [][]byte
	for k, n := range lengths {
		xs = append(xs, randomInputs(uint64(100+k), n, A))
	}
	return xs
}

// TestPredictBatchMatchesSequence checks, with every kernel set and
// architecture branch, that PredictBatch gives bit for bit what the
// per-window path before batching gave (one pass per window on fresh
// Activations, then one per sliding row) and what PredictSequence and
// the state loop give, for windows of different lengths (0, 1, < N, N,
// N+1, sliding), and for more windows of one length than a pass holds
// (301 windows of N+1 symbols: passes of ⌊R/N⌋ windows and a remainder).
func TestPredictBatchMatchesSequence(t *testing.T) {
	forEachKernelSet(t, func(t *testing.T, ks *kernels.Set) {
		for ci, cfg := range inferConfigs() {
			m, err := NewOn(cpu.New(ks), cfg, uint64(ci+1))
			if err != nil {
				t.Fatal(err)
			}
			N, A := cfg.Context, cfg.Alphabet
			many := make([][]byte, 301)
			for j := range many {
				many[j] = randomInputs(uint64(1000+j), N+1, A)
			}
			if B := m.BatchWindows(N + 1); 301%B == 0 || B < 2 {
				t.Fatalf("BatchWindows(N+1) = %d: the test wants a remainder", B)
			}
			for _, xs := range [][][]byte{batchWindows(N, A), many} {
				outs := make([][]float64, len(xs))
				for j, x := range xs {
					outs[j] = make([]float64, len(x)*A)
				}
				if err := m.PredictBatch(xs, outs); err != nil {
					t.Fatal(err)
				}
				old := m.NewActivations(1, N, false)
				for j, x := range xs {
					want := make([]float64, len(x)*A)
					oldPredictSequence(m, old, x, want)
					seq := make([]float64, len(x)*A)
					m.PredictSequence(x, seq)
					for i := range want {
						if outs[j][i] != want[i] || seq[i] != want[i] {
							t.Fatalf("config %d, window %d (%d symbols), value %d: PredictBatch %v, PredictSequence %v, per-window path %v", ci, j, len(x), i, outs[j][i], seq[i], want[i])
						}
					}
					if len(x) > N+3 && j%3 == 0 { // the state loop, spot-checked
						st := m.NewState()
						p := make([]float64, A)
						for i, s := range x {
							st.Predict(p)
							for a := range p {
								if p[a] != want[i*A+a] {
									t.Fatalf("config %d, window %d, row %d: state %v, per-window path %v", ci, j, i, p, want[i*A:(i+1)*A])
								}
							}
							st.Observe(s)
						}
					}
				}
			}
		}
	})
}

// TestPredictBatchAllocatesOnce checks that PredictBatch takes its
// forward-only buffers from the model's pool — one backend allocation of
// floats and one of tokens at the first call, none after —, makes a
// bounded number of host allocations per call whatever the number of
// windows, and copies to the host only the rows it returns.
func TestPredictBatchAllocatesOnce(t *testing.T) {
	cfg := predictConfig()
	cb := &countingBackend{Backend: cpu.NewDefault()}
	m, err := NewOn(cb, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	N, A := cfg.Context, cfg.Alphabet
	inUse := cb.InUse()
	for _, xs := range [][][]byte{batchWindows(N, A), batchWindows(N, A)[:4]} {
		outs := make([][]float64, len(xs))
		rows := 0
		for j, x := range xs {
			outs[j] = make([]float64, len(x)*A)
			rows += max(len(x)-1, 0)
		}
		allocs0 := cb.allocs.Load()
		if err := m.PredictBatch(xs, outs); err != nil {
			t.Fatal(err)
		}
		if n := cb.allocs.Load() - allocs0; inUse == cb.InUse() || n > 1 {
			t.Fatalf("the first call allocated %d buffers (%d bytes)", n, cb.InUse()-inUse)
		}
		if want := int64(4*cfg.InferenceFloats(cfg.inferRows()) + cfg.inferRows()); cb.InUse()-inUse != want {
			t.Errorf("forward-only buffers of %d bytes, want %d", cb.InUse()-inUse, want)
		}
		allocs0, down0 := cb.allocs.Load(), cb.downloaded.Load()
		n := testing.AllocsPerRun(10, func() {
			if err := m.PredictBatch(xs, outs); err != nil {
				t.Fatal(err)
			}
		})
		if got := cb.allocs.Load() - allocs0; got != 0 {
			t.Errorf("PredictBatch allocated %d buffers with its buffers pooled", got)
		}
		t.Logf("PredictBatch of %d windows: %v host allocations per call", len(xs), n)
		if n > 1 && !raceEnabled {
			t.Errorf("PredictBatch of %d windows: %v host allocations per call", len(xs), n)
		}
		if perCall := (cb.downloaded.Load() - down0) / 11; perCall != int64(rows*A) {
			t.Errorf("PredictBatch copied %d values to the host, want %d (the rows it returns)", perCall, rows*A)
		}
		if err := m.Free(); err != nil {
			t.Fatal(err)
		}
		if m, err = NewOn(cb, cfg, 1); err != nil {
			t.Fatal(err)
		}
		inUse = cb.InUse()
	}
	// the forward-only buffers are smaller than one window's Activations
	// per row, and do not grow with the depth
	deep := cfg
	deep.Layers, deep.Heads = 8, []int{2, 2, 2, 2, 2, 2, 2, 2}
	for _, c := range []Config{cfg, deep} {
		if got, acts := c.InferenceFloats(N), c.ActivationFloats(1, N, false); got >= acts {
			t.Errorf("L=%d: forward-only buffers of %d floats for N rows, Activations %d", c.Layers, got, acts)
		}
	}
	if cfg.InferenceFloats(N) != deep.InferenceFloats(N) {
		t.Errorf("forward-only buffers grow with the depth: %d, %d", cfg.InferenceFloats(N), deep.InferenceFloats(N))
	}
}

// TestPredictBatchErrors checks that bad input and a backend out of
// memory are errors of PredictBatch, not panics, and that bad input
// leaves the outputs untouched.
func TestPredictBatchErrors(t *testing.T) {
	cfg := predictConfig()
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	A := cfg.Alphabet
	x := randomInputs(1, 10, A)
	sentinel := func(n int) []float64 {
		o := make([]float64, n)
		for i := range o {
			o[i] = -1
		}
		return o
	}
	bad := []byte{0, 1, 2, byte(A), 0}
	for _, c := range []struct {
		name string
		xs   [][]byte
		outs [][]float64
		want string
	}{
		{"fewer outputs", [][]byte{x, x}, [][]float64{sentinel(10 * A)}, "1 outputs for 2 windows"},
		{"short output", [][]byte{x, x}, [][]float64{sentinel(10 * A), sentinel(10*A - 1)}, "window 1: output of length"},
		{"symbol outside the alphabet", [][]byte{x, bad}, [][]float64{sentinel(10 * A), sentinel(len(bad) * A)}, "window 1: symbol 3 at position 3"},
	} {
		err := m.PredictBatch(c.xs, c.outs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
		for _, o := range c.outs {
			for _, v := range o {
				if v != -1 {
					t.Fatalf("%s: an output was written", c.name)
				}
			}
		}
	}
	if err := m.PredictBatch(nil, nil); err != nil {
		t.Errorf("no windows: %v", err)
	}

	// room for the parameters and little else
	paramBytes := int64(4 * cfg.NumParams())
	be := cpu.New(kernels.Default(), cpu.WithMemoryLimit(paramBytes+64))
	small, err := NewOn(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := sentinel(10 * A)
	if err := small.PredictBatch([][]byte{x}, [][]float64{out}); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("PredictBatch beyond the memory: %v, want ErrOutOfMemory", err)
	}
	if be.InUse() != paramBytes {
		t.Fatalf("InUse %d after a failed PredictBatch, want %d", be.InUse(), paramBytes)
	}
	if _, err := small.AllocInference(0); err == nil {
		t.Error("AllocInference(0): no error")
	}
	if _, err := small.AllocInference(math.MaxInt / 2); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Errorf("AllocInference of absurd size: %v", err)
	}
}

var _ predict.BatchPredictor = (*Model)(nil)
