package reproduce

import (
	"context"
	"strings"
	"testing"

	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer/trainrun"
)

// TestDefaultJobs: one stage per two cores on the Go engine, at most 4,
// at least 1; one with the torch engine.
func TestDefaultJobs(t *testing.T) {
	for _, tc := range []struct {
		engine  string
		threads int
		want    int
	}{{"", 1, 1}, {"", 2, 1}, {"", 3, 1}, {"", 4, 2}, {trainrun.EngineGo, 6, 3}, {"", 16, 4}, {"", 128, 4}, {trainrun.EngineTorch, 16, 1}} {
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
		_, err := Run(context.Background(), cfg, Options{Out: out, Version: "test", CodeKey: "test", Jobs: jobs})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d jobs: %v, want %q", jobs, err, want)
		}
	}
}
