package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
)

// Runner runs stages in order, caching them under Root. Every stage is
// claimed (see LockConfig) before it is computed, so that runners in other
// processes or on other machines sharing Root never compute the same stage
// at once: a runner that finds a stage claimed waits for it and then uses
// the result. A stage that is not resumable is computed in a scratch
// directory <name>-<hash>.partial that is renamed into place after its done
// marker is written, so a killed run never leaves a half-written stage
// directory.
type Runner struct {
	// Root is the directory of the stage directories.
	Root string
	// Code is the code key (part of every hash): what identifies the code
	// that computes the stages, e.g. a version and CodeKey().
	Code string
	// Rerun names the stages computed again even when cached ("all": every
	// stage; see SetRerun). Their dependents are computed again when the
	// rerun changed their outputs (see Done.DepOutputs).
	Rerun map[string]bool
	// Events receives the progress lines, as log lines (nil: discard),
	// and is handed to the stages (StageContext.Events).
	Events events.Sink
	// Lock configures the stage claims.
	Lock LockConfig
	// Done are the stages completed so far, by name.
	Done map[string]*Done
	// Ran and Skipped list the stages run and skipped, in order.
	Ran, Skipped []string
	// keys are the hashes of the stages hashed so far, by name.
	keys map[string]string
}

// logf reports one progress line.
func (r *Runner) logf(format string, args ...any) {
	events.Or(r.Events).Log(fmt.Sprintf(format, args...))
}

// stageLabel is "[index/total] name", the label of a stage's progress
// lines.
func stageLabel(index, total int, name string) string {
	return fmt.Sprintf("[%d/%d] %s", index, total, name)
}

// names lists the stages' names, comma-separated.
func names(stages []Stage) string {
	var ns []string
	for _, s := range stages {
		ns = append(ns, s.Name)
	}
	return strings.Join(ns, ", ")
}

// SetRerun sets r.Rerun to the named stages, each of which must be one of
// stages or "all".
func (r *Runner) SetRerun(rerun []string, stages []Stage) error {
	for _, n := range rerun {
		if n != "all" && !slices.ContainsFunc(stages, func(s Stage) bool { return s.Name == n }) {
			return fmt.Errorf("pipeline: rerun %s: no such stage (stages: all, %s)", n, names(stages))
		}
		if r.Rerun == nil {
			r.Rerun = map[string]bool{}
		}
		r.Rerun[n] = true
	}
	return nil
}

// Run runs (or skips) the stages in order. The i-th stage is reported as
// stage i+1 of len(stages).
func (r *Runner) Run(ctx context.Context, stages []Stage) error {
	for i, s := range stages {
		if err := r.RunOne(ctx, s, i+1, len(stages)); err != nil {
			return err
		}
	}
	return nil
}

// stageDir is the directory of stage s, whose dependencies must have been
// hashed by an earlier call (stages are hashed in plan order).
func (r *Runner) stageDir(s Stage) (hash, dir string, err error) {
	hash, err = StageHash(r.Code, s, r.keys)
	if err != nil {
		return "", "", err
	}
	if r.keys == nil {
		r.keys = map[string]string{}
	}
	r.keys[s.Name] = hash
	return hash, filepath.Join(r.Root, s.Name+"-"+hash), nil
}

// rerun reports whether s is to be computed again even when cached.
func (r *Runner) rerun(s Stage) bool {
	return r.Rerun["all"] || r.Rerun[s.Name]
}

// valid returns the done marker of s in dir when it is complete, has the
// stage hash hash, and was computed from the current outputs of its
// dependencies (which must be in r.Done).
func (r *Runner) valid(s Stage, hash, dir string) (*Done, bool) {
	d, err := readDone(dir)
	if err != nil || d.Hash != hash {
		return nil, false
	}
	for _, dep := range s.Deps {
		dd, ok := r.Done[dep]
		if !ok || d.DepOutputs[dep] != dd.OutputHash {
			return nil, false
		}
	}
	d.Dir = dir
	return d, true
}

// cached records s as done if its directory holds a valid done marker.
func (r *Runner) cached(s Stage, hash, dir, label string) bool {
	d, ok := r.valid(s, hash, dir)
	if !ok {
		return false
	}
	d.Skipped = true
	r.Done[s.Name] = d
	r.Skipped = append(r.Skipped, s.Name)
	r.logf("%s: done (cached in %s)", label, dir)
	return true
}

// RunOne runs (or skips) one stage, whose dependencies must be in r.Done;
// index and total place it in the progress lines.
func (r *Runner) RunOne(ctx context.Context, s Stage, index, total int) error {
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, dep := range s.Deps {
		if _, ok := r.Done[dep]; !ok {
			return fmt.Errorf("pipeline: stage %s depends on %s, which has not run", s.Name, dep)
		}
	}
	hash, dir, err := r.stageDir(s)
	if err != nil {
		return err
	}
	label := stageLabel(index, total, s.Name)
	force := r.rerun(s)
	if !force && r.cached(s, hash, dir, label) {
		return nil
	}
	claim, err := AcquireLock(ctx, dir+".lock", r.Lock, func(o LockOwner) {
		r.logf("%s: claimed by %s; waiting for it", label, o)
	})
	if err != nil {
		return fmt.Errorf("stage %s: %w", s.Name, err)
	}
	defer claim.Release()
	// The holder we waited for may have completed it.
	if !force && r.cached(s, hash, dir, label) {
		return nil
	}
	ctx, cancel := whileHeld(ctx, claim, s.Name, dir)
	defer cancel(nil)
	return r.compute(ctx, s, hash, dir, &StageContext{Index: index, Total: total, Label: label})
}

// whileHeld returns a context that is cancelled, with the cause named,
// when the claim on stage name's directory dir is taken over by another
// process.
func whileHeld(ctx context.Context, claim *Claim, name, dir string) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-claim.Lost():
			cancel(fmt.Errorf("stage %s: lock %s.lock was taken over by another process", name, dir))
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// compute runs stage s (hash, directory dir) in its working directory,
// given sc's Index, Total and Label, and records it as done: its done
// marker written and, for a stage computed in a scratch directory, the
// directory moved into place.
func (r *Runner) compute(ctx context.Context, s Stage, hash, dir string, sc *StageContext) error {
	work, err := workDir(s, dir)
	if err != nil {
		return err
	}
	r.logf("%s: running in %s", sc.Label, dir)
	start := time.Now()
	sc.Dir, sc.Deps, sc.Events = work, r.Done, events.Or(r.Events)
	outs, err := runStage(ctx, s, sc)
	if err != nil {
		return err
	}
	d, err := r.record(s, hash, dir, work, outs, start)
	if err != nil {
		return err
	}
	r.Done[s.Name] = d
	r.Ran = append(r.Ran, s.Name)
	r.logf("%s: finished in %s", sc.Label, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// workDir prepares and returns the directory stage s is computed in: dir
// itself for a resumable stage (emptied first when it holds a completed
// run, which is rerun or stale and must not resume from its checkpoint),
// else the fresh scratch directory dir.partial.
func workDir(s Stage, dir string) (string, error) {
	work := dir
	if _, err := os.Stat(filepath.Join(dir, DoneFile)); s.Resumable && err == nil {
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
	}
	if !s.Resumable {
		work = dir + ".partial"
		if err := os.RemoveAll(work); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	return work, nil
}

// runStage runs s.Run and returns its declared outputs. A stage that
// returns without error from a cancelled context fails with the
// cancellation's cause, and a failure gets the cause appended when it
// does not already wrap it.
func runStage(ctx context.Context, s Stage, sc *StageContext) ([]string, error) {
	outs, err := s.Run(ctx, sc)
	if err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		if c := context.Cause(ctx); c != nil && !errors.Is(err, c) {
			err = fmt.Errorf("%w (%v)", err, c)
		}
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	return outs, nil
}

// record hashes the outputs outs of stage s computed in work since start,
// writes its done marker there and, when work is a scratch directory,
// moves it to dir in place of any leftover. It returns the marker.
func (r *Runner) record(s Stage, hash, dir, work string, outs []string, start time.Time) (*Done, error) {
	oh, err := hashFiles(work, outs)
	if err != nil {
		return nil, fmt.Errorf("stage %s: %w", s.Name, err)
	}
	depOuts := map[string]string{}
	for _, dep := range s.Deps {
		depOuts[dep] = r.Done[dep].OutputHash
	}
	own, _ := CodeKey()
	d := &Done{Name: s.Name, Hash: hash, OutputHash: oh, Outputs: outs, DepOutputs: depOuts, ComputedBy: own,
		Seconds: time.Since(start).Seconds(), Finished: time.Now().UTC(), Dir: dir}
	b, _ := json.MarshalIndent(d, "", "  ")
	if err := fsutil.WriteBytes(filepath.Join(work, DoneFile), true, append(b, '\n')); err != nil {
		return nil, err
	}
	if work != dir {
		// A leftover directory without a valid marker (an older layout, or
		// a stage that changed from resumable) is replaced.
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.Rename(work, dir); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Find returns the index of the stage named name, or an error listing the
// stages.
func Find(stages []Stage, name string) (int, error) {
	if i := slices.IndexFunc(stages, func(s Stage) bool { return s.Name == name }); i >= 0 {
		return i, nil
	}
	return -1, fmt.Errorf("pipeline: no stage %q in this plan (stages: %s)", name, names(stages))
}

// MissingInputError is RunOnly's error when a stage's input is not done.
type MissingInputError struct {
	Stage, Input string
	// Root is the stages directory searched.
	Root string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("pipeline: stage %s needs stage %s, which is not done in %s", e.Stage, e.Input, e.Root)
}

// RunOnly runs exactly one stage of the plan stages, the one named name
// (skipping it if it is done, waiting for it if another process has
// claimed it). Every stage it depends on, directly or not, must be done
// already; otherwise the error is a *MissingInputError. r.Done holds the
// stages it found done and, afterwards, the stage itself.
func (r *Runner) RunOnly(ctx context.Context, stages []Stage, name string) error {
	idx, err := Find(stages, name)
	if err != nil {
		return err
	}
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	// The stage's ancestors, which must all be done.
	byName := map[string]Stage{}
	for _, s := range stages {
		byName[s.Name] = s
	}
	need := map[string]bool{}
	var mark func(n string)
	mark = func(n string) {
		for _, d := range byName[n].Deps {
			if !need[d] {
				need[d] = true
				mark(d)
			}
		}
	}
	mark(name)
	for _, s := range stages[:idx] {
		hash, dir, err := r.stageDir(s)
		if err != nil {
			return err
		}
		if !need[s.Name] {
			continue
		}
		d, ok := r.valid(s, hash, dir)
		if !ok {
			return &MissingInputError{Stage: name, Input: s.Name, Root: r.Root}
		}
		d.Skipped = true
		r.Done[s.Name] = d
	}
	return r.RunOne(ctx, stages[idx], idx+1, len(stages))
}

// Stage states reported by Graph.
const (
	StateDone    = "done"    // its done marker is valid
	StateRunning = "running" // claimed (its lock exists)
	StatePartial = "partial" // started, not done (a training checkpoint)
	StateReady   = "ready"   // its inputs are done
	StateWaiting = "waiting" // an input is not done
)

// StageInfo describes one stage of the graph.
type StageInfo struct {
	Name string
	// Kind is the job kind (KindData, …) the Slurm submission runs it in.
	Kind      string
	Deps      []string
	Resumable bool
	// State is one of the State constants, as found under the output
	// directory; Hash and Dir are always known (a hash depends only on inputs).
	State string
	Hash  string
	Dir   string
	// Note says who holds a running stage's claim.
	Note string
}

// Graph returns the stages in order with their job kinds, dependencies,
// hashes and directories; with look, their states as found under r.Root,
// otherwise (nothing computed yet) every stage "ready" or "waiting".
func (r *Runner) Graph(stages []Stage, look bool) ([]StageInfo, error) {
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	var out []StageInfo
	for _, s := range stages {
		si := StageInfo{Name: s.Name, Kind: s.JobKind(), Deps: s.Deps, Resumable: s.Resumable, State: StateWaiting}
		hash, dir, err := r.stageDir(s)
		if err != nil {
			return nil, err
		}
		si.Hash, si.Dir = hash, dir
		ready := true
		for _, d := range s.Deps {
			if _, ok := r.Done[d]; !ok {
				ready = false
			}
		}
		if ready {
			si.State = StateReady
			if look {
				if d, ok := r.valid(s, hash, dir); ok {
					r.Done[s.Name] = d
					si.State = StateDone
				} else if note := describeLock(dir+".lock", r.Lock); note != "" {
					si.State, si.Note = StateRunning, note
				} else if _, err := os.Stat(dir); err == nil {
					si.State = StatePartial
				}
			}
		}
		out = append(out, si)
	}
	return out, nil
}
