package pipeline

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chain is a test pipeline: a → b → c, and d on its own; out["b"] is what b
// writes (so a test can make a rerun change b's output), and runs counts
// the computations of each stage.
type chain struct {
	out  map[string]string
	runs map[string]int
}

func (c *chain) stages() []Stage {
	mk := func(name string, deps ...string) Stage {
		return Stage{Name: name, Inputs: name + "-config", Deps: deps,
			Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
				c.runs[name]++
				for _, d := range deps {
					if _, err := os.Stat(filepath.Join(sc.Deps[d].Dir, "out")); err != nil {
						return nil, err
					}
				}
				return []string{"out"}, os.WriteFile(filepath.Join(sc.Dir, "out"), []byte(name+c.out[name]), 0o644)
			}}
	}
	return []Stage{mk("a"), mk("b", "a"), mk("c", "b"), mk("d")}
}

// run runs the chain under root with the code key code, rerunning rerun,
// and returns the stages computed.
func (c *chain) run(t *testing.T, root, code string, rerun ...string) []string {
	t.Helper()
	st := c.stages()
	if err := os.MkdirAll(filepath.Join(root, "stages"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &Runner{Root: filepath.Join(root, "stages"), Code: "version test\n" + code}
	if err := r.SetRerun(rerun, st); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if len(r.Ran)+len(r.Skipped) != len(st) {
		t.Errorf("ran %v and skipped %v of %d stages", r.Ran, r.Skipped, len(st))
	}
	return r.Ran
}

// TestCodeKeyAndRerun: the same code key reuses every stage, another code
// key computes every stage again (in new directories), --rerun recomputes
// exactly the named stages plus the dependents whose inputs changed, and an
// unknown name is refused.
func TestCodeKeyAndRerun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := &chain{out: map[string]string{}, runs: map[string]int{}}
	all := []string{"a", "b", "c", "d"}
	check := func(what string, got, want []string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: ran %v, want %v", what, got, want)
		}
	}
	check("first run", c.run(t, root, "code 1"), all)
	check("same code", c.run(t, root, "code 1"), nil)
	dirs, _ := filepath.Glob(filepath.Join(root, "stages", "*"))
	check("changed code", c.run(t, root, "code 2"), all)
	if d2, _ := filepath.Glob(filepath.Join(root, "stages", "*")); len(d2) != 2*len(dirs) {
		t.Errorf("changed code: %d stage directories, want %d", len(d2), 2*len(dirs))
	}
	// every marker names the binary that computed it, whatever the key
	own, err := CodeKey()
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := filepath.Glob(filepath.Join(root, "stages", "*"))
	for _, dir := range d2 {
		if d, err := readDone(dir); err != nil {
			t.Error(err)
		} else if d.ComputedBy != own {
			t.Errorf("%s: computed by %q, want %q", dir, d.ComputedBy, own)
		}
	}
	check("back to code 1", c.run(t, root, "code 1"), nil)
	// A rerun that reproduces b's output leaves c alone.
	check("rerun b, same output", c.run(t, root, "code 1", "b"), []string{"b"})
	check("rerun d", c.run(t, root, "code 1", "d"), []string{"d"})
	check("rerun b,d", c.run(t, root, "code 1", "b", "d"), []string{"b", "d"})
	// A rerun that changes b's output recomputes c, which read it, and
	// then the cache holds again.
	c.out["b"] = " v2"
	check("rerun b, new output", c.run(t, root, "code 1", "b"), []string{"b", "c"})
	check("after the rerun", c.run(t, root, "code 1"), nil)
	c.out["a"] = " v2"
	check("rerun a, new output", c.run(t, root, "code 1", "a"), []string{"a", "b"})
	check("rerun all", c.run(t, root, "code 1", "all"), all)
	if want := map[string]int{"a": 4, "b": 7, "c": 4, "d": 5}; !maps.Equal(c.runs, want) {
		t.Errorf("computations %v", c.runs)
	}
	if err := (&Runner{Root: filepath.Join(root, "stages"), Code: "x"}).SetRerun([]string{"b", "nope"}, c.stages()); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown --rerun stage: %v", err)
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

// TestRunOnlyAndGraph runs one stage of a chain at a time: a stage whose
// ancestor is not done is refused naming it, the graph's states follow.
func TestRunOnlyAndGraph(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	c := &chain{out: map[string]string{}, runs: map[string]int{}}
	states := func() map[string]string {
		t.Helper()
		g, err := (&Runner{Root: root, Code: "k"}).Graph(c.stages(), true)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, s := range g {
			m[s.Name] = s.State
		}
		return m
	}
	only := func(name string) error {
		return (&Runner{Root: root, Code: "k"}).RunOnly(context.Background(), c.stages(), name)
	}
	var mi *MissingInputError
	if err := only("c"); !errors.As(err, &mi) || mi.Input != "a" || mi.Stage != "c" {
		t.Errorf("c before a: %v", err)
	}
	if err := only("nope"); err == nil || !strings.Contains(err.Error(), "no stage") {
		t.Errorf("unknown stage: %v", err)
	}
	if st := states(); st["a"] != StateReady || st["b"] != StateWaiting || st["d"] != StateReady {
		t.Errorf("states before: %v", st)
	}
	if err := only("a"); err != nil {
		t.Fatal(err)
	}
	if err := only("c"); !errors.As(err, &mi) || mi.Input != "b" {
		t.Errorf("c before b: %v", err)
	}
	if err := only("b"); err != nil {
		t.Fatal(err)
	}
	if st := states(); st["a"] != StateDone || st["b"] != StateDone || st["c"] != StateReady {
		t.Errorf("states after a, b: %v", st)
	}
	if err := only("c"); err != nil {
		t.Fatal(err)
	}
	if g, _ := (&Runner{Root: root, Code: "k"}).Graph(c.stages(), false); g[2].State != StateWaiting {
		t.Errorf("without looking, c is %s", g[2].State)
	}
	if want := map[string]int{"a": 1, "b": 1, "c": 1}; !maps.Equal(c.runs, want) {
		t.Errorf("computations %v", c.runs)
	}
}
