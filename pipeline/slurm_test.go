package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestWriteSlurm writes the submission of a plan without a figures stage:
// one job per kind present, in the order of Kinds; the given files; the
// task command; and the refusals (an existing submission without Force,
// bad options, a relative directory).
func TestWriteSlurm(t *testing.T) {
	t.Parallel()
	st := func(name, kind string, deps ...string) Stage { return Stage{Name: name, Kind: kind, Deps: deps} }
	plan := []Stage{st("d1", KindData), st("d2", KindData), st("t1", KindTrain, "d1"), st("e1", "", "t1", "d2"), st("r", KindReport, "e1")}
	dir := filepath.Join(t.TempDir(), "sub")
	s := Slurm{Dir: dir, Name: "demo run", JobPrefix: "demo", Command: ShellQuote("/opt/demo bin") + " run",
		SbatchOpts: []string{"train:gres=gpu:1", "exclusive"}, Files: map[string][]byte{"config.json": []byte("{}\n")}}
	sub, err := WriteSlurm(plan, s)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, j := range sub.Jobs {
		kinds = append(kinds, j.Kind)
		b, err := os.ReadFile(j.Script)
		if err != nil {
			t.Fatal(err)
		}
		script := string(b)
		has := func(line string) bool { return strings.Contains(script, "\n"+line+"\n") }
		if !has("#SBATCH --job-name=demo-"+j.Kind) || !has("# demo run: the "+j.Kind+" stage(s) of the study, one per array task.") ||
			!has(`exec '/opt/demo bin' run --stage "$STAGE"`) || !has("#SBATCH --exclusive") {
			t.Errorf("%s script:\n%s", j.Kind, script)
		}
		if has("#SBATCH --requeue") != (j.Kind == KindTrain) || has("#SBATCH --gres=gpu:1") != (j.Kind == KindTrain) {
			t.Errorf("%s: requeue or per-kind option:\n%s", j.Kind, script)
		}
		if (len(j.Stages) > 1) != strings.Contains(script, "#SBATCH --array=0-") {
			t.Errorf("%s: %d stages, array line:\n%s", j.Kind, len(j.Stages), script)
		}
	}
	if want := []string{KindData, KindTrain, KindEval, KindReport}; !slices.Equal(kinds, want) {
		t.Errorf("jobs %v, want %v", kinds, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err != nil || string(b) != "{}\n" {
		t.Errorf("config.json: %q %v", b, err)
	}
	if b, err := os.ReadFile(sub.Submit); err != nil || !strings.Contains(string(b), "# Submits the demo run sweep") || strings.Count(string(b), "afterok") != 4 {
		t.Errorf("submit.sh: %v\n%s", err, b)
	}
	if _, err := WriteSlurm(plan, s); !errors.Is(err, ErrSubmitted) {
		t.Errorf("second submission: %v", err)
	}
	s.Force = true
	if _, err := WriteSlurm(plan, s); err != nil {
		t.Errorf("with Force: %v", err)
	}
	for _, bad := range []string{"output=x", "bogus:time=1", "=3"} {
		s.SbatchOpts = []string{bad}
		if _, err := WriteSlurm(plan, s); err == nil {
			t.Errorf("sbatch option %q accepted", bad)
		}
	}
	s.SbatchOpts, s.Dir = nil, "relative"
	if _, err := WriteSlurm(plan, s); err == nil {
		t.Error("relative submission directory accepted")
	}
}
