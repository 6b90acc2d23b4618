package trainrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/transformer"
)

// The files of a run directory.
const (
	CheckpointFile  = "checkpoint.safetensors"
	ModelFile       = "model.safetensors"
	ConfigFile      = "config.json"
	TrainConfigFile = "train_config.json"
	LogFile         = "train.jsonl"
	CurvePNG        = "curve.png" // DrawCurve writes curve.<format>
	CurveSVG        = "curve.svg"
)

// Files are the files a run directory may hold (see CheckDir).
var Files = []string{CheckpointFile, ModelFile, ConfigFile, TrainConfigFile, LogFile, CurvePNG, CurveSVG}

// HeldError says that a directory already holds (part of) a run.
type HeldError struct {
	Dir, File string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s holds a training run (%s)", e.Dir, e.File)
}

// CheckDir refuses (with a *HeldError) a directory that holds (part of) a
// run unless force, in which case the run's files are removed.
func CheckDir(dir string, force bool) error {
	for _, f := range Files {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			if !force {
				return &HeldError{dir, f}
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if force {
		for _, f := range Files {
			if err := os.Remove(filepath.Join(dir, f)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// Options are the settings of a run.
type Options struct {
	// Dir is the run directory.
	Dir string
	// Meta is stored in every checkpoint (the data's paths and checksums).
	Meta map[string]string
	// CheckpointEvery is the interval of checkpoints in steps (0: only at
	// epoch ends).
	CheckpointEvery int
	// Log keeps the training log (LogFile, one JSON line per
	// transformer.LogEntry) and the training curve (DrawCurve: redrawn at
	// epoch ends, at most every 30 s, and at the end).
	Log bool
	// FinalCheckpoint writes the checkpoint once more when training ends.
	FinalCheckpoint bool
	// Events, if set, receives the progress of the steps as task Label,
	// with Status's text (nil: Run.DefaultStatus) beside it
	// (events.Detail).
	Events events.Sink
	Label  string
	Status func(step int, loss float64) string
	// OnStep, if set, is called after every step.
	OnStep func(step int)
	// Snapshots are the steps after which the model is also saved as a
	// snapshot (SnapshotPath; a transformer model file), for package
	// dynamics. Meta[MetaSnapshots] should hold their specification so
	// that a resumed run keeps them (see SnapshotSteps).
	Snapshots []int
}

// Run is a training run in its directory.
type Run[A any, M transformer.Trainable[A]] struct {
	Options
	Trainer *transformer.TrainerOf[A, M]
	// LastCheckpoint is the step of the checkpoint on disk.
	LastCheckpoint int
	first          int
	start          time.Time
	ref            *Reference
}

// CheckpointPath is the path of the run's checkpoint.
func (o Options) CheckpointPath() string { return filepath.Join(o.Dir, CheckpointFile) }

// File is a file that Start writes into the run directory.
type File struct {
	Name string
	Data []byte
}

// Start begins a new run of tr in opts.Dir: it creates the directory,
// writes files (e.g. the configurations), an empty log (with opts.Log) and
// the first checkpoint.
func Start[A any, M transformer.Trainable[A]](tr *transformer.TrainerOf[A, M], opts Options, files ...File) (*Run[A, M], error) {
	if opts.Log {
		files = append(files, File{LogFile, nil})
	}
	if err := writeFiles(opts.Dir, files); err != nil {
		return nil, err
	}
	if err := tr.SaveCheckpoint(opts.CheckpointPath(), opts.Meta); err != nil {
		return nil, err
	}
	return &Run[A, M]{Options: opts, Trainer: tr, LastCheckpoint: tr.Step}, nil
}

// Resume continues the run in opts.Dir with tr (resumed from its
// checkpoint): it removes the temporary files an interrupted checkpoint
// write may have left and, with opts.Log, rewrites the log from the
// checkpoint's history (the log may have lines written after the
// checkpoint).
func Resume[A any, M transformer.Trainable[A]](tr *transformer.TrainerOf[A, M], opts Options) (*Run[A, M], error) {
	if err := transformer.RemoveStaleTemp(opts.CheckpointPath()); err != nil {
		return nil, err
	}
	if opts.Log {
		if err := fsutil.WriteFile(filepath.Join(opts.Dir, LogFile), true, func(w io.Writer) error { return writeLogExtended(w, tr.History, opts.Meta) }); err != nil {
			return nil, err
		}
	}
	return &Run[A, M]{Options: opts, Trainer: tr, LastCheckpoint: tr.Step}, nil
}

// InterruptedError is returned by Run when its context ended; the
// checkpoint was saved at Step.
type InterruptedError struct {
	Step int
	Err  error // the context's error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted at step %d: %v", e.Step, e.Err)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// DefaultStatus is the default progress text: step, epoch, loss, best
// validation loss and the rate in tokens per second of this session.
func (r *Run[A, M]) DefaultStatus(step int, loss float64) string {
	tr := r.Trainer
	val := ""
	if !math.IsInf(tr.BestVal, 1) {
		val = fmt.Sprintf(" best val %.4f", tr.BestVal)
	}
	B := min(tr.Cfg.BatchSize, tr.Train.Windows())
	tokensPerStep := float64(B * len(tr.Train.Window(0)))
	rate := tokensPerStep * float64(step-r.first) / time.Since(r.start).Seconds()
	epochs := EpochsOf(step, tr.Cfg.BatchSize, tr.Train.Windows())
	return fmt.Sprintf("step %d epoch %.2f loss %.4f%s %.0f tok/s", step, epochs, loss, val, rate)
}

// Run trains to the end. When ctx ends, the checkpoint is saved and an
// *InterruptedError returned; a divergence (*transformer.DivergedError)
// leaves the last good checkpoint (LastCheckpoint) on disk. The trainer's
// callbacks (OnLog, OnStep, OnCheckpoint) are the driver's.
func (r *Run[A, M]) Run(ctx context.Context) error {
	err := r.run(ctx)
	return noSpace(err, r.CheckpointPath(), r.LastCheckpoint)
}

// runState is what one call of Run keeps besides the trainer: the first
// error writing the log (logErr) or a snapshot (snapErr), and the loss of
// the last step (lastLoss).
type runState struct {
	logErr, snapErr error
	lastLoss        float64
}

// run is Run but for noSpace: it installs the trainer's callbacks (the
// log, checkpoints, snapshots and progress), trains, and ends the run
// (endProgress, finish).
func (r *Run[A, M]) run(ctx context.Context) error {
	tr := r.Trainer
	s := &runState{lastLoss: math.NaN()}
	if r.Log {
		logFile, err := os.OpenFile(filepath.Join(r.Dir, LogFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer logFile.Close()
		tr.OnLog = r.logTo(logFile, s)
	}
	tr.CheckpointEvery = r.CheckpointEvery
	tr.OnCheckpoint = func() error { return r.save(s) }
	r.first, r.start = tr.Step, time.Now()
	snap, err := r.snapshotter()
	if err != nil {
		return err
	}
	tr.OnStep = r.onStep(snap, s)
	_, err = tr.Run(ctx)
	r.endProgress(s.lastLoss)
	return r.finish(err, s)
}

// logTo returns the trainer's OnLog: it appends each entry to w (the
// first error is kept in s.logErr) and, at an epoch's end at most every
// 30 s, redraws the training curve.
func (r *Run[A, M]) logTo(w io.Writer, s *runState) func(transformer.LogEntry) {
	lastCurve := time.Now()
	return func(e transformer.LogEntry) {
		if s.logErr == nil {
			s.logErr = WriteLog(w, []transformer.LogEntry{e})
		}
		if e.EpochEnd && time.Since(lastCurve) > 30*time.Second {
			lastCurve = time.Now()
			DrawCurveRef(r.Dir, r.Trainer.History, r.reference()) // best effort while training
		}
	}
}

// save is the trainer's OnCheckpoint: it returns s.logErr if writing the
// log failed, else writes the checkpoint and records its step in
// LastCheckpoint.
func (r *Run[A, M]) save(s *runState) error {
	if s.logErr != nil {
		return s.logErr
	}
	if err := r.Trainer.SaveCheckpoint(r.CheckpointPath(), r.Meta); err != nil {
		return err
	}
	r.LastCheckpoint = r.Trainer.Step
	return nil
}

// snapshotter checks, when the run has Snapshots, that the model can be
// saved as one and creates their folder; it returns the function that
// saves the snapshot of a step of Snapshots and does nothing at the other
// steps.
func (r *Run[A, M]) snapshotter() (func(step int) error, error) {
	snaps := map[int]bool{}
	for _, st := range r.Snapshots {
		snaps[st] = true
	}
	saver, canSnap := any(r.Trainer.Model).(interface{ SaveSafetensors(string) error })
	if len(snaps) > 0 && !canSnap {
		return nil, fmt.Errorf("trainrun: snapshots of a %T cannot be saved", r.Trainer.Model)
	}
	if len(snaps) > 0 {
		if err := os.MkdirAll(filepath.Join(r.Dir, SnapshotDir), 0o755); err != nil {
			return nil, err
		}
	}
	return func(step int) error {
		if !snaps[step] {
			return nil
		}
		return saver.SaveSafetensors(SnapshotPath(r.Dir, step))
	}, nil
}

// status is the progress text's function: Options.Status, else
// DefaultStatus.
func (r *Run[A, M]) status() func(step int, loss float64) string {
	if r.Options.Status != nil {
		return r.Options.Status
	}
	return r.DefaultStatus
}

// onStep returns the trainer's OnStep: it keeps the step's loss in
// s.lastLoss, saves the step's snapshot with snap (the first error is
// kept in s.snapErr), reports the progress to Events and calls
// Options.OnStep.
func (r *Run[A, M]) onStep(snap func(step int) error, s *runState) func(step int, loss float64) {
	ev, total, status := r.Events, max(r.Trainer.TotalSteps()-r.first, 0), r.status()
	return func(step int, loss float64) {
		s.lastLoss = loss
		if s.snapErr == nil {
			s.snapErr = snap(step)
		}
		if ev != nil && step-r.first < total { // the task ends after the last validation
			events.Detail(ev, r.Label, status(step, loss))
			ev.Progress(r.Label, step-r.first, total)
		}
		if r.OnStep != nil {
			r.OnStep(step)
		}
	}
}

// endProgress ends the Events task when training has returned: the status
// of the last step (lastLoss its loss) and the progress at the step
// reached.
func (r *Run[A, M]) endProgress(lastLoss float64) {
	ev, tr := r.Events, r.Trainer
	if ev == nil {
		return
	}
	if tr.Step > r.first {
		events.Detail(ev, r.Label, r.status()(tr.Step, lastLoss)) // after the last validation: the summary's numbers
	}
	// < total when stopped early or interrupted: the task ends there
	done, total := max(tr.Step-r.first, 0), max(tr.TotalSteps()-r.first, 0)
	events.Stop(ev, r.Label, done, max(done, total))
}

// finish ends the run once training has returned err. When the context
// ended, it saves the checkpoint and returns an *InterruptedError; else it
// returns the first error of training, the snapshots and the log, or
// writes the final checkpoint (FinalCheckpoint) and the training curve
// (Log).
func (r *Run[A, M]) finish(err error, s *runState) error {
	tr := r.Trainer
	if err == nil {
		err = s.snapErr
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			if serr := tr.SaveCheckpoint(r.CheckpointPath(), r.Meta); serr != nil {
				return serr
			}
			r.LastCheckpoint = tr.Step
			return &InterruptedError{tr.Step, err}
		}
		return err
	}
	if s.logErr != nil {
		return s.logErr
	}
	if r.FinalCheckpoint {
		if err := r.save(s); err != nil {
			return err
		}
	}
	if r.Log {
		return DrawCurveRef(r.Dir, tr.History, r.reference())
	}
	return nil
}

// reference is the training curve's reference (CTWReference), computed
// once.
func (r *Run[A, M]) reference() Reference {
	if r.ref == nil {
		ref, _ := CTWReference(r.Trainer.Val)
		r.ref = &ref
	}
	return *r.ref
}

// ReadLog reads what WriteLog writes: one transformer.LogEntry per line;
// lines without a step (the torch engine's {"engine": …} line) and blank
// lines are skipped. Errors name LogFile.
func ReadLog(r io.Reader) ([]transformer.LogEntry, error) {
	var out []transformer.LogEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("%s: %w", LogFile, err)
		}
		if _, ok := probe["step"]; !ok {
			continue
		}
		var e transformer.LogEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s: %w", LogFile, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// WriteLog writes entries as JSON lines.
func WriteLog(w io.Writer, es []transformer.LogEntry) error {
	var b []byte
	for _, e := range es {
		j, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(append(b, j...), '\n')
	}
	_, err := w.Write(b)
	return err
}
