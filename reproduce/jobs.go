package reproduce

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
)

// DefaultJobs is the number of stages a run computes at once on threads
// cores unless told otherwise: on the Go engine one stage per two cores
// (its training speed-up from one thread to two is its best), but 2 on 2
// or 3 cores (on 2 cores the shortened small preset took 0.89–0.90 of its
// --jobs 1 wall time with --jobs 2), at most 4 (each stage holds its model
// and data in memory); one with the torch engine, which uses a GPU or
// every core itself, and one on one core.
func DefaultJobs(cfg study.Config, threads int) int {
	if cfg.Engine == trainrun.EngineTorch || threads < 2 {
		return 1
	}
	return min(4, max(2, threads/2))
}

// stageArgs are the arguments of `vomc` that run one stage of the study
// (--stage NAME appended) on the output directory out, reading the
// configuration from the file config: what every Slurm task and every
// stage process of a run with Options.Jobs > 1 runs.
func stageArgs(cfg study.Config, opts Options, config, out string) []string {
	a := []string{"reproduce", "--preset", cfg.Preset, "--config", config, "--out", out}
	if opts.Lock.Stale > 0 {
		a = append(a, "--lock-stale", opts.Lock.Stale.String())
	}
	return append(a, opts.Engine.Flags()...) // the torch engine's settings, for the training stages
}

// processExec returns the pipeline.Parallel Exec of a run with
// opts.Jobs > 1: each stage is computed by `opts.Vomc reproduce --stage
// NAME` in a process of its own, reading the run's configuration
// (OUT/config.json, FileJSON) and hashing with this run's code key, with
// GOMAXPROCS and OMP_NUM_THREADS set to its share of the cores; its output
// lines go to the run's log, prefixed with the stage's name. Cancelling ctx
// interrupts the process once (SIGINT, as Ctrl-C would: a training stage
// writes its checkpoint; see detach) and kills it if it has not stopped
// within a minute.
func processExec(cfg study.Config, opts Options) (func(context.Context, pipeline.Job) error, error) {
	if opts.Vomc == "" {
		return nil, errors.New("reproduce: computing stages at once (Jobs > 1) needs the vomc binary to run them (Options.Vomc)")
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	code := opts.CodeKey
	if code == "" {
		if code, err = pipeline.CodeKey(); err != nil {
			return nil, err
		}
	}
	// The stages are hashed with this run's code key, also where a stage
	// process would compute another (a binary rebuilt during the run).
	args := append(stageArgs(cfg, opts, filepath.Join(out, "config.json"), out), "--code-key", code)
	return func(ctx context.Context, job pipeline.Job) error {
		a := append(append([]string(nil), args...), "--stage", job.Stage.Name)
		if job.Rerun {
			a = append(a, "--rerun", job.Stage.Name)
		}
		cmd := exec.CommandContext(ctx, opts.Vomc, a...)
		detach(cmd)
		cmd.WaitDelay = time.Minute
		t := strconv.Itoa(job.Threads)
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+t, "OMP_NUM_THREADS="+t)
		lw := &pipeline.LineWriter{Line: job.Events.Log, Prefix: job.Stage.Name + ": ", Keep: "["}
		cmd.Stdout, cmd.Stderr = lw, lw
		err := cmd.Run()
		lw.Flush()
		if err == nil {
			return nil
		}
		if c := context.Cause(ctx); c != nil {
			return fmt.Errorf("stage %s: %w", job.Stage.Name, c)
		}
		return fmt.Errorf("stage %s: %s %s: %v (last line: %s)", job.Stage.Name, filepath.Base(opts.Vomc), "reproduce --stage "+job.Stage.Name, err, lw.Last())
	}, nil
}
