package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vomc/vomc/events"
)

// diamond is a plan of seven stages: a; b, c, d after a; e after b and c;
// f after d; g after everything. Each writes its name and its inputs'
// contents, so every output depends on the whole history.
func diamond(out map[string]string) []Stage {
	mk := func(name string, deps ...string) Stage {
		return Stage{Name: name, Inputs: name, Deps: deps,
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				b := []byte(name + out[name])
				for _, d := range deps {
					in, err := os.ReadFile(filepath.Join(sc.Deps[d].Dir, "out"))
					if err != nil {
						return nil, err
					}
					b = append(b, in...)
				}
				return []string{"out"}, os.WriteFile(filepath.Join(sc.Dir, "out"), b, 0o644)
			}}
	}
	return []Stage{mk("a"), mk("b", "a"), mk("c", "a"), mk("d", "a"), mk("e", "b", "c"), mk("f", "d"),
		mk("g", "a", "b", "c", "d", "e", "f")}
}

// execLog records what a test Exec saw.
type execLog struct {
	mu                 sync.Mutex
	running, threads   int
	maxRun, maxThreads int
	started, ended     map[string]int // order of the start and end events
	seq                int
	jobs               []Job
}

// child returns an Exec that computes the stage as another process would:
// a fresh Runner on the same root running RunOnly, after pause.
func (l *execLog) child(root, code string, stages []Stage, pause time.Duration, fail string) func(context.Context, Job) error {
	l.started, l.ended = map[string]int{}, map[string]int{}
	return func(ctx context.Context, job Job) error {
		l.mu.Lock()
		l.running++
		l.threads += job.Threads
		l.maxRun, l.maxThreads = max(l.maxRun, l.running), max(l.maxThreads, l.threads)
		l.seq++
		l.started[job.Stage.Name] = l.seq
		l.jobs = append(l.jobs, job)
		l.mu.Unlock()
		defer func() {
			l.mu.Lock()
			l.running--
			l.threads -= job.Threads
			l.seq++
			l.ended[job.Stage.Name] = l.seq
			l.mu.Unlock()
		}()
		time.Sleep(pause)
		switch job.Stage.Name {
		case fail:
			return fmt.Errorf("stage %s: boom", fail)
		case "lazy":
			return nil
		}
		c := &Runner{Root: root, Code: code, Events: job.Events}
		if job.Rerun {
			c.Rerun = map[string]bool{job.Stage.Name: true}
		}
		return c.RunOnly(ctx, stages, job.Stage.Name)
	}
}

func outputs(t *testing.T, root string, stages []Stage) map[string]string {
	t.Helper()
	m := map[string]string{}
	r := &Runner{Root: root, Code: "c"}
	for _, s := range stages {
		_, dir, err := r.stageDir(s)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		m[s.Name] = string(b)
	}
	return m
}

// TestRunParallel: the stages computed in parallel give the same outputs
// as a sequential run; no stage starts before its inputs end; no more
// than Jobs stages and Threads cores are in use at once; a stage alone
// gets every core; a second run skips everything; a rerun passes Rerun.
func TestRunParallel(t *testing.T) {
	out := map[string]string{}
	st := diamond(out)
	seq := &Runner{Root: t.TempDir(), Code: "c"}
	if err := seq.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	want := outputs(t, seq.Root, st)
	for _, tc := range []struct{ jobs, threads int }{{2, 2}, {2, 3}, {3, 16}, {8, 2}} {
		t.Run(fmt.Sprintf("jobs%d-threads%d", tc.jobs, tc.threads), func(t *testing.T) {
			root := t.TempDir()
			var lg execLog
			var log bytes.Buffer
			r := &Runner{Root: root, Code: "c", Events: events.Writer(&log)}
			p := Parallel{Jobs: tc.jobs, Threads: tc.threads, Exec: lg.child(root, "c", st, 20*time.Millisecond, "")}
			if err := r.RunParallel(context.Background(), st, p); err != nil {
				t.Fatal(err)
			}
			if got := outputs(t, root, st); !mapsEqual(got, want) {
				t.Errorf("outputs %v, sequential %v", got, want)
			}
			if len(r.Ran) != len(st) || len(r.Done) != len(st) {
				t.Errorf("ran %v, done %d", r.Ran, len(r.Done))
			}
			for _, s := range st {
				for _, d := range s.Deps {
					if lg.started[s.Name] < lg.ended[d] {
						t.Errorf("%s started (event %d) before its input %s ended (event %d)", s.Name, lg.started[s.Name], d, lg.ended[d])
					}
				}
			}
			limit := min(tc.jobs, tc.threads)
			if lg.maxRun > limit || lg.maxRun < 2 || lg.maxThreads > tc.threads {
				t.Errorf("at most %d stages and %d threads at once; want 2..%d stages, ≤ %d threads", lg.maxRun, lg.maxThreads, limit, tc.threads)
			}
			if j := lg.jobs[0]; j.Stage.Name != "a" || j.Threads != tc.threads || j.Label != "[1/7] a" || j.Rerun {
				t.Errorf("first job %+v: want a alone on all %d threads", j, tc.threads)
			}
			if !strings.Contains(log.String(), "[1/7] a: started (") {
				t.Errorf("log:\n%s", log.String())
			}
			// Everything cached: nothing executed.
			again := &Runner{Root: root, Code: "c"}
			p.Exec = func(context.Context, Job) error { t.Error("a cached stage was executed"); return nil }
			if err := again.RunParallel(context.Background(), st, p); err != nil || len(again.Skipped) != len(st) {
				t.Errorf("second run: %v, skipped %v", err, again.Skipped)
			}
		})
	}

	// A rerun of b that changes its output recomputes b (with Rerun set)
	// and the stages downstream of it, and nothing else.
	root := t.TempDir()
	var lg execLog
	r := &Runner{Root: root, Code: "c"}
	if err := r.RunParallel(context.Background(), st, Parallel{Jobs: 2, Threads: 2, Exec: lg.child(root, "c", st, 0, "")}); err != nil {
		t.Fatal(err)
	}
	out["b"] = "changed"
	r = &Runner{Root: root, Code: "c"}
	if err := r.SetRerun([]string{"b"}, st); err != nil {
		t.Fatal(err)
	}
	lg = execLog{}
	if err := r.RunParallel(context.Background(), st, Parallel{Jobs: 2, Threads: 2, Exec: lg.child(root, "c", st, 0, "")}); err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, j := range lg.jobs {
		ran = append(ran, j.Stage.Name)
		if j.Rerun != (j.Stage.Name == "b") {
			t.Errorf("job %s: Rerun %v", j.Stage.Name, j.Rerun)
		}
	}
	if slices.Sort(ran); !slices.Equal(ran, []string{"b", "e", "g"}) {
		t.Errorf("rerun b computed %v, want b, e, g", ran)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRunParallelFailure: after a stage fails nothing new starts, the
// stages running are waited for, and the first failure is returned; an
// Exec that returns without computing its stage is an error; bad settings
// are refused.
func TestRunParallelFailure(t *testing.T) {
	st := diamond(map[string]string{})
	root := t.TempDir()
	var lg execLog
	var log bytes.Buffer
	r := &Runner{Root: root, Code: "c", Events: events.Writer(&log)}
	err := r.RunParallel(context.Background(), st, Parallel{Jobs: 3, Threads: 3, Exec: lg.child(root, "c", st, 30*time.Millisecond, "c")})
	if err == nil || !strings.Contains(err.Error(), "stage c: boom") {
		t.Fatalf("err %v", err)
	}
	for _, name := range []string{"e", "g"} {
		if _, ok := lg.started[name]; ok {
			t.Errorf("%s started after its input c failed", name)
		}
	}
	if _, ok := r.Done["b"]; !ok {
		t.Errorf("b, running beside c, was not waited for: done %v", r.Done)
	}
	if !strings.Contains(log.String(), "[3/7] c: failed; waiting for the 2 stages still running") {
		t.Errorf("log:\n%s", log.String())
	}

	lazy := []Stage{{Name: "lazy", Inputs: 1, Run: func(context.Context, *StageContext) ([]string, error) { return nil, nil }}, st[0]}
	r = &Runner{Root: t.TempDir(), Code: "c"}
	lg = execLog{}
	err = r.RunParallel(context.Background(), lazy, Parallel{Jobs: 2, Threads: 2, Exec: lg.child(r.Root, "c", lazy, 0, "")})
	if err == nil || !strings.Contains(err.Error(), "stage lazy: computed, but") {
		t.Errorf("an Exec that did not compute its stage: %v", err)
	}
	if err := (&Runner{Root: t.TempDir()}).RunParallel(context.Background(), st, Parallel{Jobs: 2}); err == nil {
		t.Error("no threads and no Exec accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (&Runner{Root: t.TempDir()}).RunParallel(ctx, st, Parallel{Jobs: 2, Threads: 2, Exec: lg.child(root, "c", st, 0, "")}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestLineWriter: whole lines, prefixed unless they carry their own
// label; a terminal's redraws reduced to the last; Flush; Last.
func TestLineWriter(t *testing.T) {
	var b bytes.Buffer
	l := &LineWriter{Line: func(s string) { b.WriteString(s + "\n") }, Prefix: "train-x: ", Keep: "["}
	for _, s := range []string{"[3/9] train-x: running\nstep 1", "0\rstep 20\r", "\n\nbar 50%\r\n", "[3/9] train-x: finished\ntail"} {
		if _, err := l.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	l.Flush()
	want := "[3/9] train-x: running\ntrain-x: step 20\ntrain-x: bar 50%\n[3/9] train-x: finished\ntrain-x: tail\n"
	if b.String() != want || l.Last() != "tail" {
		t.Errorf("got %q (last %q), want %q", b.String(), l.Last(), want)
	}
}

// TestRunParallelAwaitedTraining: a training stage (KindTrain) that starts
// alone beside a short stage while every stage not yet started depends on
// it gets every core not held by trainings, not the share left free at
// its start (which it would keep after the short stage ended); beside
// another training, with a stage left that does not wait for it, or
// starting with others, the usual shares.
func TestRunParallelAwaitedTraining(t *testing.T) {
	type spec struct{ name, kind, deps string }
	for _, tc := range []struct {
		name          string
		stages        []spec
		gate          map[string]string // a stage runs until its gate has started
		jobs, threads int
		want          map[string]int
	}{
		{"alone, then its evaluation", []spec{{"s", KindEval, ""}, {"d", KindData, ""}, {"t1", KindTrain, "d"}, {"e", KindEval, "t1"}},
			map[string]string{"s": "t1"}, 2, 2, map[string]int{"s": 1, "d": 1, "t1": 2, "e": -1}},
		{"alone, 4 cores", []spec{{"s", KindEval, ""}, {"d", KindData, ""}, {"t1", KindTrain, "d"}},
			map[string]string{"s": "t1"}, 2, 4, map[string]int{"s": 2, "d": 2, "t1": 4}},
		// t1 beside s with t2 waiting; t2 beside t1 (gated), alone: the
		// cores t1 does not hold
		{"two trainings", []spec{{"s", KindEval, ""}, {"d", KindData, ""}, {"t1", KindTrain, "d"}, {"t2", KindTrain, "d"}},
			map[string]string{"s": "t1", "t1": "t2"}, 2, 2, map[string]int{"s": 1, "d": 1, "t1": 1, "t2": 1}},
		// e waits for s, not for t1: t1 keeps its share, e starts beside it
		{"a stage left that does not wait for it", []spec{{"s", KindEval, ""}, {"d", KindData, ""}, {"t1", KindTrain, "d"}, {"e", KindEval, "s"}},
			map[string]string{"s": "t1", "t1": "e"}, 2, 2, map[string]int{"s": 1, "d": 1, "t1": 1, "e": 1}},
		// started together with evaluations: even shares
		{"with others", []spec{{"d", KindData, ""}, {"t1", KindTrain, "d"}, {"e1", KindEval, "d"}, {"e2", KindEval, "d"}},
			nil, 4, 16, map[string]int{"d": 16, "t1": 6, "e1": 5, "e2": 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st []Stage
			for _, sp := range tc.stages {
				var deps []string
				if sp.deps != "" {
					deps = []string{sp.deps}
				}
				name := sp.name
				st = append(st, Stage{Name: name, Kind: sp.kind, Inputs: name, Deps: deps, Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
					return []string{"out"}, os.WriteFile(filepath.Join(sc.Dir, "out"), []byte(name), 0o644)
				}})
			}
			root := t.TempDir()
			var lg execLog
			inner := lg.child(root, "c", st, 0, "")
			started := map[string]chan struct{}{}
			for _, st := range st {
				started[st.Name] = make(chan struct{})
			}
			exec := func(ctx context.Context, job Job) error {
				close(started[job.Stage.Name])
				if g, ok := tc.gate[job.Stage.Name]; ok {
					select {
					case <-started[g]:
					case <-time.After(10 * time.Second):
						return fmt.Errorf("%s never started beside %s", g, job.Stage.Name)
					}
				}
				return inner(ctx, job)
			}
			r := &Runner{Root: root, Code: "c"}
			if err := r.RunParallel(context.Background(), st, Parallel{Jobs: tc.jobs, Threads: tc.threads, Exec: exec}); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, j := range lg.jobs {
				got[j.Stage.Name] = j.Threads
				if tc.want[j.Stage.Name] < 0 { // whether s has ended by then is a race
					got[j.Stage.Name] = -1
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("threads %v, want %v", got, tc.want)
			}
		})
	}
}
