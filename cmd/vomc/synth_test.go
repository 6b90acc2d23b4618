package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestSynthCLI trains two small synthetic models and evaluates them with
// CTW through the synth method.
func TestSynthCLI(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "24", "--NK", "96", "--fresh=false", "--seed", "1", "--out", p("train"))
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "10", "-N", "24", "--seed", "2", "--out", p("test"))
	common := []string{"synth", "--data", p("train"), "--batch", "8", "--epochs", "2", "--warmup", "2", "--log-every", "3"}
	runOK(t, append(common, "--variant", "allcounts", "--out", p("all"), "--val", p("test"))...)
	runOK(t, append(common, "--variant", "tf20", "--out", p("tf20"), "--embed", "8", "--hidden", "16", "--act", "relu", "--count-norm", "scale")...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("tf20"))...) // exists
	runFail(t, append(common, "--variant", "bogus", "--out", p("x"))...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("x"), "--act", "tanh")...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("x"), "--eval-every", "3")...) // removed
	runOK(t, append(common, "--variant", "tf20", "--out", p("lin"), "--encoding", "linear")...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("x"), "--encoding", "cubic")...)
	runFail(t, append(common, "--variant", "tf20", "--out", p("x"), "--encoding", "log", "--count-norm", "scale")...)
	if m, err := synth.LoadOn(cpu.NewDefault(), p("lin/"+synthModel)); err != nil || m.Config.Encoding != synth.Linear || m.Config.CountNorm != synth.Scale {
		t.Fatalf("linear model: %+v, %v", m, err)
	}
	runOK(t, "synth", "--out", p("all"), "--resume")                  // finished: rewrites the outputs
	runFail(t, "synth", "--out", p("all"), "--resume", "--lr", "0.1") // settings are in the checkpoint
	exists(t, p("all/"+synthModel), p("all/"+synthLog), p("all/"+synthInfo), p("all/"+trainCheckpoint), p("all/"+trainCurvePNG))
	m, err := synth.LoadOn(cpu.NewDefault(), p("tf20/"+synthModel))
	if err != nil || m.Config.Embed != 8 || m.Config.Hidden != 16 || m.Config.D != 2 || m.Config.Context != 24 || m.Config.Encoding != synth.Paper {
		t.Fatalf("tf20 model: %+v, %v", m, err)
	}
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,synth:path="+p("all")+",synth:path="+p("tf20"), "--out", p("ev"))
	res, err := eval.LoadJSONFile(p("ev/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Methods) != 3 || res.Methods[1].Name != "TF 2-0 w/ all counts" || res.Methods[2].Name != "TF 2-0" {
		t.Fatalf("methods %v %v", res.Methods[1].Name, res.Methods[2].Name)
	}
	runFail(t, "eval", "--data", p("test"), "--methods", "synth:path="+p("nothing"), "--out", p("ev2"))
}

// TestSynthInterruptResume interrupts a synth run twice (as Ctrl-C does)
// and resumes it: the parameters and the training log equal those of the
// uninterrupted run.
func TestSynthInterruptResume(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "16", "-N", "24", "--NK", "96", "--fresh=false", "--seed", "4", "--out", p("data"))
	args := []string{"synth", "--data", p("data"), "--variant", "tf20", "--embed", "6", "--hidden", "12", "--batch", "8",
		"--epochs", "3", "--warmup", "3", "--lr", "0.01", "--val-frac", "0.25", "--log-every", "2", "--checkpoint-every", "3"}
	runOK(t, append(args, "--out", p("ref"))...)

	defer func() { trainStepHook, trainContext = nil, context.Background }()
	interruptAt := func(step int) {
		ctx, cancel := context.WithCancel(context.Background())
		trainContext = func() context.Context { return ctx }
		trainStepHook = func(s int) {
			if s == step {
				cancel()
			}
		}
	}
	interruptAt(4)
	if err := runSynth(append(append([]string(nil), args[1:]...), "--out", p("run"))); err == nil || !strings.Contains(err.Error(), "interrupted at step 4") {
		t.Fatalf("interrupted run: %v", err)
	}
	interruptAt(10)
	if err := runSynth([]string{"--out", p("run"), "--resume"}); err == nil || !strings.Contains(err.Error(), "interrupted at step 10") {
		t.Fatalf("interrupted resumed run: %v", err)
	}
	trainStepHook, trainContext = nil, context.Background
	runOK(t, "synth", "--out", p("run"), "--resume")

	a, err := synth.LoadOn(cpu.NewDefault(), p("ref/"+synthModel))
	if err != nil {
		t.Fatal(err)
	}
	b, err := synth.LoadOn(cpu.NewDefault(), p("run/"+synthModel))
	if err != nil {
		t.Fatal(err)
	}
	pa, pb := a.HostParams(), b.HostParams()
	for i := range pa {
		if pa[i] != pb[i] {
			t.Fatalf("parameter %d: %v, uninterrupted %v", i, pb[i], pa[i])
		}
	}
	if a.Info.Steps != b.Info.Steps || a.Info.BestVal != b.Info.BestVal || a.Info.BestStep != b.Info.BestStep {
		t.Fatalf("info %+v, uninterrupted %+v", b.Info, a.Info)
	}
	la, lb := deterministicLog(t, p("ref")), deterministicLog(t, p("run"))
	if strings.Join(la, "\n") != strings.Join(lb, "\n") {
		t.Fatalf("train.jsonl differs:\n%s\nuninterrupted:\n%s", strings.Join(lb, "\n"), strings.Join(la, "\n"))
	}
	t.Logf("%d steps, %d log lines, best val %.4f at step %d", a.Info.Steps, len(la), a.Info.BestVal, a.Info.BestStep)
}
