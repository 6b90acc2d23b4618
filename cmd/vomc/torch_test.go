//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// torchCPU is the torch engine on the CPU, checked once per test process
// (each check starts Python and imports torch, a second of CPU).
var torchCPU = &trainrun.Torch{Device: "cpu"}

// needTorch skips the test where the PyTorch engine cannot run (no Python
// with torch and numpy), saying why.
func needTorch(t *testing.T) {
	t.Helper()
	if _, err := torchCPU.Check(); err != nil {
		t.Skipf("torch engine unavailable: %v", err)
	}
}

// needTorchFull is needTorch for the torch-engine tests that -short
// skips: each starts Python with torch (seconds a start); under -short
// only the cheap checks run (TestTorchBadInput, which starts the engine's
// check, and trainrun's TestPythonOptions), and the full suite (go test
// without -short) runs these.
func needTorchFull(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts the torch engine; the full suite (without -short) runs it")
	}
	needTorch(t)
}

// logLines reads a run's train.jsonl: the log entries (engine lines
// skipped) and the number of engine lines.
func logLines(t *testing.T, dir string) (entries []map[string]any, engines int) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, trainLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", trainLog, err)
		}
		if _, ok := m["engine"]; ok {
			engines++
			continue
		}
		entries = append(entries, m)
	}
	return entries, engines
}

func relDiff(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(a), 1e-300) }

// TestTorchMatchesGo: from the same initial parameters (vomc's InitParams,
// which 'vomc train --engine torch' hands the engine) and the same
// batches, the torch engine's first 20 training losses equal the Go
// engine's to 1e-4 relative, and so do the gradient norms, learning rates
// (at every step, under both schedules) and validation losses, for several
// architectures and both losses.
func TestTorchMatchesGo(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "3", "-K", "30", "-N", "48", "--NK", "192", "--fresh=false", "--seed", "4", "--out", p("data"))
	cases := []struct {
		name string
		args []string
	}{
		{"full", []string{"--layers", "2", "--heads", "2,4", "-E", "16"}},
		{"sinusoidal-relu-noln", []string{"--layers", "2", "--heads", "2", "-E", "16", "--pos", "sinusoidal", "--act", "relu", "--layernorm=false"}},
		{"attention-only-sumloss", []string{"--layers", "3", "--heads", "1", "-E", "12", "--no-ff", "--sum-loss", "--clip", "0"}},
		{"cut-windows", []string{"--layers", "1", "--heads", "2", "-E", "8", "-N", "16", "--val-frac", "0.2"}},
		// the paper's optimiser: constant lr without warm-up or clipping;
		// and the constant schedule after a warm-up
		{"constant-paper", []string{"--layers", "1", "--heads", "2", "-E", "8", "--lr-schedule", "constant", "--warmup", "0", "--clip", "0"}},
		{"constant-warmup", []string{"--layers", "1", "--heads", "2", "-E", "8", "--lr-schedule", "constant"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			common := append([]string{"train", "--data", p("data"), "--batch", "8", "--max-steps", "20", "--log-every", "1",
				"--warmup", "5", "--lr", "0.003", "--seed", "7"}, c.args...)
			runOK(t, append(common, "--out", p(c.name+"-go"))...)
			runOK(t, append(common, "--out", p(c.name+"-torch"), "--engine", "torch", "--device", "cpu")...)
			g, _ := logLines(t, p(c.name+"-go"))
			tl, engines := logLines(t, p(c.name+"-torch"))
			if engines != 1 {
				t.Errorf("%d engine lines in the torch run's log, want 1", engines)
			}
			if len(g) != len(tl) || len(g) < 20 {
				t.Fatalf("%d log entries (Go), %d (torch)", len(g), len(tl))
			}
			worst := 0.0
			for i := range g {
				for _, k := range []string{"step", "epoch"} {
					if g[i][k] != tl[i][k] {
						t.Fatalf("entry %d: %s %v (Go), %v (torch)", i, k, g[i][k], tl[i][k])
					}
				}
				// the schedule's cosine: Go's math.Cos and C's cos may differ in the last bit
				if d := relDiff(g[i]["lr"].(float64), tl[i]["lr"].(float64)); d > 1e-14 {
					t.Fatalf("entry %d: lr %v (Go), %v (torch)", i, g[i]["lr"], tl[i]["lr"])
				}
				for _, k := range []string{"train_loss", "grad_norm", "val_loss", "epoch_train_loss"} {
					a, ok := g[i][k].(float64)
					b, ok2 := tl[i][k].(float64)
					if ok != ok2 {
						t.Fatalf("entry %d: %s present in one log only", i, k)
					}
					if !ok {
						continue
					}
					d := relDiff(a, b)
					if k == "train_loss" {
						worst = max(worst, d)
					}
					if d > 1e-4 {
						t.Errorf("entry %d (step %v): %s %.9g (Go), %.9g (torch): relative difference %.2g > 1e-4", i, g[i]["step"], k, a, b, d)
					}
				}
			}
			t.Logf("%d entries; largest relative difference of the training losses %.2g", len(g), worst)
		})
	}
}

// TestTorchModelInVomc: a torch-trained model loads in vomc verified (with
// its checksum, no warning) and gives, on the validation windows, the loss
// torch computed itself (the checkpoint's best validation loss, the model
// having the best parameters) to 1e-5; its checkpoint resumes on the Go
// engine; 'vomc eval --methods tf:path=' evaluates it beside CTW and
// 'vomc probe' probes it.
func TestTorchModelInVomc(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "30", "-N", "40", "--NK", "160", "--fresh=false", "--seed", "2", "--out", p("data"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "10", "-N", "40", "--seed", "3", "--out", p("test"))
	runOK(t, "train", "--engine", "torch", "--device", "cpu", "--data", p("data"), "--out", p("run"), "--layers", "2",
		"--heads", "2", "-E", "16", "--batch", "16", "--epochs", "3", "--val-frac", "0.2", "--warmup", "3", "--lr", "0.01")
	warned := ""
	old := safetensors.Warnf
	safetensors.Warnf = func(format string, args ...any) { warned = format }
	defer func() { safetensors.Warnf = old }()
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), p("run/"+trainModel))
	if err != nil {
		t.Fatal(err)
	}
	if warned != "" {
		t.Fatalf("loading the torch model warned: %s", warned)
	}
	c, train, val, err := trainrun.Load(p("run"), "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	if c.State.Epoch != 3 || val == nil || math.IsInf(c.State.BestVal, 0) {
		t.Fatalf("checkpoint after %d epochs, best validation loss %g", c.State.Epoch, c.State.BestVal)
	}
	got := transformer.MeanLoss[*transformer.Activations](m, m.NewActivations(16, 40, false), val, 16)
	if d := relDiff(c.State.BestVal, got); d > 1e-5 {
		t.Fatalf("validation loss %.9g in vomc, %.9g in torch: relative difference %.2g > 1e-5", got, c.State.BestVal, d)
	}
	t.Logf("validation loss %.9g (vomc) vs %.9g (torch) on %d windows; %d training windows", got, c.State.BestVal, val.Windows(), train.Windows())
	// the torch model with interventions is evaluated by the Go engine too
	ivs := ",tf:path=" + p("run") + ":ablate=L1H1+L2H2:mode=mean:refs=8,tf:path=" + p("run") + ":pattern=L1H2=offset:1"
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,tf:path="+p("run")+ivs, "--out", p("eval"))
	// and its residual stream is probed
	runOK(t, "probe", "--model", p("run"), "--data", p("test"), "--train", "4", "--val", "2", "--test", "4", "--positions", "8", "--bootstrap", "20", "--out", p("probe"))
	exists(t, p("eval/results.json"), p("run/curve.png"), p("run/config.json"), p("run/train_config.json"), p("probe/probe.json"))
	var res struct {
		Methods []struct{ Window struct{ Mean float64 } }
	}
	if b, err := os.ReadFile(p("eval/results.json")); err != nil || json.Unmarshal(b, &res) != nil || len(res.Methods) != 4 {
		t.Fatalf("results.json: %v, %d methods", err, len(res.Methods))
	}
	if w := res.Methods; w[2].Window.Mean == w[1].Window.Mean || w[3].Window.Mean == w[1].Window.Mean {
		t.Errorf("the interventions changed nothing on the torch model: %+v", w)
	}
	// more epochs on the Go engine, from the torch checkpoint
	if e := trainrun.RunEngine(p("run")); e != trainrun.EngineTorch {
		t.Fatalf("the run records engine %q", e)
	}
	runFail(t, "train", "--out", p("run"), "--resume", "--engine", "go", "--device", "cpu") // a torch flag on the Go engine
	runOK(t, "train", "--out", p("run"), "--resume", "--engine", "go")
}

// TestTorchConstantExtends: on the torch engine too, the paper's optimiser
// (--lr-schedule constant --warmup 0 --clip 0) round-trips through the
// checkpoint and --resume, and a run ended at an epoch's end and extended
// (--resume --epochs) ends with exactly the parameters and moments of an
// uninterrupted run at the constant rate.
func TestTorchConstantExtends(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "24", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "5", "--out", p("data"))
	args := []string{"train", "--engine", "torch", "--device", "cpu", "--torch-threads", "1", "--data", p("data"), "--layers", "1",
		"--heads", "2", "-E", "8", "--batch", "8", "--lr", "0.01", "--lr-schedule", "constant", "--warmup", "0", "--clip", "0",
		"--patience", "0", "--val-frac", "0.2", "--seed", "3", "--log-every", "2"}
	runOK(t, append(args, "--epochs", "3", "--out", p("ref"))...)
	runOK(t, append(args, "--epochs", "2", "--out", p("run"))...)
	runOK(t, "train", "--out", p("run"), "--resume", "--epochs", "3")
	ca, err := transformer.LoadCheckpoint(p("ref/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := transformer.LoadCheckpoint(p("run/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if tc := cb.Train; tc.Schedule != transformer.ScheduleConstant || tc.ClipNorm != 0 || tc.WarmupSteps != 0 || tc.Epochs != 3 {
		t.Fatalf("the extended run's settings %+v", tc)
	}
	if !slices.Equal(ca.Params, cb.Params) || !slices.Equal(ca.M, cb.M) || !slices.Equal(ca.V, cb.V) || ca.State.Step != cb.State.Step {
		t.Fatalf("the extended run (step %d) differs from the uninterrupted one (step %d)", cb.State.Step, ca.State.Step)
	}
	for _, e := range cb.History {
		if e.LR != 0.01 {
			t.Fatalf("learning rate %g at step %d, want the constant 0.01", e.LR, e.Step)
		}
	}
}

// TestTorchKillResume: a torch-engine run killed with SIGKILL (vomc and the
// engine both) resumes from its last checkpoint and ends with exactly the
// parameters, moments and state of an uninterrupted run.
func TestTorchKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	needTorch(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "24", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "5", "--out", p("data"))
	args := []string{"train", "--engine", "torch", "--device", "cpu", "--torch-threads", "1", "--data", p("data"), "--layers", "2",
		"--heads", "2,1", "-E", "8", "--batch", "8", "--epochs", "6", "--warmup", "5", "--lr", "0.01", "--val-frac", "0.2",
		"--seed", "3", "--log-every", "3", "--checkpoint-every", "2"}
	runOK(t, append(args, "--out", p("ref"))...)

	t.Setenv("VOMC_TORCH_TEST_DELAY", "0.02")
	cmd := startVomc(t, append(args, "--out", p("run"))...)
	step := waitCheckpoint(t, p("run"), 8, cmd)
	killTree(t, cmd)
	t.Logf("killed vomc and the engine after the checkpoint of step %d", step)
	t.Setenv("VOMC_TORCH_TEST_DELAY", "0")
	runOK(t, "train", "--out", p("run"), "--resume")

	ca, err := transformer.LoadCheckpoint(p("ref/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	cb, err := transformer.LoadCheckpoint(p("run/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2][]float32{"params": {ca.Params, cb.Params}, "adam.m": {ca.M, cb.M}, "adam.v": {ca.V, cb.V}, "best": {ca.BestParams, cb.BestParams}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("%s: %d values, uninterrupted %d", name, len(pair[1]), len(pair[0]))
		}
		for i := range pair[0] {
			if pair[0][i] != pair[1][i] {
				t.Fatalf("checkpoint %s[%d]: %v, uninterrupted %v", name, i, pair[1][i], pair[0][i])
			}
		}
	}
	ca.State.Elapsed, cb.State.Elapsed = 0, 0
	if ca.State != cb.State || ca.AdamT != cb.AdamT || len(ca.History) != len(cb.History) {
		t.Fatalf("final state %+v (%d log entries), uninterrupted %+v (%d)", cb.State, len(cb.History), ca.State, len(ca.History))
	}
	for i := range ca.History {
		a, b := ca.History[i], cb.History[i]
		if a.Step != b.Step || a.TrainLoss != b.TrainLoss || !(a.ValLoss == b.ValLoss || math.IsNaN(a.ValLoss) && math.IsNaN(b.ValLoss)) {
			t.Fatalf("log entry %d: %+v, uninterrupted %+v", i, b, a)
		}
	}
	exists(t, p("run/"+trainModel), p("run/curve.png"))
}

// TestTorchParentDeath: when vomc is killed with SIGKILL, the engine gets
// SIGTERM (Linux's parent-death signal), saves its checkpoint at the step
// it had reached (beyond the last periodic one) and exits, although its
// progress pipe is gone.
func TestTorchParentDeath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs Linux")
	}
	needTorch(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "24", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "5", "--out", p("data"))
	t.Setenv("VOMC_TORCH_TEST_DELAY", "0.03")
	cmd := startVomc(t, "train", "--engine", "torch", "--device", "cpu", "--data", p("data"), "--out", p("run"), "--layers", "1",
		"--heads", "1", "-E", "8", "--batch", "8", "--max-steps", "2000", "--epochs", "1000", "--log-every", "1", "--checkpoint-every", "100000")
	logged := 0
	for deadline := time.Now().Add(90 * time.Second); logged < 8 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(p("run/" + trainLog)); err == nil {
			logged = strings.Count(string(b), "\"step\"")
		}
	}
	if logged < 8 {
		t.Fatal("the run did not start in time")
	}
	engines := children(cmd.Process.Pid)
	syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		alive := false
		for _, c := range engines {
			if syscall.Kill(c, 0) == nil {
				alive = true
			}
		}
		if !alive {
			break
		}
	}
	c, err := transformer.LoadCheckpoint(p("run/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if c.State.Step < logged {
		t.Fatalf("checkpoint at step %d after vomc died, %d steps were logged: the engine did not save", c.State.Step, logged)
	}
	t.Logf("vomc killed after %d logged steps; the engine saved step %d", logged, c.State.Step)
}

// children are the process ids of pid's children (Linux).
func children(pid int) []int {
	var out []int
	kids, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, k := range kids {
		b, _ := os.ReadFile(k)
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// waitCheckpoint polls dir's checkpoint until it is at step ≥ min and
// returns its step; it fails if cmd exits first or after 60 s.
func waitCheckpoint(t *testing.T, dir string, min int, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Process.Wait(); close(done) }()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatal("the run ended before it was killed")
		default:
		}
		if c, err := transformer.LoadCheckpoint(filepath.Join(dir, trainCheckpoint)); err == nil && c.State.Step >= min {
			return c.State.Step
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no checkpoint in time")
	return 0
}

// killTree kills cmd's process and its children with SIGKILL, children
// first.
func killTree(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	pid := cmd.Process.Pid
	for _, c := range children(pid) {
		syscall.Kill(c, syscall.SIGKILL)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	cmd.Wait()
}

// TestTorchBadInput: a bad engine, device or flag and a missing
// interpreter are refused with an error naming the problem, before
// anything is written (these checks need no torch).
func TestTorchBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "32", "--seed", "1", "--out", p("data"))
	fail := badTrain(t, p)
	fail("--engine", nil, "--engine", "jax")
	fail("--device needs --engine torch", nil, "--device", "cuda")
	fail("--arch", nil, "--arch", "lstm")
	fail("no Python with torch", map[string]string{"VOMC_PYTHON": p("no-such-python")}, "--engine", "torch")
	fail("want auto, cpu, cuda or cuda:N", nil, "--engine", "torch", "--device", "tpu")
	fail("amp \"fp8\"", nil, "--engine", "torch", "--amp", "fp8")
	fail("threads", nil, "--engine", "torch", "--torch-threads", "-2")
	fail("--hidden is the width of --arch lstm or MODULE:FACTORY", nil, "--engine", "torch", "--hidden", "8")
	fail("--allow-unverified", nil, "--engine", "torch", "--allow-unverified")
}

// badTrain returns a function that runs 'vomc train' on p("data") with the
// extra flags and environment and checks that it fails naming want and
// writes nothing (a transformer's --heads 1 unless extra names an --arch).
func badTrain(t *testing.T, p func(string) string) func(want string, env map[string]string, extra ...string) {
	return func(want string, env map[string]string, extra ...string) {
		t.Helper()
		base := []string{"train", "--data", p("data"), "--layers", "1", "-E", "8", "--batch", "4", "--max-steps", "2"}
		if !slices.Contains(extra, "--arch") {
			base = append(base, "--heads", "1")
		}
		for k, v := range env {
			t.Setenv(k, v)
		}
		out := p("out-" + strings.ReplaceAll(strings.Join(extra, "_"), "/", "_"))
		stderr := captureStderr(t, func() {
			if code := run(append(append(base, "--out", out), extra...)); code == 0 {
				t.Errorf("vomc train %v succeeded", extra)
			}
		})
		if !strings.Contains(stderr, want) {
			t.Errorf("vomc train %v: error %q does not say %q", extra, strings.TrimSpace(stderr), want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("vomc train %v created %s", extra, out)
		}
		for k := range env {
			os.Unsetenv(k)
		}
	}
}

// TestTorchBadInputEngine: what the engine itself checks — CUDA on a
// machine without it, a corrupt data set, a bad learning rate — is
// refused before anything is written; --force keeps the old run when the
// new flags are bad.
func TestTorchBadInputEngine(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "32", "--seed", "1", "--out", p("data"))
	fail := badTrain(t, p)
	if _, err := (&trainrun.Torch{Device: "cuda"}).Check(); err != nil {
		fail("CUDA asked for but not available", nil, "--engine", "torch", "--device", "cuda")
	}
	fail("--lr", nil, "--engine", "torch", "--device", "cpu", "--lr", "-1")
	runOK(t, "train", "--engine", "torch", "--device", "cpu", "--data", p("data"), "--out", p("kept"), "--layers", "1",
		"--heads", "1", "-E", "8", "--batch", "4", "--max-steps", "2")
	runFail(t, "train", "--engine", "torch", "--device", "cpu", "--data", p("data"), "--out", p("kept"), "--force", "-N", "1")
	exists(t, p("kept/"+trainModel), p("kept/"+trainCheckpoint))
	b, _ := os.ReadFile(p("data/symbols.bin"))
	b[5] ^= 1
	os.WriteFile(p("data/symbols.bin"), b, 0o644)
	fail("corrupt", nil, "--engine", "torch", "--device", "cpu")
}

// captureStderr runs f with os.Stderr redirected and returns what it wrote.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	ch := make(chan string)
	go func() {
		var sb strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			sb.WriteString(sc.Text() + "\n")
		}
		ch <- sb.String()
	}()
	f()
	os.Stderr = old
	w.Close()
	return <-ch
}

// TestTorchLSTM: bring your own architecture: an LSTM trained by the torch
// engine on a vomc data set, its distributions written as .npy and
// evaluated against CTW through the npy:path= method.
func TestTorchLSTM(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "20", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "6", "--out", p("data"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "6", "-N", "32", "--seed", "7", "--out", p("test"))
	runOK(t, "train", "--engine", "torch", "--device", "cpu", "--arch", "lstm", "--layers", "1", "-E", "8", "--hidden", "16",
		"--data", p("data"), "--out", p("lstm"), "--batch", "8", "--epochs", "2", "--lr", "0.01")
	c, err := transformer.LoadCheckpoint(p("lstm/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelFormat != "vomc-torch-module" || !strings.Contains(c.ModelConfig, `"arch":"lstm"`) || c.State.Epoch != 2 {
		t.Fatalf("checkpoint of model %q %s after %d epochs", c.ModelFormat, c.ModelConfig, c.State.Epoch)
	}
	// an LSTM run resumes on the torch engine only
	if stderr := captureStderr(t, func() { runFail(t, "train", "--out", p("lstm"), "--resume", "--engine", "go") }); !strings.Contains(stderr, "resume it with --engine torch") {
		t.Errorf("resuming the LSTM on the Go engine: %q", stderr)
	}
	runOK(t, "predict", "--model", p("lstm"), "--data", p("test"), "--out", p("lstm.npy"), "--device", "cpu")
	runFail(t, "predict", "--model", p("lstm"), "--data", p("test"), "--out", p("lstm.npy"), "--device", "cpu") // exists
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,npy:path="+p("lstm.npy")+":name=LSTM", "--out", p("eval"))
	var res struct {
		Methods []struct {
			Name string `json:"name"`
		} `json:"methods"`
	}
	b, err := os.ReadFile(p("eval/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil || !strings.Contains(string(b), `"LSTM"`) {
		t.Fatalf("results.json without the LSTM (%v): %.300s", err, b)
	}
}

// TestSnapshotsBothEngines: --snapshots log:5 keeps the model at steps 1,
// 2, 4, 9, 20 of a 20-step run on both engines, the two engines' snapshots
// agree (same initial parameters and batches), a resumed run keeps the
// schedule, and 'vomc dynamics' measures them (-short: the Go engine's
// part only).
func TestSnapshotsBothEngines(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "30", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "8", "--out", p("data"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "32", "--seed", "9", "--out", p("test"))
	args := []string{"train", "--data", p("data"), "--layers", "1", "--heads", "2", "-E", "8", "--batch", "8",
		"--max-steps", "20", "--snapshots", "log:5", "--seed", "2"}
	want := []int{1, 2, 4, 9, 20}
	check := func(run string, steps []int) {
		t.Helper()
		for _, s := range steps {
			exists(t, trainrun.SnapshotPath(p(run), s))
		}
		ents, _ := os.ReadDir(filepath.Join(p(run), trainrun.SnapshotDir))
		if len(ents) != len(steps) {
			t.Errorf("%s: %d snapshots, want %d", run, len(ents), len(steps))
		}
	}
	// interrupted after step 6, resumed: the schedule is the run's
	ctx, cancel := context.WithCancel(context.Background())
	trainContext = func() context.Context { return ctx }
	trainStepHook = func(s int) {
		if s == 6 {
			cancel()
		}
	}
	runFail(t, append(args, "--out", p("go"))...)
	trainStepHook, trainContext = nil, context.Background
	runOK(t, "train", "--out", p("go"), "--resume")
	check("go", want)
	runOK(t, append(args, "--out", p("go2"))...)
	check("go2", want)
	runOK(t, "dynamics", "--run", p("go2"), "--data", p("test"), "--windows", "12", "--head-windows", "4")
	exists(t, p("go2/dynamics/dynamics.json"), p("go2/dynamics/dynamics.png"), p("go2/dynamics/phases.txt"))
	if _, err := os.Stat(p("go2/dynamics/" + dynamics.CheckpointFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the checkpoint of 'vomc dynamics' is left after the outputs are written: %v", err)
	}
	var res struct {
		Points []struct {
			Step int `json:"step"`
		} `json:"points"`
	}
	b, _ := os.ReadFile(p("go2/dynamics/dynamics.json"))
	if err := json.Unmarshal(b, &res); err != nil || len(res.Points) != len(want) || res.Points[4].Step != 20 {
		t.Fatalf("dynamics.json: %v, %+v", err, res.Points)
	}
	if testing.Short() {
		t.Log("-short: the torch engine's snapshots are compared in the full suite (without -short)")
		return
	}
	if _, err := torchCPU.Check(); err != nil {
		t.Logf("torch engine unavailable (%v): its snapshots are not tested", err)
		return
	}
	runOK(t, append(args, "--out", p("torch"), "--engine", "torch", "--device", "cpu")...)
	check("torch", want)
	for _, s := range want {
		a, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), trainrun.SnapshotPath(p("go2"), s))
		if err != nil {
			t.Fatal(err)
		}
		b, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), trainrun.SnapshotPath(p("torch"), s))
		if err != nil {
			t.Fatal(err)
		}
		pa, pb := a.HostParams(), b.HostParams()
		worst := 0.0
		for i := range pa {
			worst = max(worst, math.Abs(float64(pa[i]-pb[i])))
		}
		if worst > 1e-5 {
			t.Errorf("snapshot of step %d: parameters differ by up to %g between the engines", s, worst)
		}
	}
}
