package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestTrainHelperProcess is not a test: TestTrainKillResume runs the test
// binary again with VOMC_TRAIN_HELPER set, and then this function runs
// 'vomc train' with the arguments in VOMC_TRAIN_ARGS, slowed down by
// VOMC_TRAIN_DELAY per step so that the parent can kill it mid-run.
func TestTrainHelperProcess(t *testing.T) {
	if os.Getenv("VOMC_TRAIN_HELPER") != "1" {
		t.Skip("helper process for TestTrainKillResume")
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv("VOMC_TRAIN_ARGS")), &args); err != nil {
		os.Exit(3)
	}
	if d, err := time.ParseDuration(os.Getenv("VOMC_TRAIN_DELAY")); err == nil && d > 0 {
		trainStepHook = func(int) { time.Sleep(d) }
	}
	os.Exit(run(args))
}

// startTrain runs 'vomc train args…' in a child process.
func startTrain(t *testing.T, delay time.Duration, args ...string) *exec.Cmd {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrainHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "VOMC_TRAIN_HELPER=1", "VOMC_TRAIN_ARGS="+string(a), "VOMC_TRAIN_DELAY="+delay.String())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("child output:\n%s", out.String())
		}
	})
	return cmd
}

// checkpointStep is the step of the checkpoint in dir (−1 if none can be
// read: not written yet).
func checkpointStep(dir string) int {
	c, err := transformer.LoadCheckpoint(filepath.Join(dir, trainCheckpoint))
	if err != nil {
		return -1
	}
	return c.State.Step
}

// killAfter waits until the child's checkpoint is at step ≥ step, lets it
// run a little further (so the kill lands anywhere: in a step, in a
// checkpoint write, in a log write), kills it with SIGKILL and returns the
// step of the checkpoint left behind.
func killAfter(t *testing.T, cmd *exec.Cmd, dir string, step int, extra time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for checkpointStep(dir) < step {
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint at step %d after 60 s", step)
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(extra)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the run was not killed by SIGKILL (it ended first?): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, trainModel)); err == nil {
		t.Fatalf("the run had finished (model written) when it was killed")
	}
	s := checkpointStep(dir)
	if s < step {
		t.Fatalf("after the kill the checkpoint is unreadable or older (step %d < %d)", s, step)
	}
	return s
}

// deterministicLog returns train.jsonl without the two wall-clock fields.
func deterministicLog(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, trainLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: bad line %q: %v", dir, sc.Text(), err)
		}
		delete(m, "tokens_per_s")
		delete(m, "elapsed_s")
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	return lines
}

// TestTrainKillResume runs a small training run to the end in this
// process, then the same run in a child process that is killed with
// SIGKILL twice at arbitrary moments after checkpoints and resumed with
// --resume each time. The resumed run must end with a byte-identical
// model.safetensors, the same parameters, optimiser state and counters in
// its checkpoint, and the same training log (all fields except
// tokens_per_s and elapsed_s, which measure the machine).
func TestTrainKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "24", "-N", "32", "--NK", "128", "--fresh=false", "--seed", "5", "--out", p("data"))
	args := []string{"train", "--data", p("data"), "--layers", "2", "--heads", "2,1", "--E", "8", "--batch", "8",
		"--epochs", "8", "--patience", "3", "--warmup", "5", "--lr", "0.01", "--val-frac", "0.2", "--seed", "3",
		"--log-every", "3", "--checkpoint-every", "2"}
	runOK(t, append(args, "--out", p("ref"))...)

	out := append(args, "--out", p("run"))
	cmd := startTrain(t, 3*time.Millisecond, out...)
	s1 := killAfter(t, cmd, p("run"), 6, rand.N(12*time.Millisecond))
	resume := []string{"train", "--out", p("run"), "--resume"}
	cmd = startTrain(t, 3*time.Millisecond, resume...)
	s2 := killAfter(t, cmd, p("run"), s1+9, rand.N(12*time.Millisecond))
	cmd = startTrain(t, 0, resume...)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("resumed run: %v", err)
	}
	t.Logf("killed with checkpoints at steps %d and %d", s1, s2)

	a, _ := os.ReadFile(p("ref/" + trainModel))
	b, err := os.ReadFile(p("run/" + trainModel))
	if err != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("model.safetensors differs from the uninterrupted run's (%d vs %d bytes, %v)", len(b), len(a), err)
	}
	ca, _ := transformer.LoadCheckpoint(p("ref/" + trainCheckpoint))
	cb, err := transformer.LoadCheckpoint(p("run/" + trainCheckpoint))
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2][]float32{"params": {ca.Params, cb.Params}, "adam.m": {ca.M, cb.M}, "adam.v": {ca.V, cb.V}, "best": {ca.BestParams, cb.BestParams}} {
		for i := range pair[0] {
			if pair[0][i] != pair[1][i] {
				t.Fatalf("checkpoint %s[%d]: %v, uninterrupted %v", name, i, pair[1][i], pair[0][i])
			}
		}
	}
	ca.State.Elapsed, cb.State.Elapsed = 0, 0
	if ca.State != cb.State || ca.AdamT != cb.AdamT {
		t.Fatalf("final state %+v, uninterrupted %+v", cb.State, ca.State)
	}
	la, lb := deterministicLog(t, p("ref")), deterministicLog(t, p("run"))
	if strings.Join(la, "\n") != strings.Join(lb, "\n") {
		t.Fatalf("train.jsonl differs:\n%s\nuninterrupted:\n%s", strings.Join(lb, "\n"), strings.Join(la, "\n"))
	}
	if s2 >= ca.State.Step {
		t.Fatalf("second kill after the last step (%d ≥ %d)", s2, ca.State.Step)
	}
	t.Logf("%d steps, %d epochs, %d log lines, stopped early: %v", ca.State.Step, ca.State.Epoch, len(la), ca.State.Stopped)
	exists(t, p("run/curve.png"), p("run/curve.svg"), p("run/config.json"), p("run/train_config.json"))
}

// TestTrainCLI covers the command's checks and evaluation of trained
// models beside CTW with 'vomc eval --methods ctw,tf:path=…'.
func TestTrainCLI(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "1", "-K", "12", "-N", "24", "--NK", "96", "--fresh=false", "--seed", "1", "--out", p("train"))
	runOK(t, "data", "-A", "3", "-D", "1", "-K", "20", "-N", "24", "--seed", "2", "--out", p("test"))
	common := []string{"train", "--data", p("train"), "--layers", "1", "--heads", "2", "--E", "8", "--batch", "8", "--epochs", "2", "--warmup", "2"}
	runOK(t, append(common, "--out", p("r1"), "--val", p("test"))...)
	runOK(t, append(common, "--out", p("r2"), "-N", "12", "--no-ff", "--pos", "sinusoidal", "--layernorm=false", "--val-frac", "0")...)
	runFail(t, append(common, "--out", p("r3"), "--no-ff", "--act", "relu")...) // no FF: --act would do nothing
	runFail(t, append(common, "--out", p("r1"))...)                             // holds a run
	runOK(t, append(common, "--out", p("r1"), "--force", "--seed", "9")...)     // start afresh
	runOK(t, "train", "--out", p("r1"), "--resume")                             // finished: rewrites the model
	runFail(t, "train", "--out", p("r1"), "--resume", "--lr", "0.1")            // settings are in the checkpoint
	runFail(t, "train", "--out", p("r1"), "--resume", "--data", p("test"))      // other data
	runFail(t, append(common, "--out", p("r3"), "--heads", "2,2")...)           // 2 head counts, 1 layer
	runFail(t, append(common, "--out", p("r3"), "--E", "7")...)                 // heads do not divide E
	runFail(t, append(common, "--out", p("r3"), "--act", "tanh")...)            // unknown activation
	runFail(t, append(common, "--out", p("r3"), "-N", "25")...)                 // longer than the windows
	runFail(t, "train", "--out", p("r4"), "--resume")                           // nothing to resume
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), p("r2/"+trainModel))
	if err != nil || m.Config.FeedForward || m.Config.LayerNorm || m.Config.Context != 12 || m.Config.Positional != transformer.Sinusoidal {
		t.Fatalf("r2 model: %+v, %v", m, err)
	}
	var cj transformer.Config
	if b, err := os.ReadFile(p("r2/" + trainConfigJSON)); err != nil || json.Unmarshal(b, &cj) != nil || cj.String() != m.Config.String() {
		t.Fatalf("config.json %+v, model %+v (%v)", cj, m.Config, err)
	}
	runOK(t, "bench", "logits", "--model", p("r2"), "--input", "0,1,2,2,1", "--out", p("logits.json"))
	var lj struct {
		Input  []int
		Logits [][]float32
	}
	if b, err := os.ReadFile(p("logits.json")); err != nil || json.Unmarshal(b, &lj) != nil || len(lj.Logits) != 5 || len(lj.Logits[4]) != 3 {
		t.Fatalf("logits.json: %+v %v", lj, err)
	}
	runFail(t, "bench", "logits", "--model", p("r2"), "--input", "0,1,3")                      // not a symbol
	runFail(t, "bench", "logits", "--model", p("r2"), "--input", strings.Repeat("0,", 12)+"0") // longer than N
	runOK(t, "bench", "train", "--configs", "L=1:H=2:E=8:N=16:B=2", "--steps", "1", "--warmup", "0")
	runOK(t, "bench", "train", "--configs", "L=1:H=2:E=8:N=16:B=2", "--steps", "1", "--json")
	runFail(t, "bench", "train", "--configs", "C9")
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,unigram,tf:path="+p("r1")+",tf:path="+p("r2"), "--out", p("ev"), "--slide")
	res, err := eval.LoadJSONFile(p("ev/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Methods) != 4 || res.Methods[2].Name != "TF(L=1,H=[2],E=8,N=24)@r1" || !strings.HasSuffix(res.Methods[3].Name, "@r2") || !strings.HasPrefix(res.Ref().Name, "CTW") {
		t.Fatalf("methods %v", []string{res.Methods[0].Name, res.Methods[2].Name, res.Methods[3].Name})
	}
}
