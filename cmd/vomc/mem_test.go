//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/ctw/ctwfile"
	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/dataset/datadir"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/source/treefile"
)

// childPeak runs `vomc args…` in a child process (this test binary, see
// TestMain) and returns its peak resident memory in bytes, as the child
// measures it (VmHWM). The child's rusage is no good here: Go starts
// children with CLONE_VM, so the kernel carries the parent's peak over
// into the child's ru_maxrss at exec.
func childPeak(t *testing.T, args ...string) int64 {
	t.Helper()
	peakFile := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VOMC_TEST_CHILD="+strings.Join(args, "\x1f"), "VOMC_TEST_PEAK="+peakFile)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vomc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	b, err := os.ReadFile(peakFile)
	if err != nil {
		t.Fatalf("vomc %s: no peak memory reported: %v", strings.Join(args, " "), err)
	}
	kb, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatalf("vomc %s: peak memory %q: %v", strings.Join(args, " "), b, err)
	}
	return kb << 10
}

// within2 fails unless the estimate is within a factor 2 of the peak that
// measure returns. A process's peak memory varies from run to run with the
// garbage collector's timing (on a loaded 2-core machine a run can hold
// twice the heap of another), so a first measurement outside the factor is
// measured twice more and the median of the three is judged: an estimate
// that is wrong fails every time, one unlucky run does not.
func within2(t *testing.T, what string, est int64, measure func() int64) {
	t.Helper()
	ok := func(peak int64) bool { return est <= 2*peak && 2*est >= peak }
	peaks := []int64{measure()}
	if !ok(peaks[0]) {
		peaks = append(peaks, measure(), measure())
		slices.Sort(peaks)
	}
	peak := peaks[len(peaks)/2]
	runs := make([]string, len(peaks))
	for i, p := range peaks {
		runs[i] = fmtBytes(p)
	}
	t.Logf("%s: estimate %s, measured peak %s (ratio %.2f; runs: %s)", what, fmtBytes(est), fmtBytes(peak), float64(est)/float64(peak), strings.Join(runs, ", "))
	if !ok(peak) {
		t.Errorf("%s: estimate %s is not within 2× of the median measured peak %s", what, fmtBytes(est), fmtBytes(peak))
	}
}

// peakOf returns a measurement of `vomc args…`'s peak memory for within2
// (args that write outputs pass --force, so that a repeated run replaces
// them).
func peakOf(t *testing.T, args ...string) func() int64 {
	return func() int64 { return childPeak(t, args...) }
}

// TestMemoryEstimates runs commands in child processes and compares their
// peak memory with the estimates they check before working.
func TestMemoryEstimates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }

	for i, c := range []struct {
		A, D, K, N int
	}{{3, 5, 2000, 16}, {64, 2, 2, 16}} {
		pr := source.Prior{A: c.A, Depths: []int{c.D}, Lambda: 0.15, Alpha: []float64{0.5}}
		est := datadir.MemoryEstimate(dataset.Config{Prior: pr, K: c.K, NK: c.N, N: c.N, Fresh: true, Seed: 1})
		out := p(fmt.Sprintf("data%d", i))
		within2(t, fmt.Sprintf("data A=%d D=%d K=%d", c.A, c.D, c.K), est,
			peakOf(t, "data", "-A", fmt.Sprint(c.A), "-D", fmt.Sprint(c.D), "-K", fmt.Sprint(c.K), "-N", fmt.Sprint(c.N), "--force", "--out", out))
	}

	pr := source.Prior{A: 64, Depths: []int{2}, Lambda: 0.15, Alpha: []float64{0.5}}
	within2(t, "tree sample A=64 D=2", treefile.SampleMemoryEstimate(pr), peakOf(t, "tree", "sample", "-A", "64", "-D", "2", "--force", "--out", p("big.json")))

	runOK(t, "tree", "sample", "-A", "3", "-D", "4", "--seed", "2", "--out", p("t.json"))
	tr, err := readTree(p("t.json"))
	if err != nil {
		t.Fatal(err)
	}
	within2(t, "generate -n 2e7", treefile.GenerateMemoryEstimate(tr), peakOf(t, "generate", "-n", "20000000", "--force", "--out", p("seq.txt"), p("t.json")))

	// Random bytes: every context occurs, so the worst-case node count of
	// ctw.MemoryEstimate is what is used (on repetitive text it is an
	// upper bound: fewer contexts occur).
	rng := rand.New(rand.NewPCG(1, 1))
	x := make([]byte, 200000)
	for i := range x {
		x[i] = byte(rng.Uint32())
	}
	if err := os.WriteFile(p("text"), x, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := ctw.Config{A: 256, D: 2, Lambda: 0.5, Alpha: 0.5, Init: ctw.Condition}
	counts, err := ctw.CountSequence(cfg, x)
	if err != nil {
		t.Fatal(err)
	}
	est := ctwfile.MemoryEstimate(cfg, x, counts.MAPNodes())
	within2(t, "ctw --mode raw -D 2 (200 kB random)", est, peakOf(t, "ctw", "--mode", "raw", "-D", "2", p("text")))

	// Repetitive text, deep contexts: the worst case (D+1)·n overshoots
	// many times; the exact count of the contexts seen does not.
	var rep []byte
	for len(rep) < 100000 {
		rep = append(rep, fmt.Sprintf("the context tree %d weighting method; ", len(rep)%97)...)
	}
	if err := os.WriteFile(p("rep"), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg = ctw.Config{A: 256, D: 12, Lambda: 0.5, Alpha: 0.5, Init: ctw.Condition}
	if counts, err = ctw.CountSequence(cfg, rep); err != nil {
		t.Fatal(err)
	}
	est = ctwfile.MemoryEstimate(cfg, rep, counts.MAPNodes())
	within2(t, "ctw --mode raw -D 12 (100 kB repetitive)", est, peakOf(t, "ctw", "--mode", "raw", "-D", "12", p("rep")))
}

// TestEvalMemory compares the peak memory of `vomc eval` on data sets with
// its estimate: one where KN's δ-tuning cache dominates, and one of many
// deep trees, whose manifest is much larger than the windows (the trees
// are checked one at a time and not kept, so they must not add to the
// peak).
func TestEvalMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	dir := t.TempDir()
	for _, c := range []struct{ A, D, K, N int }{{3, 1, 50000, 64}, {3, 5, 6000, 16}} {
		ds := filepath.Join(dir, fmt.Sprintf("d%d", c.D))
		runOK(t, "data", "-A", fmt.Sprint(c.A), "-D", fmt.Sprint(c.D), "-K", fmt.Sprint(c.K), "-N", fmt.Sprint(c.N), "--out", ds)
		W := int64(c.K)
		est := experiment.EvalMemoryEstimate(methods.MustParse("ctw,kn,ppm,unigram"), W*int64(c.N)+4*W, methods.Workload{A: c.A, D: c.D, Windows: c.K, N: c.N, Workers: 2})
		within2(t, fmt.Sprintf("eval A=%d D=%d K=%d N=%d", c.A, c.D, c.K, c.N), est,
			peakOf(t, "eval", "--data", ds, "--workers", "2", "--force", "--out", filepath.Join(dir, fmt.Sprintf("out%d", c.D))))
	}
	// The refusal names the estimate.
	memAvailable = func() int64 { return 50 << 20 }
	defer func() { memAvailable = sysmem.Available }()
	err := checkEvalMemory(filepath.Join(dir, "d1"), "", "ctw,kn,ppm,unigram", 2)
	if err == nil || !strings.Contains(err.Error(), "needs about") || !strings.Contains(err.Error(), "50.0 MiB is available") {
		t.Errorf("refusal: %v", err)
	}
	runFail(t, "eval", "--data", filepath.Join(dir, "d1"), "--out", filepath.Join(dir, "refused"))
	if _, err := os.Stat(filepath.Join(dir, "refused")); err == nil {
		t.Error("a refused eval created its output directory")
	}
}
