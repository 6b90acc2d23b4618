package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGraphAndSlurmScripts checks the stage graph of the tiny preset and
// the submission written for it: one job per kind in order, array task i
// running line i+1 of the stage list, requeue on training only, options
// per job kind, and the afterok chain of submit.sh.
func TestGraphAndSlurmScripts(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Graph(cfg, Options{Version: "test", CodeKey: "test"})
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
			if slices.Index(Kinds, g[pos[d]].Kind) > slices.Index(Kinds, s.Kind) {
				t.Errorf("stage %s (%s) depends on %s of a later job kind (%s)", s.Name, s.Kind, d, g[pos[d]].Kind)
			}
		}
		want := StateWaiting
		if len(s.Deps) == 0 {
			want = StateReady
		}
		if s.State != want {
			t.Errorf("stage %s: state %s without output directory, want %s", s.Name, s.State, want)
		}
	}
	if !slices.Equal(byKind[KindData], []string{StageTrainData, StageTestData}) ||
		len(byKind[KindTrain]) != len(cfg.Models())+len(cfg.SynthVariants) ||
		!slices.Equal(byKind[KindFigures], []string{StageFigures}) || !slices.Equal(byKind[KindReport], []string{StageReport}) {
		t.Errorf("stages by kind: %v", byKind)
	}
	for _, s := range byKind[KindTrain] {
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
	opts := Options{Out: filepath.Join(dir, "out"), Version: "test", CodeKey: "test", Lock: LockConfig{Stale: 90 * time.Second}}
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
		if has("#SBATCH --requeue") != (j.Kind == KindTrain) || has("#SBATCH --no-requeue") == (j.Kind == KindTrain) {
			t.Errorf("%s: requeue lines:\n%s", j.Kind, s)
		}
		if has("#SBATCH --gres=gpu:1") != (j.Kind == KindTrain) || has("#SBATCH --time=10") != (j.Kind == KindEval) {
			t.Errorf("%s: per-kind options:\n%s", j.Kind, s)
		}
		if !has("#SBATCH --partition=gpu q") || !has("#SBATCH --exclusive") {
			t.Errorf("%s: common options missing:\n%s", j.Kind, s)
		}
		abs, _ := filepath.Abs(opts.Out)
		if !strings.Contains(s, "exec '"+vomc+"' reproduce --preset 'tiny' --config '"+sub.Config+"' --out '"+abs+"' --lock-stale 1m30s --stage \"$STAGE\"") {
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
	if !slices.Equal(kinds, Kinds) {
		t.Errorf("jobs %v, want %v", kinds, Kinds)
	}
	var c Config
	if err := c.LoadFile(sub.Config); err != nil || c.JSON() != cfg.JSON() {
		t.Errorf("copied configuration differs: %v", err)
	}
	b, err := os.ReadFile(sub.Submit)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	last := -1
	for _, k := range Kinds {
		i := strings.Index(s, "'"+k+".sbatch'")
		if i < last {
			t.Errorf("submit.sh submits %s out of order", k)
		}
		last = i
	}
	if strings.Count(s, "dep=(--dependency=afterok:$id)") != len(Kinds) || !strings.Contains(s, `sbatch --parsable --kill-on-invalid-dep=yes "${dep[@]}"`) {
		t.Errorf("submit.sh does not chain with afterok:\n%s", s)
	}
	if _, err := WriteSlurm(cfg, opts, so); err == nil || !strings.Contains(err.Error(), "--force") {
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

// TestLockExclusive has goroutines contend for one lock: at most one holds
// it at any time and every one gets it in the end.
func TestLockExclusive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.lock")
	var inside, maxInside, total atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := AcquireLock(context.Background(), path, LockConfig{Poll: time.Millisecond}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := maxInside.Load()
				if n <= m || maxInside.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			total.Add(1)
			inside.Add(-1)
			if err := c.Release(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if maxInside.Load() != 1 || total.Load() != 8 {
		t.Errorf("max holders at once %d, acquisitions %d (want 1, 8)", maxInside.Load(), total.Load())
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock left behind: %v", err)
	}
}

// TestLockStale checks which held locks are taken over: a dead process on
// this host, an earlier run of the same Slurm job, a lock without heartbeat
// for longer than Stale; and that a live holder is waited for.
func TestLockStale(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(name string, o LockOwner, age time.Duration) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(o)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		return p
	}
	t.Setenv("SLURM_JOB_ID", "77")
	t.Setenv("SLURM_ARRAY_JOB_ID", "")
	t.Setenv("SLURM_RESTART_COUNT", "2")
	cfg := LockConfig{Stale: time.Hour, Poll: time.Millisecond}
	for _, tc := range []struct {
		name  string
		owner LockOwner
		age   time.Duration
		take  bool
	}{
		{"dead-pid", LockOwner{Token: "a", Host: host, PID: dead.Process.Pid}, 0, true},
		{"requeued", LockOwner{Token: "b", Host: "elsewhere", PID: 1, Job: "77", Restart: 1}, 0, true},
		{"no-heartbeat", LockOwner{Token: "c", Host: "elsewhere", PID: 1}, 2 * time.Hour, true},
		{"garbage-old", LockOwner{}, 2 * time.Hour, true},
		{"live-elsewhere", LockOwner{Token: "d", Host: "elsewhere", PID: 1}, time.Minute, false},
		{"live-here", LockOwner{Token: "e", Host: host, PID: os.Getpid()}, 0, false},
		{"same-job-same-restart", LockOwner{Token: "f", Host: "elsewhere", PID: 1, Job: "77", Restart: 2}, 0, false},
	} {
		p := write(tc.name+".lock", tc.owner, tc.age)
		ctx, cancel := context.WithCancel(context.Background())
		var waitedFor *LockOwner
		c, err := AcquireLock(ctx, p, cfg, func(o LockOwner) { waitedFor = &o; cancel() })
		cancel()
		if tc.take {
			if err != nil {
				t.Errorf("%s: not taken over: %v", tc.name, err)
				continue
			}
			o, _, _ := readLock(p)
			if o.Token == tc.owner.Token || o.PID != os.Getpid() || o.Job != "77" || o.Restart != 2 {
				t.Errorf("%s: lock now held by %+v", tc.name, o)
			}
			c.Release()
		} else {
			if !errors.Is(err, context.Canceled) || waitedFor == nil || waitedFor.Token != tc.owner.Token {
				t.Errorf("%s: want a wait for the holder, got %v (waited for %v)", tc.name, err, waitedFor)
			}
			if o, _, _ := readLock(p); o.Token != tc.owner.Token {
				t.Errorf("%s: live lock replaced by %+v", tc.name, o)
			}
		}
	}
}

// TestLockLost checks that a holder notices its lock taken by someone else.
func TestLockLost(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.lock")
	c, err := AcquireLock(context.Background(), p, LockConfig{Heartbeat: time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"token":"other","host":"x","pid":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Lost():
	case <-time.After(time.Minute):
		t.Fatal("the holder did not notice that its lock was replaced")
	}
	c.Release()
	if o, _, _ := readLock(p); o.Token != "other" {
		t.Errorf("Release removed someone else's lock")
	}
}

// TestRunnersShareStages runs the same stages in two runners on one
// directory at once: each stage is computed once, both see the same
// result, and a failing non-resumable stage leaves no stage directory.
func TestRunnersShareStages(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var runs atomic.Int32
	release := make(chan struct{})
	mk := func(fail bool) []Stage {
		return []Stage{{
			Name: "a", Inputs: 1,
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				runs.Add(1)
				<-release
				if err := os.WriteFile(filepath.Join(sc.Dir, "x"), []byte("half"), 0o644); err != nil {
					return nil, err
				}
				if fail {
					return nil, errors.New("killed")
				}
				return []string{"x"}, os.WriteFile(filepath.Join(sc.Dir, "x"), []byte("whole"), 0o644)
			},
		}, {
			Name: "b", Inputs: 2, Deps: []string{"a"},
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				runs.Add(1)
				return []string{"y"}, os.WriteFile(filepath.Join(sc.Dir, "y"), []byte("y"), 0o644)
			},
		}}
	}
	// A failure mid-stage leaves only the scratch directory.
	close(release)
	r0 := &Runner{Root: root, Code: "t"}
	if err := r0.Run(context.Background(), mk(true)); err == nil {
		t.Fatal("failing stage succeeded")
	}
	if m, _ := filepath.Glob(filepath.Join(root, "a-*")); len(m) != 1 || !strings.HasSuffix(m[0], ".partial") {
		t.Errorf("after a failure: %v, want only a-HASH.partial", m)
	}
	runs.Store(0)
	release = make(chan struct{})
	var wg sync.WaitGroup
	rs := []*Runner{{Root: root, Code: "t", Lock: LockConfig{Poll: time.Millisecond}}, {Root: root, Code: "t", Lock: LockConfig{Poll: time.Millisecond}}}
	for _, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Run(context.Background(), mk(false)); err != nil {
				t.Error(err)
			}
		}()
	}
	time.Sleep(10 * time.Millisecond) // let both reach the lock (not needed for correctness)
	close(release)
	wg.Wait()
	if runs.Load() != 2 {
		t.Errorf("%d stage computations for 2 stages in 2 runners", runs.Load())
	}
	if rs[0].Done["b"].OutputHash != rs[1].Done["b"].OutputHash || len(rs[0].Ran)+len(rs[1].Ran) != 2 {
		t.Errorf("runners disagree: ran %v and %v", rs[0].Ran, rs[1].Ran)
	}
	m, _ := filepath.Glob(filepath.Join(root, "*"))
	for _, p := range m {
		if strings.HasSuffix(p, ".partial") || strings.HasSuffix(p, ".lock") {
			t.Errorf("left behind: %s", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(rs[0].Done["a"].Dir, "x")); err != nil || string(b) != "whole" {
		t.Errorf("stage a output %q, %v", b, err)
	}
}

// TestRunStage runs a small study stage by stage: a stage whose inputs are
// missing is refused with the missing input named; --stage runs exactly
// the one stage; a full run afterwards skips the stages done; the report
// stage publishes the report.
func TestRunStage(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants, cfg.HeatmapModel = []string{"2"}, nil, nil, ""
	cfg.MaxSteps = 20
	out := t.TempDir()
	opts := Options{Out: out, Version: "test", CodeKey: "test", Log: testLog(t)}
	ctx := context.Background()
	_, err = RunStage(ctx, cfg, opts, "eval-tf-h2")
	var mi *MissingInputError
	if !errors.As(err, &mi) || mi.Input != StageTrainData || !strings.Contains(err.Error(), "needs stage data-train") {
		t.Fatalf("eval without inputs: %v", err)
	}
	if _, err := RunStage(ctx, cfg, opts, "nope"); err == nil || !strings.Contains(err.Error(), "no stage") {
		t.Errorf("unknown stage: %v", err)
	}
	states := func() map[string]string {
		g, err := Graph(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, s := range g {
			m[s.Name] = s.State
		}
		return m
	}
	res, err := RunStage(ctx, cfg, opts, StageTrainData)
	if err != nil || !slices.Equal(res.Ran, []string{StageTrainData}) {
		t.Fatalf("data-train: %v %+v", err, res)
	}
	st := states()
	if st[StageTrainData] != StateDone || st[StageTestData] != StateReady || st["train-tf-h2"] != StateReady || st[StageBaselines] != StateWaiting {
		t.Errorf("states after data-train: %v", st)
	}
	if _, err := RunStage(ctx, cfg, opts, "eval-tf-h2"); !errors.As(err, &mi) || mi.Input != StageTestData {
		t.Errorf("eval with data-train only: %v", err)
	}
	for _, s := range []string{StageTestData, "train-tf-h2"} {
		if res, err := RunStage(ctx, cfg, opts, s); err != nil || !slices.Equal(res.Ran, []string{s}) {
			t.Fatalf("%s: %v %+v", s, err, res)
		}
	}
	if res, err := RunStage(ctx, cfg, opts, "train-tf-h2"); err != nil || len(res.Ran) != 0 || !slices.Equal(res.Skipped, []string{"train-tf-h2"}) {
		t.Errorf("second train-tf-h2: %v %+v", err, res)
	}
	if st := states(); st[StageBaselines] != StateReady || st["eval-tf-h2"] != StateReady || st[StageFigures] != StateWaiting {
		t.Errorf("states: %v", st)
	}
	full, err := Run(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{StageTrainData, StageTestData, "train-tf-h2"} {
		if !slices.Contains(full.Skipped, s) {
			t.Errorf("full run after the stages did not skip %s (ran %v)", s, full.Ran)
		}
	}
	os.Remove(filepath.Join(out, ReportFile))
	res, err = RunStage(ctx, cfg, opts, StageReport)
	if err != nil || res.Report == "" {
		t.Fatalf("report stage: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, ReportFile)); err != nil {
		t.Errorf("report stage did not publish: %v", err)
	}
	for name, s := range states() {
		if s != StateDone {
			t.Errorf("after the full run %s is %s", name, s)
		}
	}
}
