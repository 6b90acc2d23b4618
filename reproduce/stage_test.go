package reproduce

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestCodeKey checks the code key's sources: the VCS revision of a clean
// build, the revision and the executable's hash of a modified one, the
// executable's hash without VCS information; and that a changed executable
// changes the key wherever it is used.
func TestCodeKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "vomc")
	if err := os.WriteFile(exe, []byte("binary 1"), 0o755); err != nil {
		t.Fatal(err)
	}
	exeFn := func() (string, error) { return exe, nil }
	info := func(settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	noInfo := func() (*debug.BuildInfo, bool) { return nil, false }
	key := func(i func() (*debug.BuildInfo, bool)) string {
		t.Helper()
		k, err := computeCodeKey(i, exeFn)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	clean := key(info("vcs.revision", "abc123", "vcs.modified", "false"))
	dirty := key(info("vcs.revision", "abc123", "vcs.modified", "true"))
	bare := key(noInfo)
	noVCS := key(info("GOOS", "linux"))
	if clean != "vcs abc123" {
		t.Errorf("clean build: %q", clean)
	}
	if !strings.HasPrefix(dirty, "vcs abc123 modified exe ") || len(dirty) != len("vcs abc123 modified exe ")+64 {
		t.Errorf("modified build: %q", dirty)
	}
	if !strings.HasPrefix(bare, "exe ") || bare != noVCS || !strings.HasSuffix(dirty, bare[len("exe "):]) {
		t.Errorf("without VCS: %q and %q (modified: %q)", bare, noVCS, dirty)
	}
	if err := os.WriteFile(exe, []byte("binary 2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if key(info("vcs.revision", "abc123")) != clean {
		t.Error("a clean build's key depends on the executable")
	}
	if key(info("vcs.revision", "abc123", "vcs.modified", "true")) == dirty || key(noInfo) == bare {
		t.Error("a changed executable keeps its key")
	}
	if key(info("vcs.revision", "def456")) == clean {
		t.Error("another revision keeps the key")
	}
	if _, err := computeCodeKey(noInfo, func() (string, error) { return "", errors.New("no exe") }); err == nil {
		t.Error("no executable: no error")
	}
	if k, err := CodeKey(); err != nil || k == "" {
		t.Errorf("CodeKey of the test binary: %q, %v", k, err)
	}
}

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
	r, err := newRunner(Options{Out: root, Version: "test", CodeKey: code, Rerun: rerun}, st)
	if err != nil {
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
	if _, err := newRunner(Options{Out: root, CodeKey: "x", Rerun: []string{"b", "nope"}}, c.stages()); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown --rerun stage: %v", err)
	}
}

// TestIdenticalRunsSameStages runs a small study (every kind of stage,
// including the construction and a synthetic model, whose outputs record
// wall times) in two output directories: the stage directories have the
// same names; with another code key every name differs.
func TestIdenticalRunsSameStages(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants, cfg.HeatmapModel = []string{"2"}, nil, []string{"tf20"}, "2"
	cfg.MaxSteps, cfg.SynthSteps, cfg.Warmup, cfg.ConstructWindows = 20, 20, 5, 4
	cfg.TrainTrees, cfg.TestTrees = 40, 40
	names := func(out, code string) []string {
		t.Helper()
		if _, err := Run(context.Background(), cfg, Options{Out: out, Version: "test", CodeKey: code}); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(out, "stages"))
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	a := names(t.TempDir(), "code")
	b := names(t.TempDir(), "code")
	if !slices.Equal(a, b) {
		t.Errorf("stage directories of identical runs differ:\n%v\n%v", a, b)
	}
	for _, want := range []string{StageConstruct, StageSynth, "synth-tf20", StageFigures, StageReport} {
		if !slices.ContainsFunc(a, func(n string) bool { return strings.HasPrefix(n, want+"-") }) {
			t.Errorf("no stage %s in %v", want, a)
		}
	}
	g, err := Graph(cfg, Options{Version: "test", CodeKey: "other code"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g {
		if slices.Contains(a, s.Name+"-"+s.Hash) {
			t.Errorf("stage %s has the same directory under another code key", s.Name)
		}
	}
}
