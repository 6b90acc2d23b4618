package reproduce

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/pipeline"

	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
)

// TestDefaultJobs: one stage per two cores on the Go engine, at most 4,
// 2 on 2 or 3 cores, 1 on one; one with the torch engine.
func TestDefaultJobs(t *testing.T) {
	for _, tc := range []struct {
		engine  string
		threads int
		want    int
	}{{"", 1, 1}, {"", 2, 2}, {"", 3, 2}, {"", 4, 2}, {trainrun.EngineGo, 6, 3}, {"", 16, 4}, {"", 128, 4}, {trainrun.EngineTorch, 16, 1}} {
		if got := DefaultJobs(study.Config{Engine: tc.engine}, tc.threads); got != tc.want {
			t.Errorf("engine %q, %d threads: %d jobs, want %d", tc.engine, tc.threads, got, tc.want)
		}
	}
}

// TestJobsRefused: a negative job count and Jobs > 1 without a binary to
// run the stages are refused before any stage runs.
func TestJobsRefused(t *testing.T) {
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	for jobs, want := range map[int]string{-1: "-1 jobs: want ≥ 1", 2: "needs the vomc binary"} {
		out := t.TempDir()
		_, err := Run(context.Background(), cfg, Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Jobs: jobs})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d jobs: %v, want %q", jobs, err, want)
		}
	}
}

// TestProcessExec: the stage process's command line (the run's
// configuration file, its code key, the stage, --rerun when asked), its
// share of the cores in GOMAXPROCS, its output prefixed with the stage's
// name, a failure naming its last line, and cancellation interrupting it
// once (it exits on its own, here after trapping SIGINT). The stage is
// cancelled once its "ready" has been written, however soon that comes.
func TestProcessExec(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "vomc")
	os.WriteFile(script, []byte(`#!/bin/sh
echo "args: $*"
echo "threads: $GOMAXPROCS $OMP_NUM_THREADS"
case "$*" in
*--stage\ fails*) echo "vomc reproduce: it broke" >&2; exit 3;;
*--stage\ waits*) trap 'echo interrupted >> '"$0"'.sig; exit 130' INT; echo ready; while :; do sleep 0.05; done;;
esac
`), 0o755)
	opts := Options{Engine: testEngine, Out: filepath.Join(dir, "out"), CodeKey: "key1", Vomc: script}
	exec, err := processExec(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	job := func(name string, rerun bool) pipeline.Job {
		return pipeline.Job{Stage: pipeline.Stage{Name: name}, Threads: 3, Rerun: rerun, Events: events.Writer(&syncWriter{w: &log})}
	}
	if err := exec(context.Background(), job("train-x", true)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"train-x: args: reproduce --preset tiny --config " + filepath.Join(opts.Out, "config.json") + " --out " + opts.Out,
		"--code-key key1 --stage train-x --rerun train-x\n", "train-x: threads: 3 3\n"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if err := exec(context.Background(), job("fails", false)); err == nil || !strings.Contains(err.Error(), "exit status 3 (last line: vomc reproduce: it broke)") {
		t.Errorf("failing stage: %v", err)
	}
	if runtime.GOOS != "linux" {
		return
	}
	if signal.Ignored(os.Interrupt) {
		// Started with SIGINT ignored (a test binary run with & from a
		// shell without job control): the stand-in shell would inherit
		// that, and a signal ignored on entry to a non-interactive shell
		// cannot be trapped (POSIX trap), so it would never see the
		// interrupt. vomc itself catches SIGINT (signal.NotifyContext),
		// which un-ignores it; so does this, for the rest of the test
		// process (signal.Stop would ignore it again, unbeknown to
		// signal.Ignored); the interrupts it catches were ignored anyway.
		signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // on a failure below: the stage is interrupted, its goroutine ends
	ready := &syncWriter{w: &strings.Builder{}, seen: "ready", ch: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		j := job("waits", false)
		j.Events = events.Writer(ready)
		done <- exec(ctx, j)
	}()
	select {
	case <-ready.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the stage process did not start")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled stage: %v", err)
	}
	if b, _ := os.ReadFile(script + ".sig"); string(b) != "interrupted\n" {
		t.Errorf("the stage process got %q, want one interrupt", b)
	}
}

// syncWriter is a writer for several goroutines that closes ch once seen
// has been written. ch itself is never changed (a reader may take it at
// any time); closed says whether it has been closed.
type syncWriter struct {
	mu     sync.Mutex
	w      io.Writer
	seen   string
	ch     chan struct{}
	closed bool
	all    strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all.Write(p)
	if s.ch != nil && !s.closed && strings.Contains(s.all.String(), s.seen) {
		close(s.ch)
		s.closed = true
	}
	return s.w.Write(p)
}
