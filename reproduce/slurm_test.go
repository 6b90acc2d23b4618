package reproduce

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// TestGraphAndSlurmScripts checks the stage graph of the tiny preset and
// the submission written for it: one job per kind in order, array task i
// running line i+1 of the stage list, requeue on training only, options
// per job kind, and the afterok chain of submit.sh.
func TestGraphAndSlurmScripts(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Graph(cfg, Options{Engine: testEngine, Version: "test", CodeKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string][]string{}
	pos := map[string]int{}
	for i, s := range g {
		byKind[s.Kind] = append(byKind[s.Kind], s.Name)
		pos[s.Name] = i
		for _, d := range s.Deps {
			if j, ok := pos[d]; !ok || j >= i {
				t.Errorf("stage %s depends on %s, which does not come before it", s.Name, d)
			}
			if slices.Index(pipeline.Kinds, g[pos[d]].Kind) > slices.Index(pipeline.Kinds, s.Kind) {
				t.Errorf("stage %s (%s) depends on %s of a later job kind (%s)", s.Name, s.Kind, d, g[pos[d]].Kind)
			}
		}
		want := pipeline.StateWaiting
		if len(s.Deps) == 0 {
			want = pipeline.StateReady
		}
		if s.State != want {
			t.Errorf("stage %s: state %s without output directory, want %s", s.Name, s.State, want)
		}
	}
	if !slices.Equal(byKind[pipeline.KindData], []string{results.StageTrainData, results.StageTestData}) ||
		len(byKind[pipeline.KindTrain]) != len(cfg.Models())+len(cfg.SynthVariants) ||
		!slices.Equal(byKind[pipeline.KindFigures], []string{results.StageFigures}) || !slices.Equal(byKind[pipeline.KindReport], []string{results.StageReport}) {
		t.Errorf("stages by kind: %v", byKind)
	}
	for _, s := range byKind[pipeline.KindTrain] {
		if !strings.HasPrefix(s, "train-tf-") && !strings.HasPrefix(s, "synth-") {
			t.Errorf("train job holds %s", s)
		}
	}

	dir := t.TempDir()
	vomc := filepath.Join(dir, "bin", "vomc")
	os.MkdirAll(filepath.Dir(vomc), 0o755)
	if err := os.WriteFile(vomc, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	so := SlurmOptions{Dir: filepath.Join(dir, "sub"), Vomc: vomc,
		SbatchOpts: []string{"partition=gpu q", "train:gres=gpu:1", "eval:time=10", "exclusive"}}
	opts := Options{Engine: testEngine, Out: filepath.Join(dir, "out"), Version: "test", CodeKey: "test", Lock: pipeline.LockConfig{Stale: 90 * time.Second}}
	sub, err := WriteSlurm(cfg, opts, so)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, j := range sub.Jobs {
		kinds = append(kinds, j.Kind)
		list, err := os.ReadFile(j.StageList)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Split(strings.TrimSpace(string(list)), "\n"); !slices.Equal(got, byKind[j.Kind]) {
			t.Errorf("%s stage list %v, want %v", j.Kind, got, byKind[j.Kind])
		}
		b, err := os.ReadFile(j.Script)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		has := func(line string) bool { return strings.Contains(s, "\n"+line+"\n") }
		if n := len(j.Stages); n > 1 != has("#SBATCH --array=0-"+itoa(n-1)) {
			t.Errorf("%s: array line for %d stages:\n%s", j.Kind, n, s)
		}
		if has("#SBATCH --requeue") != (j.Kind == pipeline.KindTrain) || has("#SBATCH --no-requeue") == (j.Kind == pipeline.KindTrain) {
			t.Errorf("%s: requeue lines:\n%s", j.Kind, s)
		}
		if has("#SBATCH --gres=gpu:1") != (j.Kind == pipeline.KindTrain) || has("#SBATCH --time=10") != (j.Kind == pipeline.KindEval) {
			t.Errorf("%s: per-kind options:\n%s", j.Kind, s)
		}
		if !has("#SBATCH --partition=gpu q") || !has("#SBATCH --exclusive") {
			t.Errorf("%s: common options missing:\n%s", j.Kind, s)
		}
		abs, _ := filepath.Abs(opts.Out)
		if !strings.Contains(s, "exec '"+vomc+"' 'reproduce' '--preset' 'tiny' '--config' '"+sub.Config+"' '--out' '"+abs+"' '--lock-stale' '1m30s' --stage \"$STAGE\"") {
			t.Errorf("%s: no task command:\n%s", j.Kind, s)
		}
		// Array task i runs line i+1: run the script's stage lookup in bash.
		if len(j.Stages) > 1 {
			for i, want := range j.Stages {
				cmd := exec.Command("bash", "-c", "set -euo pipefail; "+lineWith(s, "STAGE=")+"; echo \"$STAGE\"")
				cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID="+itoa(i))
				out, err := cmd.Output()
				if err != nil || strings.TrimSpace(string(out)) != want {
					t.Errorf("%s: array task %d runs %q (%v), want %s", j.Kind, i, out, err, want)
				}
			}
		}
	}
	if !slices.Equal(kinds, pipeline.Kinds) {
		t.Errorf("jobs %v, want %v", kinds, pipeline.Kinds)
	}
	var c study.Config
	if err := c.LoadFile(sub.Config); err != nil || c.JSON() != cfg.JSON() {
		t.Errorf("copied configuration differs: %v", err)
	}
	b, err := os.ReadFile(sub.Submit)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	last := -1
	for _, k := range pipeline.Kinds {
		i := strings.Index(s, "'"+k+".sbatch'")
		if i < last {
			t.Errorf("submit.sh submits %s out of order", k)
		}
		last = i
	}
	if strings.Count(s, "dep=(--dependency=afterok:$id)") != len(pipeline.Kinds) || !strings.Contains(s, `sbatch --parsable --kill-on-invalid-dep=yes "${dep[@]}"`) {
		t.Errorf("submit.sh does not chain with afterok:\n%s", s)
	}
	if _, err := WriteSlurm(cfg, opts, so); !errors.Is(err, pipeline.ErrSubmitted) || strings.Contains(err.Error(), "--") {
		t.Errorf("second submission into the same directory: %v", err)
	}
	so.Force = true
	if _, err := WriteSlurm(cfg, opts, so); err != nil {
		t.Errorf("with Force: %v", err)
	}
	for _, bad := range []string{"array=0-3", "bogus:time=1", "=3", "dependency=afterok:1"} {
		so.SbatchOpts = []string{bad}
		if _, err := WriteSlurm(cfg, opts, so); err == nil {
			t.Errorf("--slurm-opt %q accepted", bad)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// lineWith is the first line of s starting with prefix.
func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
