package reproduce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
)

// DoneFile is the marker a stage writes last into its directory.
const DoneFile = "done.json"

// Stage is one cached step of the pipeline.
type Stage struct {
	// Name identifies the stage (file-name safe), e.g. "train-h4-4".
	Name string
	// Inputs is the stage's own configuration (JSON-encoded into its hash).
	Inputs any
	// Deps are the names of the stages whose outputs it reads.
	Deps []string
	// Resumable stages keep a partial directory (training checkpoints);
	// others start from an empty directory when they are redone.
	Resumable bool
	// Kind is the stage's job kind (KindData, KindTrain, …; empty means
	// KindEval): the Slurm submission runs the stages of a kind as one job.
	Kind string
	// Run does the work in sc.Dir and returns the paths (relative to
	// sc.Dir) of the files that define its output; their contents are
	// hashed into the output hash that downstream stages depend on.
	Run func(ctx context.Context, sc *StageContext) (outputs []string, err error)
}

// StageContext is what a running stage gets.
type StageContext struct {
	// Dir is the stage's directory (created).
	Dir string
	// Index (1-based) and Total place the stage in the run; Label is
	// "[k/n] name" for progress lines.
	Index, Total int
	Label        string
	// Deps are the completed upstream stages by name.
	Deps map[string]*Done
	// Log receives progress lines.
	Log io.Writer
}

// Done is the content of a stage's done marker.
type Done struct {
	Name string `json:"name"`
	// Hash is the stage's input hash (the directory suffix), OutputHash
	// the hash of its declared outputs.
	Hash       string `json:"hash"`
	OutputHash string `json:"output_hash"`
	// Outputs are the declared output files.
	Outputs []string `json:"outputs"`
	// DepOutputs are the output hashes of the dependencies it was computed
	// from, by name: a stage whose dependency's outputs have changed since
	// (a dependency recomputed by --rerun) is stale and computed again.
	DepOutputs map[string]string `json:"dep_outputs"`
	// Seconds is the stage's wall time (of the run that completed it).
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	// Dir is the stage's directory (not stored).
	Dir string `json:"-"`
	// Skipped is set when the stage was already done (not stored).
	Skipped bool `json:"-"`
}

// StageHash is the hash of a stage's inputs: the code key (see CodeKey;
// with the vomc version), its name and configuration, and the hashes (keys)
// of the stages it depends on, given by name in keys. It depends only on
// inputs, never on outputs, so identical runs give identical stage
// directories even where outputs record wall times.
func StageHash(code string, s Stage, keys map[string]string) (string, error) {
	in, err := json.Marshal(s.Inputs)
	if err != nil {
		return "", fmt.Errorf("reproduce: stage %s: %w", s.Name, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "vomc-reproduce/2\ncode %q\nstage %s\ninputs %s\n", code, s.Name, in)
	for _, d := range s.Deps {
		k, ok := keys[d]
		if !ok {
			return "", fmt.Errorf("reproduce: stage %s depends on %s, which is not planned before it", s.Name, d)
		}
		fmt.Fprintf(h, "dep %s %s\n", d, k)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashFiles hashes the named files of dir (names and contents).
func hashFiles(dir string, names []string) (string, error) {
	names = append([]string(nil), names...)
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s\n", n)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Job kinds of stages: the Slurm submission runs the stages of one kind as
// one job (an array job when there are several), in this order.
const (
	KindData    = "data"
	KindTrain   = "train"
	KindEval    = "eval"
	KindFigures = "figures"
	KindReport  = "report"
)

// Kinds lists the job kinds in the order they run.
var Kinds = []string{KindData, KindTrain, KindEval, KindFigures, KindReport}

// JobKind is the stage's kind (KindEval when Kind is empty).
func (s Stage) JobKind() string {
	if s.Kind == "" {
		return KindEval
	}
	return s.Kind
}

// Runner runs stages in order, caching them under Root. Every stage is
// claimed (see LockConfig) before it is computed, so that runners in other
// processes or on other machines sharing Root never compute the same stage
// at once: a runner that finds a stage claimed waits for it and then uses
// the result. A stage that is not resumable is computed in a scratch
// directory <name>-<hash>.partial that is renamed into place after its done
// marker is written, so a killed run never leaves a half-written stage
// directory.
type Runner struct {
	// Root is the directory of the stage directories (OUT/stages).
	Root string
	// Code is the code key (part of every hash): Options.code, the vomc
	// version and CodeKey.
	Code string
	// Rerun names the stages computed again even when cached ("all": every
	// stage). Their dependents are computed again when the rerun changed
	// their outputs (see Done.DepOutputs).
	Rerun map[string]bool
	// Log receives the progress lines (nil: discard).
	Log io.Writer
	// Lock configures the stage claims.
	Lock LockConfig
	// Done are the stages completed so far, by name.
	Done map[string]*Done
	// Ran and Skipped list the stages run and skipped, in order.
	Ran, Skipped []string
	// keys are the hashes of the stages hashed so far, by name.
	keys map[string]string
}

func (r *Runner) log() io.Writer {
	if r.Log == nil {
		return io.Discard
	}
	return r.Log
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
	fmt.Fprintf(r.log(), "%s: done (cached in %s)\n", label, dir)
	return true
}

// RunOne runs (or skips) one stage, whose dependencies must be in r.Done;
// index and total place it in the progress lines.
func (r *Runner) RunOne(ctx context.Context, s Stage, index, total int) error {
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	log := r.log()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, dep := range s.Deps {
		if _, ok := r.Done[dep]; !ok {
			return fmt.Errorf("reproduce: stage %s depends on %s, which has not run", s.Name, dep)
		}
	}
	hash, dir, err := r.stageDir(s)
	if err != nil {
		return err
	}
	label := fmt.Sprintf("[%d/%d] %s", index, total, s.Name)
	force := r.rerun(s)
	if !force && r.cached(s, hash, dir, label) {
		return nil
	}
	claim, err := AcquireLock(ctx, dir+".lock", r.Lock, func(o LockOwner) {
		fmt.Fprintf(log, "%s: claimed by %s; waiting for it\n", label, o)
	})
	if err != nil {
		return fmt.Errorf("stage %s: %w", s.Name, err)
	}
	defer claim.Release()
	// The holder we waited for may have completed it.
	if !force && r.cached(s, hash, dir, label) {
		return nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-claim.Lost():
			cancel(fmt.Errorf("stage %s: lock %s.lock was taken over by another process", s.Name, dir))
		case <-ctx.Done():
		}
	}()
	work := dir
	if _, err := os.Stat(filepath.Join(dir, DoneFile)); s.Resumable && err == nil {
		// Completed, but rerun or stale: start afresh, not from its
		// checkpoint.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if !s.Resumable {
		work = dir + ".partial"
		if err := os.RemoveAll(work); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(log, "%s: running in %s\n", label, dir)
	start := time.Now()
	sc := &StageContext{Dir: work, Index: index, Total: total, Label: label, Deps: r.Done, Log: log}
	outs, err := s.Run(ctx, sc)
	if err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		if c := context.Cause(ctx); c != nil && !errors.Is(err, c) {
			err = fmt.Errorf("%w (%v)", err, c)
		}
		return fmt.Errorf("stage %s: %w", s.Name, err)
	}
	oh, err := hashFiles(work, outs)
	if err != nil {
		return fmt.Errorf("stage %s: %w", s.Name, err)
	}
	depOuts := map[string]string{}
	for _, dep := range s.Deps {
		depOuts[dep] = r.Done[dep].OutputHash
	}
	d := &Done{Name: s.Name, Hash: hash, OutputHash: oh, Outputs: outs, DepOutputs: depOuts,
		Seconds: time.Since(start).Seconds(), Finished: time.Now().UTC(), Dir: dir}
	b, _ := json.MarshalIndent(d, "", "  ")
	if err := fsutil.WriteBytes(filepath.Join(work, DoneFile), true, append(b, '\n')); err != nil {
		return err
	}
	if work != dir {
		// A leftover directory without a valid marker (an older layout, or
		// a stage that changed from resumable) is replaced.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.Rename(work, dir); err != nil {
			return err
		}
	}
	r.Done[s.Name] = d
	r.Ran = append(r.Ran, s.Name)
	fmt.Fprintf(log, "%s: finished in %s\n", label, time.Since(start).Round(100*time.Millisecond))
	return nil
}

func readDone(dir string) (*Done, error) {
	b, err := os.ReadFile(filepath.Join(dir, DoneFile))
	if err != nil {
		return nil, err
	}
	var d Done
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	for _, o := range d.Outputs {
		if _, err := os.Stat(filepath.Join(dir, o)); err != nil {
			return nil, fmt.Errorf("stage output %s missing: %w", o, fs.ErrNotExist)
		}
	}
	if d.Hash == "" {
		return nil, errors.New("empty done marker")
	}
	return &d, nil
}

// writeJSON writes v as indented JSON into dir/name atomically.
func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteBytes(filepath.Join(dir, name), true, append(b, '\n'))
}

// readJSON reads dir/name into v.
func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
