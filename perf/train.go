package perf

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// TrainBench is a training-throughput configuration: a model and a batch
// of Batch windows of Model.Context symbols.
type TrainBench struct {
	Name  string
	Model transformer.Config
	Batch int
}

// StandardTrainBenches are the two configurations of `vomc bench train`
// (and of scripts/pytorch_bench.py), both full transformers (FF 4E,
// pre-LayerNorm, exact GELU, learned positions) on A=3:
// C1 = L=2, 4 heads, E=64, N=256, batch 32 and
// C2 = L=4, 8 heads, E=128, N=512, batch 16.
func StandardTrainBenches() []TrainBench {
	return []TrainBench{
		{"C1", transformer.DefaultConfig(2, 4, 64, 256, 3), 32},
		{"C2", transformer.DefaultConfig(4, 8, 128, 512, 3), 16},
	}
}

// PaperTrainBench is the paper's configuration (Section 4.1, D = 5): L=4,
// 8 heads, E=128, N=1536, batch 512, A=3 — a GPU-sized benchmark
// ('vomc bench train --engine torch --configs paper').
func PaperTrainBench() TrainBench {
	return TrainBench{"paper", transformer.DefaultConfig(4, 8, 128, 1536, 3), 512}
}

// ParseTrainBench reads a configuration: "C1", "C2", "paper", or a custom
// "L=2:H=4:E=64:N=256:B=32[:A=3]" (a full transformer; H heads per layer).
func ParseTrainBench(s string) (TrainBench, error) {
	for _, b := range append(StandardTrainBenches(), PaperTrainBench()) {
		if strings.EqualFold(s, b.Name) {
			return b, nil
		}
	}
	v := map[string]int{"A": 3}
	for _, kv := range strings.Split(s, ":") {
		k, val, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil {
			return TrainBench{}, fmt.Errorf("perf: configuration %q: want C1, C2, paper or L=..:H=..:E=..:N=..:B=..[:A=..]", s)
		}
		v[strings.ToUpper(strings.TrimSpace(k))] = n
	}
	for _, k := range []string{"L", "H", "E", "N", "B"} {
		if _, ok := v[k]; !ok {
			return TrainBench{}, fmt.Errorf("perf: configuration %q has no %s", s, k)
		}
	}
	b := TrainBench{Name: s, Model: transformer.DefaultConfig(v["L"], v["H"], v["E"], v["N"], v["A"]), Batch: v["B"]}
	if err := b.Model.Validate(); err != nil {
		return b, err
	}
	if b.Batch < 1 {
		return b, fmt.Errorf("perf: batch %d", b.Batch)
	}
	return b, nil
}

// TrainReport is the result of BenchTrain. Memory figures are bytes.
type TrainReport struct {
	Name    string             `json:"name"`
	Model   transformer.Config `json:"model"`
	Batch   int                `json:"batch"`
	Params  int                `json:"params"`
	Threads int                `json:"threads"` // GOMAXPROCS
	// Backend is the engine backend and kernel set used, e.g.
	// "cpu/avx512" (see transformer/kernels and VOMC_KERNELS).
	Backend string `json:"backend"`
	// Steps were timed after Warmup untimed ones; MeanStep and MinStep are
	// their mean and fastest. TokensPerSecond is B·N / MeanStep: training
	// throughput (forward, backward, gradient clipping, AdamW).
	Steps           int           `json:"steps"`
	Warmup          int           `json:"warmup"`
	MeanStep        time.Duration `json:"mean_step_ns"`
	MinStep         time.Duration `json:"min_step_ns"`
	TokensPerSecond float64       `json:"tokens_per_s"`
	// Loss is the mean per-symbol loss (nats) of the last step, a sanity
	// check (≈ ln A at initialisation).
	Loss float64 `json:"loss"`
	// PeakHeapInUse is the largest Go heap in use (runtime.MemStats
	// HeapInuse) sampled after setting up and after every step, less the
	// heap in use before the model was made; HeapSys is the heap memory
	// obtained from the OS by the end. PeakRSS is the process's peak
	// resident set (Linux VmHWM, reset before the run when the kernel
	// allows; 0 where unknown).
	PeakHeapInUse uint64 `json:"peak_heap_bytes"`
	HeapSys       uint64 `json:"heap_sys_bytes"`
	PeakRSS       uint64 `json:"peak_rss_bytes"`
	// Profile is the per-op profile of the timed steps (BenchTrainProfiled;
	// nil otherwise).
	Profile *OpProfile `json:"profile,omitempty"`
}

// BenchTrain measures training steps of b's model on random windows:
// warmup untimed steps, then steps timed ones.
//
// The model lives on the backend be, chosen by the caller (nil:
// transformer.ErrNoBackend).
func BenchTrain(be backend.Backend, b TrainBench, steps, warmup int, seed uint64) (*TrainReport, error) {
	return benchTrain(be, b, steps, warmup, seed, false)
}

// BenchTrainProfiled is BenchTrain with the per-op profile of the timed
// steps (TrainReport.Profile): the model runs on a wrapper of be (nil: a
// CPU backend with kernels.Default) that times every op.
func BenchTrainProfiled(be backend.Backend, b TrainBench, steps, warmup int, seed uint64) (*TrainReport, error) {
	return benchTrain(be, b, steps, warmup, seed, true)
}

func benchTrain(be backend.Backend, b TrainBench, steps, warmup int, seed uint64, profile bool) (*TrainReport, error) {
	if steps < 1 || warmup < 0 {
		return nil, fmt.Errorf("perf: %d steps, %d warm-up", steps, warmup)
	}
	runtime.GC()
	debug.FreeOSMemory()
	resetPeakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	sample := func() {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > base && ms.HeapInuse-base > peak {
			peak = ms.HeapInuse - base
		}
	}
	var tb *timedBackend
	if profile {
		if be == nil {
			return nil, transformer.ErrNoBackend
		}
		tb = newTimedBackend(be, b.Model)
		be = tb
	}
	m, err := transformer.NewOn(be, b.Model, seed)
	if err != nil {
		return nil, err
	}
	defer m.Free() // the model's buffers (a GPU's memory) go back before the next configuration
	T, B := b.Model.Context, b.Batch
	r := rand.New(rand.NewPCG(seed, 0x62656e6368))
	x := make([]byte, B*T)
	for i := range x {
		x[i] = byte(r.IntN(b.Model.Alphabet))
	}
	windows := make(windowList, B)
	for i := range windows {
		windows[i] = x[i*T : (i+1)*T]
	}
	tc := transformer.DefaultTrainConfig()
	tc.BatchSize = B
	tr, err := transformer.NewTrainer(m, tc, windows, nil)
	if err != nil {
		return nil, err
	}
	defer tr.Free()
	sample()
	rep := &TrainReport{Name: b.Name, Model: b.Model, Batch: B, Params: b.Model.NumParams(),
		Threads: runtime.GOMAXPROCS(0), Backend: m.Backend().Name(), Steps: steps, Warmup: warmup}
	for i := 0; i < warmup; i++ {
		tr.TrainStep(x, B)
		sample()
	}
	if tb != nil {
		tb.reset()
	}
	var total time.Duration
	for i := 0; i < steps; i++ {
		t0 := time.Now()
		rep.Loss, _ = tr.TrainStep(x, B)
		d := time.Since(t0)
		total += d
		if i == 0 || d < rep.MinStep {
			rep.MinStep = d
		}
		sample()
	}
	rep.MeanStep = total / time.Duration(steps)
	rep.TokensPerSecond = float64(B*T) / rep.MeanStep.Seconds()
	rep.PeakHeapInUse, rep.HeapSys = peak, ms.HeapSys
	rep.PeakRSS = peakRSS()
	if tb != nil {
		rep.Profile = tb.profile(steps, rep.MeanStep)
	}
	runtime.KeepAlive(tr)
	return rep, nil
}

type windowList [][]byte

func (w windowList) Windows() int        { return len(w) }
func (w windowList) Window(i int) []byte { return w[i] }

// resetPeakRSS asks Linux to reset the process's peak RSS (VmHWM); it is a
// no-op elsewhere or when not permitted.
func resetPeakRSS() {
	if f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0); err == nil {
		f.WriteString("5")
		f.Close()
	}
}

// peakRSS is VmHWM from /proc/self/status in bytes, or 0.
func peakRSS() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// WriteTrainReports prints the reports as a table.
func WriteTrainReports(w io.Writer, rs []*TrainReport) {
	fmt.Fprintf(w, "training throughput (forward + backward + clipping + AdamW), float32, random windows\n")
	fmt.Fprintf(w, "%-6s %-34s %5s %9s %8s %11s %11s %12s %11s %10s\n", "config", "model", "batch", "params", "threads", "step (mean)", "step (min)", "tokens/s", "peak heap", "peak RSS")
	mib := func(b uint64) string {
		if b == 0 {
			return "?"
		}
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	for _, r := range rs {
		c := r.Model
		model := fmt.Sprintf("L=%d H=%v E=%d N=%d A=%d", c.Layers, c.Heads, c.Embed, c.Context, c.Alphabet)
		fmt.Fprintf(w, "%-6s %-34s %5d %9d %8d %11s %11s %12.0f %11s %10s\n", r.Name, model, r.Batch, r.Params, r.Threads,
			r.MeanStep.Round(time.Millisecond), r.MinStep.Round(time.Millisecond), r.TokensPerSecond, mib(r.PeakHeapInUse), mib(r.PeakRSS))
	}
}
