package transformer

import (
	"bytes"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// countingBackend is a CPU backend that counts the float32 values it
// copies to the host and the buffers it allocates.
type countingBackend struct {
	*cpu.Backend
	downloaded, allocs atomic.Int64
}

func (c *countingBackend) Download(dst []float32, src backend.Tensor) {
	c.downloaded.Add(int64(len(dst)))
	c.Backend.Download(dst, src)
}

func (c *countingBackend) Alloc(n int) (backend.Buffer, error) {
	c.allocs.Add(1)
	return c.Backend.Alloc(n)
}

// predictConfig is a small model whose context (16) is shorter than the
// sequences predicted, so that PredictSequence slides.
func predictConfig() Config {
	return Config{Layers: 2, Heads: []int{2, 1}, Embed: 16, Context: 16, Alphabet: 3,
		FeedForward: true, LayerNorm: true, Activation: GELU, Positional: Learned}
}

// TestPredictReusesActivations checks, with every kernel set this build
// and CPU run (the others are reported as skipped; a -tags purego build
// has only the portable set, an arm64 build neon and portable), that
// PredictSequence, a state's Predict and AttentionMaps take their
// activations from the model's pool (no buffer allocated once it holds
// one, a handful of host objects per call: testing.AllocsPerRun), give
// the numbers of fresh activations, and copy to the host only what they
// return: one row of A probabilities per Predict, the rows of
// PredictSequence, the maps.
func TestPredictReusesActivations(t *testing.T) {
	for _, info := range kernels.Sets() {
		t.Run(info.Name, func(t *testing.T) {
			if !info.Usable {
				t.Skipf("kernel set %s cannot run here: %s", info.Name, info.Reason)
			}
			ks, err := kernels.Lookup(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			testPredictReusesActivations(t, ks)
		})
	}
}

func testPredictReusesActivations(t *testing.T, ks *kernels.Set) {
	cfg := predictConfig()
	cb := &countingBackend{Backend: cpu.New(ks)}
	m, err := NewOn(cb, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	N, A := cfg.Context, cfg.Alphabet
	x := randomInputs(3, 3*N+5, A)
	out := make([]float64, len(x)*A)
	m.PredictSequence(x, out) // fills the pool

	// the numbers of fresh activations (the engine before pooling: one
	// pass over the first N symbols, then one per sliding window)
	want := make([]float64, len(x)*A)
	predict.Uniform(want[:A])
	first := m.NewActivations(1, N, false)
	m.Forward(first, x[:N], 1, N)
	for i := 1; i <= N; i++ {
		predict.FromFloat32(want[i*A:(i+1)*A], first.Probs()[(i-1)*A:i*A])
	}
	for i := N + 1; i < len(x); i++ {
		a := m.NewActivations(1, N, false)
		m.Forward(a, x[i-N:i], 1, N)
		predict.FromFloat32(want[i*A:(i+1)*A], a.Probs()[(N-1)*A:])
	}
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("PredictSequence %d: %v, fresh activations %v", i, out[i], want[i])
		}
	}

	allocs0, down0 := cb.allocs.Load(), cb.downloaded.Load()
	n := testing.AllocsPerRun(20, func() { m.PredictSequence(x, out) })
	if got := cb.allocs.Load() - allocs0; got != 0 {
		t.Errorf("PredictSequence allocated %d buffers with activations pooled", got)
	}
	t.Logf("PredictSequence of %d symbols: %v host allocations per call", len(x), n)
	if n > 2 && !raceEnabled {
		t.Errorf("PredictSequence: %v host allocations per call", n)
	}
	// AllocsPerRun runs once more than asked
	perCall := (cb.downloaded.Load() - down0) / 21
	if wantDown := int64(N*A + (len(x)-1-N)*A); perCall != wantDown {
		t.Errorf("PredictSequence copied %d values to the host, want %d (the rows it returns)", perCall, wantDown)
	}

	st := m.NewState()
	p := make([]float64, A)
	for _, s := range x[:N+3] {
		st.Observe(s)
	}
	st.Predict(p)
	for i := range p {
		if p[i] != want[(N+3)*A+i] {
			t.Fatalf("Predict: %v, PredictSequence row %v", p, want[(N+3)*A:(N+4)*A])
		}
	}
	allocs0, down0 = cb.allocs.Load(), cb.downloaded.Load()
	n = testing.AllocsPerRun(50, func() { st.Predict(p) })
	if got := cb.allocs.Load() - allocs0; got != 0 {
		t.Errorf("Predict allocated %d buffers with activations pooled", got)
	}
	t.Logf("Predict: %v host allocations per call", n)
	if n > 1 && !raceEnabled {
		t.Errorf("Predict: %v host allocations per call", n)
	}
	if perCall := (cb.downloaded.Load() - down0) / 51; perCall != int64(A) {
		t.Errorf("Predict copied %d values to the host, want one row of %d", perCall, A)
	}

	T := N - 3
	maps, err := m.AttentionMaps(x[:T])
	if err != nil {
		t.Fatal(err)
	}
	allocs0, down0 = cb.allocs.Load(), cb.downloaded.Load()
	n = testing.AllocsPerRun(10, func() {
		if _, err := m.AttentionMaps(x[:T]); err != nil {
			t.Fatal(err)
		}
	})
	heads := 0
	for _, h := range cfg.Heads {
		heads += h
	}
	// the result (one slice per layer, per head, per map) and the weights
	// buffer, which is allocated and freed per call
	if got := cb.allocs.Load() - allocs0; got != 11 {
		t.Errorf("AttentionMaps allocated %d buffers in 11 calls, want only the weights buffer", got)
	}
	t.Logf("AttentionMaps of %d symbols: %v host allocations per call", T, n)
	if limit := float64(1 + cfg.Layers + 2*heads + 8); n > limit && !raceEnabled {
		t.Errorf("AttentionMaps: %v host allocations per call, want ≤ %v", n, limit)
	}
	if perCall := (cb.downloaded.Load() - down0) / 11; perCall != int64(heads*T*T) {
		t.Errorf("AttentionMaps copied %d values to the host, want the %d of the maps", perCall, heads*T*T)
	}
	if len(maps) != cfg.Layers {
		t.Fatalf("%d layers of maps", len(maps))
	}
}

// TestPredictConcurrent runs PredictSequence, states and AttentionMaps of
// one model from several goroutines at once (the pool grows to as many
// activations as are in use) and checks every result against a serial
// run.
func TestPredictConcurrent(t *testing.T) {
	cfg := predictConfig()
	m, err := NewOn(cpu.NewDefault(), cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	A := cfg.Alphabet
	x := randomInputs(4, 2*cfg.Context+3, A)
	want := make([]float64, len(x)*A)
	m.PredictSequence(x, want)
	wantMaps, err := m.AttentionMaps(x[:cfg.Context])
	if err != nil {
		t.Fatal(err)
	}
	st, p := m.NewState(), make([]float64, A)
	wantState := make([]float64, len(x)*A)
	for i, s := range x {
		st.Predict(p)
		copy(wantState[i*A:], p)
		st.Observe(s)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 5; rep++ {
				switch (g + rep) % 3 {
				case 0:
					out := make([]float64, len(x)*A)
					m.PredictSequence(x, out)
					for i := range out {
						if out[i] != want[i] {
							errs <- "PredictSequence differs"
							return
						}
					}
				case 1:
					st, p := m.NewState(), make([]float64, A)
					for i, s := range x {
						st.Predict(p)
						for j := range p {
							if p[j] != wantState[i*A+j] {
								errs <- "Predict differs"
								return
							}
						}
						st.Observe(s)
					}
				case 2:
					maps, err := m.AttentionMaps(x[:cfg.Context])
					if err != nil {
						errs <- err.Error()
						return
					}
					for l := range maps {
						for h := range maps[l] {
							for i, v := range maps[l][h] {
								if v != wantMaps[l][h][i] {
									errs <- "AttentionMaps differ"
									return
								}
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
}

// TestFree checks that freeing a model, its activations and a trainer
// returns the backend's memory (cpu.Backend.InUse back to 0), and that a
// model that made its own backend closes it.
func TestFree(t *testing.T) {
	cfg := predictConfig()
	cfg.Positional = Sinusoidal // a second parameter-side buffer
	be := cpu.NewDefault()
	m, err := NewOn(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	params := be.InUse()
	if want := int64(4 * (cfg.NumParams() + cfg.Context*cfg.Embed)); params != want {
		t.Fatalf("InUse %d after NewOn, want %d", params, want)
	}
	a := m.NewActivations(2, 8, true)
	if want := params + int64(4*cfg.ActivationFloats(2, 8, true)+2*8); be.InUse() != want {
		t.Fatalf("InUse %d with activations, want %d", be.InUse(), want)
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	if be.InUse() != params {
		t.Fatalf("InUse %d after Activations.Free, want %d", be.InUse(), params)
	}
	P := [][]float64{{0.8, 0.1, 0.1}, {0.2, 0.3, 0.5}, {0.6, 0.3, 0.1}}
	windows, _, _ := markovWindows(P, 24, cfg.Context, 5)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 8, 1
	tr, err := NewTrainer(m, tc, windows, windows[:10])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Free(); err != nil {
		t.Fatal(err)
	}
	if be.InUse() != params {
		t.Fatalf("InUse %d after Trainer.Free, want %d", be.InUse(), params)
	}
	m.PredictSequence(randomInputs(1, 40, cfg.Alphabet), make([]float64, 40*cfg.Alphabet))
	if err := m.Free(); err != nil {
		t.Fatal(err)
	}
	if be.InUse() != 0 {
		t.Fatalf("InUse %d after Model.Free", be.InUse())
	}
	if _, err := be.Alloc(1); err != nil {
		t.Fatalf("the caller's backend was closed by Model.Free: %v", err)
	}

}

// TestNoDefaultBackend: no entry point of the engine makes a backend of
// its own (issue 46, item 3): given none, each is ErrNoBackend, not a
// panic.
func TestNoDefaultBackend(t *testing.T) {
	cfg := DefaultConfig(1, 1, 4, 8, 3)
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.WriteSafetensors(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.SaveSafetensors(path); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"NewOn":        func() error { _, err := NewOn(nil, cfg, 1); return err },
		"FromParamsOn": func() error { _, err := FromParamsOn(nil, cfg, nil); return err },
		"ReadSafetensorsOn": func() error {
			_, err := ReadSafetensorsOn(nil, bytes.NewReader(buf.Bytes()))
			return err
		},
		"LoadSafetensorsOn": func() error { _, err := LoadSafetensorsOn(nil, path); return err },
	} {
		if err := f(); !errors.Is(err, ErrNoBackend) {
			t.Errorf("%s without a backend: %v, want ErrNoBackend", name, err)
		}
	}
}

// TestAllocationErrors checks that a backend out of memory gives errors,
// not panics, from every allocating entry point: NewOn, AllocActivations,
// NewTrainer, AttentionMaps; and that what was allocated before the
// failure is released.
func TestAllocationErrors(t *testing.T) {
	cfg := predictConfig()
	paramBytes := int64(4 * cfg.NumParams())
	small := cpu.New(kernels.Default(), cpu.WithMemoryLimit(paramBytes-4))
	if _, err := NewOn(small, cfg, 1); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("NewOn beyond the memory: %v, want ErrOutOfMemory", err)
	}
	if small.InUse() != 0 {
		t.Fatalf("InUse %d after a failed NewOn", small.InUse())
	}

	// room for the parameters and little else
	be := cpu.New(kernels.Default(), cpu.WithMemoryLimit(paramBytes+4*int64(cfg.ActivationFloats(1, 4, false))+64))
	m, err := NewOn(be, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.AllocActivations(64, cfg.Context, true); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("AllocActivations beyond the memory: %v", err)
	}
	if _, err := m.AllocActivations(1, cfg.Context+1, false); err == nil {
		t.Fatal("AllocActivations beyond the context: no error")
	}
	if be.InUse() != paramBytes {
		t.Fatalf("InUse %d after failed allocations, want %d", be.InUse(), paramBytes)
	}
	P := [][]float64{{0.8, 0.1, 0.1}, {0.2, 0.3, 0.5}, {0.6, 0.3, 0.1}}
	windows, _, _ := markovWindows(P, 16, cfg.Context, 5)
	tc := DefaultTrainConfig()
	tc.BatchSize = 8
	if _, err := NewTrainer(m, tc, windows, nil); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("NewTrainer beyond the memory: %v", err)
	}
	if be.InUse() != paramBytes {
		t.Fatalf("InUse %d after a failed NewTrainer, want %d", be.InUse(), paramBytes)
	}
	if _, err := m.AttentionMaps(randomInputs(2, cfg.Context, cfg.Alphabet)); !errors.Is(err, backend.ErrOutOfMemory) {
		t.Fatalf("AttentionMaps beyond the memory: %v", err)
	}
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("NewActivations beyond the memory did not panic")
			} else if err, ok := r.(error); !ok || !errors.Is(err, backend.ErrOutOfMemory) {
				t.Fatalf("NewActivations panicked with %v", r)
			}
		}()
		m.NewActivations(64, cfg.Context, true)
	}()
	runtime.KeepAlive(m)
}
