package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// Issue 35: a researcher's first hour — each test reproduces a complaint.

// TestMistypedNames: a mistyped flag or command gets one or two lines
// with "did you mean …?" and where the full help is, not ~100 lines of
// usage (item 2).
func TestMistypedNames(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--layer", "2"}, "vomc train: unknown flag --layer; did you mean --layers?"},
		{[]string{"eval", "--method", "ctw"}, "vomc eval: unknown flag --method; did you mean --methods?"},
		{[]string{"eval", "--methods"}, "vomc eval: --methods needs a value"},
		{[]string{"trian"}, `vomc: unknown command "trian"; did you mean train?`},
		{[]string{"data", "--fresch"}, "vomc data: unknown flag --fresch; did you mean --fresh?"},
		{[]string{"train", "--xyzzy"}, "vomc train: unknown flag --xyzzy\n"},
	} {
		code, out := stderrOf(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 2 || !strings.Contains(out, tc.want) || len(lines) > 2 || !strings.Contains(lines[len(lines)-1], "help") {
			t.Errorf("vomc %s: exit %d, want 2 and at most two lines with %q and where the help is:\n%s", strings.Join(tc.args, " "), code, tc.want, out)
		}
	}
}

// tinyData writes a small training data set into dir/train and returns
// its path and the common flags of a small model.
func tinyData(t *testing.T, dir string) (string, []string) {
	t.Helper()
	data := filepath.Join(dir, "train")
	runOK(t, "data", "-A", "3", "-D", "1", "-K", "12", "-N", "24", "--NK", "96", "--fresh=false", "--seed", "1", "--out", data)
	return data, []string{"train", "--data", data, "--layers", "1", "--heads", "1", "-E", "8", "--batch", "16", "--seed", "3"}
}

// TestBudgets: --max-steps and --epochs together do what was asked or are
// refused up front, saying which bound wins (item 3; before, --max-steps
// 3000 --epochs 4 trained 1,252 steps and said "(all epochs)").
func TestBudgets(t *testing.T) {
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	out := filepath.Join(dir, "run")
	err := runTrain(append(common[1:], "--out", out, "--epochs", "4", "--max-steps", "3000"))
	if err == nil || !strings.Contains(err.Error(), "--max-steps 3000 is more than --epochs 4 allows") ||
		!strings.Contains(err.Error(), "the epochs bound would win") || !strings.Contains(err.Error(), "give --epochs 1000") {
		t.Errorf("--epochs 4 --max-steps 3000: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused budget left a run directory")
	}
	// --max-steps within the epochs: the steps asked for, and the summary
	// names the bound that ended the run.
	runOK(t, append(common, "--out", out, "--epochs", "4", "--max-steps", "5")...)
	c, err := transformer.LoadCheckpoint(filepath.Join(out, trainrun.CheckpointFile))
	if err != nil || c.State.Step != 5 {
		t.Fatalf("--max-steps 5: %v, step %d", err, c.State.Step)
	}
	// vomc synth too.
	err = runSynth([]string{"--data", common[2], "--out", filepath.Join(dir, "synth"), "--epochs", "2", "--max-steps", "3000"})
	if err == nil || !strings.Contains(err.Error(), "--max-steps 3000 is more than --epochs 2 allows") {
		t.Errorf("synth --epochs 2 --max-steps 3000: %v", err)
	}
	if got := trainrun.EndReason(false, c.Train, 5); got != "max steps 5 reached" {
		t.Errorf("end reason %q", got)
	}
	if got := trainrun.EndReason(false, transformer.TrainConfig{Epochs: 4}, 12); got != "all 4 epochs" {
		t.Errorf("end reason %q", got)
	}
	// --max-steps alone: the steps asked for, the default epochs raised
	// (3 steps per epoch here: 100 epochs would be 300 steps).
	out2 := filepath.Join(dir, "run2")
	runOK(t, append(common, "--out", out2, "--max-steps", "400", "--patience", "0", "--snapshots", "log:3")...)
	c, err = transformer.LoadCheckpoint(filepath.Join(out2, trainrun.CheckpointFile))
	if err != nil || c.State.Step != 400 || c.Train.Epochs != 134 {
		t.Fatalf("--max-steps 400 alone: %v, step %d, epochs %d", err, c.State.Step, c.Train.Epochs)
	}
	if _, err := os.Stat(trainrun.SnapshotPath(out2, 400)); err != nil {
		t.Errorf("the snapshots do not follow the steps asked for: %v", err)
	}
}

// TestExtendRun: a finished run continues to a larger budget with
// --resume --max-steps N, snapshots can be added when resuming, and the
// extension and its schedule are recorded in train.jsonl (item 4;
// before: "--max-steps cannot be changed when resuming").
func TestExtendRun(t *testing.T) {
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	out := filepath.Join(dir, "run")
	runOK(t, append(common, "--out", out, "--epochs", "2")...)
	if err := runTrain([]string{"--out", out, "--resume", "--max-steps", "20", "--snapshot-every", "5"}); err != nil {
		t.Fatalf("extend: %v", err)
	}
	c, err := transformer.LoadCheckpoint(filepath.Join(out, trainrun.CheckpointFile))
	if err != nil || c.State.Step != 20 || c.Train.MaxSteps != 20 {
		t.Fatalf("extended run: %v, step %d, max steps %d", err, c.State.Step, c.Train.MaxSteps)
	}
	for _, step := range []int{10, 15, 20} {
		if _, err := os.Stat(trainrun.SnapshotPath(out, step)); err != nil {
			t.Errorf("snapshot added on resuming: %v", err)
		}
	}
	log, err := os.ReadFile(filepath.Join(out, trainrun.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"extended":{"at_step":6,"max_steps":20,"epochs":7,"previous_total_steps":6,"total_steps":20,`)
	if !strings.Contains(string(log), want) || !strings.Contains(string(log), `"schedule":"warm-up/cosine of the new total length, from the current step"`) {
		t.Errorf("train.jsonl does not record the extension %s…:\n%s", want, log)
	}
	if b, err := os.ReadFile(filepath.Join(out, trainrun.TrainConfigFile)); err != nil || !strings.Contains(string(b), `"max_steps": 20`) {
		t.Errorf("train_config.json does not have the extended budget: %v\n%s", err, b)
	}
	// Resuming the extended, finished run again changes nothing, and the
	// log keeps the record in its place.
	if err := runTrain([]string{"--out", out, "--resume"}); err != nil {
		t.Fatal(err)
	}
	log2, _ := os.ReadFile(filepath.Join(out, trainrun.LogFile))
	if string(log2) != string(log) {
		t.Errorf("train.jsonl changed on resuming a finished run:\n%s\nwas\n%s", log2, log)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-steps", "10"}, "is at step 20 (epoch 7) of 20: extending it needs a larger budget (--max-steps or --epochs)"},
		{[]string{"--max-steps", "100", "--epochs", "8"}, "--max-steps 100 is more than --epochs 8 allows"},
		{[]string{"--lr", "0.1"}, "--lr cannot be changed when resuming (the run's settings are in its checkpoint; --max-steps, --epochs and --snapshots extend it)"},
	} {
		err := runTrain(append([]string{"--out", out, "--resume"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestErrorsNameTheFix: resuming a directory without a run, or a data
// set, says so and what to do (item 5; before: "open
// nosuchrun/checkpoint.safetensors: no such file or directory").
func TestErrorsNameTheFix(t *testing.T) {
	dir := t.TempDir()
	data, common := tinyData(t, dir)
	nosuch := filepath.Join(dir, "nosuchrun")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", nosuch, "--resume"}, "no run in " + nosuch + " (no checkpoint.safetensors): start one without --resume"},
		{[]string{"--out", data, "--resume"}, data + " is a data set, not a training run: give the run's directory with --out"},
		{append(common[1:], "--out", data), data + " is a data set, not a training run"},
	} {
		err := runTrain(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, new(usageError)) {
			t.Errorf("%v: %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
	// A full disk: which checkpoint is intact and the command that
	// continues.
	err := runError(&trainrun.NoSpaceError{Err: fmt.Errorf("write run/.checkpoint.tmp: %w", syscall.ENOSPC), Checkpoint: "run/checkpoint.safetensors", Step: 40}, "train", "run")
	want := "the checkpoint run/checkpoint.safetensors of step 40 is intact: free some space and continue with 'vomc train --out run --resume'"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("full disk: %v, want %q", err, want)
	}
}

// TestPlotMethods: --plot-methods takes short specs and printed labels
// (whose commas are kept), an unknown one is an error listing the
// result's methods, and --ylim sets the excess panel (item 7; before:
// `method "CTW(D=3" not in the result`, `method "ctw" not in the
// result`).
func TestPlotMethods(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "12", "-N", "128", "--seed", "4", "--out", p("test"))
	runOK(t, "eval", "--data", p("test"), "--methods", "ctw,kn,ppm,markov:k=1,markov:k=3", "--out", p("ev"))
	res := p("ev/results.json")
	for _, list := range []string{"CTW(D=2,λ=0.15,α=0.5),Markov(k=3,α=0.5)", "CTW(D=2,λ=0.15,α=0.5);Markov(k=3,α=0.5)", "ctw,markov:k=3", "ctw,kn,markov"} {
		runOK(t, "plot", "--plot-methods", list, "--ylim", "0.1", res, p("a.png"), "--force")
	}
	runOK(t, "plot", "--ylim", "log", res, p("log.png"), p("log.svg"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plot-methods", "ctw,tf"}, `method "tf" not in the result (its methods: CTW(D=2,λ=0.15,α=0.5); KN(`},
		{[]string{"--ylim", "0.2:0.1"}, `--ylim "0.2:0.1": want auto, all, log, MAX or MIN:MAX`},
	} {
		code, out := stderrOf(t, append(append([]string{"plot"}, tc.args...), res, p("b.png"))...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("vomc plot %v: exit %d, want %q:\n%s", tc.args, code, tc.want, out)
		}
	}
	if got := plot.DefaultSmooth(128); got != 5 {
		t.Errorf("default smoothing at N=128: %d, want 5 (was N/100 = 1: jagged)", got)
	}
}

// TestSlideExplicit: a model evaluated on windows longer than its context
// is refused unless --slide, and then the warning is in the output and in
// results.json (item 5; before, it slid silently, with an info line).
func TestSlideExplicit(t *testing.T) {
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, append(common, "--out", p("run"), "--epochs", "1", "-N", "12")...)
	args := []string{"eval", "--data", common[2], "--methods", "ctw,tf:path=" + p("run"), "--out", p("ev")}
	code, out := stderrOf(t, args...)
	if code != 2 || !strings.Contains(out, "the windows (N=24) are longer than the context of TF(L=1,H=[1],E=8,N=12)@run (context 12)") ||
		!strings.Contains(out, "evaluate it so with --slide") {
		t.Errorf("eval without --slide: exit %d:\n%s", code, out)
	}
	runOK(t, append(args, "--slide")...)
	b, err := os.ReadFile(p("ev/results.json"))
	if err != nil || !strings.Contains(string(b), `"warning_context":"the windows (N=24) are longer than the context of`) {
		t.Errorf("results.json has no warning: %v\n%.400s", err, b)
	}
}

// TestMethodsCheckedFirst: every command taking --methods checks the list
// before any work (item 1; before, 'vomc eval --methods ctw,kn,ppmm'
// tuned KN for 54 s, then said `unknown method "ppmm"`).
func TestMethodsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"eval", "--data", filepath.Join(dir, "none"), "--methods", "ctw,kn,ppmm", "--out", filepath.Join(dir, "ev")},
		{"dynamics", "--run", filepath.Join(dir, "none"), "--data", filepath.Join(dir, "none"), "--methods", "ctw,kn,ppmm"},
		{"quickstart", "--methods", "ctw,kn,ppmm", "--out", filepath.Join(dir, "qs")},
	} {
		code, out := stderrOf(t, args...)
		if code != 2 || !strings.Contains(out, `unknown method "ppmm"; did you mean "ppm"?`) {
			t.Errorf("vomc %s: exit %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "qs")); err == nil {
		t.Error("quickstart wrote outputs before checking its methods")
	}
}

// TestEvalReferenceSpec: --reference takes the spec the user typed as the
// method's name, and its label (issue 46: `vomc eval --methods
// bayes,ctw:D=5 --reference bayes` was refused, "reference method "bayes"
// not among the predictors"), and so does --pairs; a spec not in the list
// is a usage error before any work.
func TestEvalReferenceSpec(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "6", "-N", "32", "--seed", "4", "--out", p("test"))
	for i, ref := range []string{"bayes", "Bayes(D=2,λ=0.15,α=0.5)", "ctw:d=5"} {
		out := p(fmt.Sprint("ev", i))
		runOK(t, "eval", "--data", p("test"), "--methods", "bayes,ctw:D=5", "--reference", ref, "--out", out)
		res, err := eval.LoadJSONFile(filepath.Join(out, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "CTW(D=5,λ=0.15,α=0.5)", false: "Bayes(D=2,λ=0.15,α=0.5)"}[i == 2]; res.Ref().Name != want {
			t.Errorf("--reference %s: reference %s, want %s", ref, res.Ref().Name, want)
		}
	}
	code, out := stderrOf(t, "eval", "--data", p("test"), "--methods", "bayes,ctw:D=5", "--reference", "kn", "--out", p("no"))
	if code != 2 || !strings.Contains(out, `reference method: no method "kn" among bayes, ctw:D=5`) {
		t.Errorf("--reference kn: exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(p("no")); err == nil {
		t.Error("a refused evaluation wrote its output directory")
	}
	// --pairs: the paired difference of any two methods (issue 48 item 7)
	runOK(t, "eval", "--data", p("test"), "--methods", "bayes,ctw:D=5,unigram", "--pairs", "unigram,CTW:d=5", "--pairs", "ctw,unigram", "--out", p("pairs"))
	res, err := eval.LoadJSONFile(p("pairs/results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pairs) != 2 || res.Pair("Unigram(α=0.5)", "CTW(D=5,λ=0.15,α=0.5)") == nil || res.Pair("CTW(D=5,λ=0.15,α=0.5)", "Unigram(α=0.5)") == nil {
		t.Errorf("pairs %+v", res.Pairs)
	}
	if b, _ := os.ReadFile(p("pairs/summary.txt")); !strings.Contains(string(b), "Unigram(α=0.5) − CTW(D=5,λ=0.15,α=0.5)") {
		t.Errorf("summary.txt has no pair:\n%s", b)
	}
	code, out = stderrOf(t, "eval", "--data", p("test"), "--methods", "bayes,unigram", "--pairs", "unigram,ppm", "--out", p("no"))
	if code != 2 || !strings.Contains(out, `pair unigram,ppm: no method "ppm"`) {
		t.Errorf("--pairs unigram,ppm: exit %d:\n%s", code, out)
	}
}
