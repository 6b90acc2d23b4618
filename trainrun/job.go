package trainrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/transformer"
)

// Engine.Train is the one driver of training runs: it starts a run
// directory (or resumes it from its checkpoint), trains it to its end with
// checkpoints, log, curve and snapshots, and finishes it (the model file),
// on the engine, for every model (Model) and every caller: 'vomc train'
// (Train), 'vomc synth' (synth.TrainDir) and the training stages of 'vomc
// reproduce'.

// Mode says how Engine.Train opens the run directory.
type Mode int

const (
	// ModeNew starts a new run. A directory holding (part of) a run is
	// refused (*HeldError) unless Job.Force, which clears that run once
	// every check has passed.
	ModeNew Mode = iota
	// ModeResume continues the run in Job.Dir from its checkpoint: the
	// model, its settings and its data are the checkpoint's (Job.Data.Data
	// and Job.Data.Val, when set, are new paths of its data sets, whose
	// checksums must match; Job.CheckpointEvery is the job's).
	ModeResume
	// ModeContinue resumes the run when Job.Dir holds a checkpoint and starts
	// it otherwise, with the job's data and settings either way (the
	// training stages of a study, whose directory goes with its
	// settings).
	ModeContinue
)

// ModeOf is the mode of a command's --resume: ModeResume or ModeNew.
func ModeOf(resume bool) Mode {
	if resume {
		return ModeResume
	}
	return ModeNew
}

// Job is one training run for Engine.Train, and the one options struct
// from a command's flags to the trainer: 'vomc train' fills it from its
// flags (Model: ModelOptions), 'vomc synth' (synth.TrainDir) and a study's
// training stages from their own settings.
type Job struct {
	// Dir is the run directory; Mode how it is opened.
	Dir  string
	Mode Mode
	// Force clears a run held in Dir (New), once every check has passed.
	Force bool
	// AllowUnverified accepts a checkpoint without a checksum (ModeResume, Go
	// engine).
	AllowUnverified bool
	// Data describes the data (Resume: new paths of the checkpoint's);
	// Data.SplitSeed splits a new run's training and validation sets.
	Data DataSpec
	// Meta is added to the data's metadata in the checkpoints (e.g. a
	// stage's label).
	Meta map[string]string
	// Model is what is trained; for Resume, what rebuilds the
	// checkpoint's model.
	Model Model
	// Train are the optimisation settings (not for Resume: the
	// checkpoint's); Train.Seed also seeds the initialisation.
	Train transformer.TrainConfig
	// CheckpointEvery is the checkpoint interval in steps (0: epoch ends).
	CheckpointEvery int
	// Snapshots is the snapshot specification (SnapshotSteps; "": none;
	// Resume: the checkpoint's unless set, which adds snapshots to a run
	// from its current step on).
	Snapshots string
	// Budget says what a new run whose Train.Epochs would end it before
	// Train.MaxSteps does (the budget rules: budget.go); Extend is a larger
	// budget for ModeResume (see Extension).
	Budget BudgetRule
	Extend Extension
	// FinalCheckpoint writes the checkpoint once more at the end (Go
	// engine), with the best parameters restored.
	FinalCheckpoint bool
	// Events receives, as log lines, what a new run trains, where a
	// resumed run continues and an extension (Extend), and the progress
	// of the Go engine's steps as task Label ("": "steps"), with Status's
	// text (nil: Run.DefaultStatus) beside it (events.Detail); nil:
	// nothing. OnOpen, when set, is called once the run is opened, before
	// its first step.
	Events events.Sink
	OnOpen func(Opened)
	Label  string
	Status func(step, total int, loss float64) string
	// TorchOutput receives the torch engine's own output, its progress
	// lines and messages as the child process writes them (nil:
	// Torch.Stderr).
	TorchOutput io.Writer
	// OnStep, when set, is called after every step of the Go engine.
	OnStep func(step int)
}

// Opened is a run opened by Engine.Train, before its first step.
type Opened struct {
	// Resumed says that it continues from its checkpoint, at Step.
	Resumed bool
	Step    int
	// Engine is the engine that trains it (EngineGo for a GoModel,
	// whichever engine was chosen).
	Engine string
}

// Summary is the outcome of a finished run.
type Summary struct {
	// Engine is EngineGo or EngineTorch; Resumed says that the run
	// continued from a checkpoint; Name is the model's name.
	Engine  string
	Resumed bool
	Name    string
	// Step and Epoch are where the run ended; Stopped says that early
	// stopping ended it; Train are its settings.
	Step, Epoch int
	Stopped     bool
	Train       transformer.TrainConfig
	// Elapsed is the training time of all sessions, Earlier that of the
	// sessions before this one (0 for a run started afresh).
	Elapsed, Earlier time.Duration
	// BestVal is the best validation loss (+Inf: no validation).
	BestVal float64
	// History is the training log; TrainWindows the number of training
	// windows.
	History      []transformer.LogEntry
	TrainWindows int
}

// HasValidation says whether the run had a validation set.
func (s *Summary) HasValidation() bool { return !math.IsInf(s.BestVal, 1) }

// FinalTrainLoss is the training loss of the last log entry (0: none).
func (s *Summary) FinalTrainLoss() float64 {
	if len(s.History) == 0 {
		return 0
	}
	return s.History[len(s.History)-1].TrainLoss
}

// RunData is the data of a run as a Model sees it: the windows, the
// alphabet size and the metadata kept in the checkpoints.
type RunData struct {
	Train, Val transformer.Windows
	A          int
	Meta       map[string]string
}

// Model is what a run trains: a Transformer (on either engine), a
// GoModel (any model of the Go engine, e.g. synth's TF 2-0 models), or
// the model of 'vomc train's options (Train).
type Model interface {
	// check checks the model's settings on e before any data is read.
	check(e *Engine) error
	// prepare completes the model of a new run for its data and checks
	// it, before anything is written.
	prepare(e *Engine, d RunData) (Model, error)
	// start begins the new run (its files and first checkpoint).
	start(e *Engine, r *opening) (session, error)
	// resume continues the run from its checkpoint c.
	resume(e *Engine, r *opening, c *transformer.Checkpoint) (session, error)
}

// opening is a run being opened: the job, the data and the snapshot steps.
type opening struct {
	job   *Job
	data  RunData
	snaps []int
}

// options are the Go engine's driver settings of the run.
func (r *opening) options() Options {
	j := r.job
	label := j.Label
	if label == "" {
		label = "steps"
	}
	return Options{Dir: j.Dir, Meta: r.data.Meta, CheckpointEvery: j.CheckpointEvery, Log: true, FinalCheckpoint: j.FinalCheckpoint,
		Events: j.Events, Label: label, OnStep: j.OnStep, Snapshots: r.snaps}
}

// session is an opened run, trained by run to its end and finished.
type session interface {
	// at is the step the run continues from and the training time before.
	at() (step int, earlier time.Duration)
	// engine is the engine that trains it.
	engine() string
	run(ctx context.Context) (*Summary, error)
}

// Train trains the run j describes on e to its end: it opens the run
// directory (Job.Mode; for a new run, every setting and the data are
// checked before anything is written), trains with checkpoints every
// Job.CheckpointEvery steps and at every epoch end, the training log
// (LogFile) and curve, and snapshots, and writes the model file. When ctx
// ends the checkpoint is saved and an *InterruptedError returned; a
// divergence returns a *DivergedError (Go engine), leaving the last good
// checkpoint. Bad settings are *OptionErrors.
func (e *Engine) Train(ctx context.Context, j Job) (*Summary, error) {
	if e.Backend() == nil {
		return nil, transformer.ErrNoBackend // before anything is written
	}
	j.Train.Canonicalize() // keywords in any case (--lr-schedule Constant)
	if err := checkInterval(j.CheckpointEvery); err != nil {
		return nil, err
	}
	if j.AllowUnverified && e.Name() == EngineTorch {
		return nil, &OptionError{Option: "allow_unverified", Msg: ": the torch engine resumes verified checkpoints only"}
	}
	if j.Mode != ModeResume {
		// the model's options before the engine's check, which for the
		// torch engine starts Python (seconds)
		if err := j.Model.check(e); err != nil {
			return nil, err
		}
	}
	if _, goOnly := j.Model.(interface{ goOnly() }); !goOnly {
		if err := e.Check(); err != nil { // before anything is written
			return nil, err
		}
	}
	var s session
	var resumed bool
	var err error
	switch j.Mode {
	case ModeResume:
		s, err = e.resume(&j)
		resumed = true
	case ModeNew, ModeContinue:
		s, resumed, err = e.open(&j)
	default:
		err = fmt.Errorf("trainrun: mode %d", j.Mode)
	}
	if err != nil {
		return nil, err
	}
	if j.OnOpen != nil {
		step, _ := s.at()
		j.OnOpen(Opened{Resumed: resumed, Step: step, Engine: s.engine()})
	}
	sum, err := s.run(ctx)
	if err != nil {
		return nil, err
	}
	_, sum.Earlier = s.at()
	sum.Resumed = resumed
	return sum, nil
}

// checkInterval refuses a negative checkpoint interval.
func checkInterval(every int) error {
	o := transformer.OptionByKeyMust("checkpoint_every")
	if o.Check(every, transformer.TrainConfig{}) != nil {
		return &OptionError{Option: o.Key, Msg: fmt.Sprintf(" %d: want %s", every, o.Want(transformer.TrainConfig{}))}
	}
	return nil
}

// resume opens the run in j.Dir from its checkpoint and its data.
func (e *Engine) resume(j *Job) (session, error) {
	if err := checkRun(j.Dir); err != nil {
		return nil, err
	}
	c, train, val, err := Load(j.Dir, j.Data.Data, j.Data.Val, j.AllowUnverified)
	if err != nil {
		return nil, err
	}
	if err := j.extend(e, c, train, val); err != nil {
		return nil, err
	}
	if j.Snapshots != "" {
		c.Meta[MetaSnapshots] = j.Snapshots
	}
	snaps, err := SnapshotSteps(c.Meta[MetaSnapshots], transformer.TotalSteps(c.Train, c.TrainWindows))
	if err != nil {
		return nil, err
	}
	r := &opening{job: j, data: RunData{Train: train, Val: val, Meta: c.Meta}, snaps: snaps}
	return j.Model.resume(e, r, c)
}

// open checks the job's settings and reads its data, then starts the run
// or (ModeContinue, with a checkpoint in j.Dir) resumes it.
func (e *Engine) open(j *Job) (s session, resumed bool, err error) {
	if j.Data.Data == "" {
		return nil, false, &OptionError{Option: "data", Msg: " DIR is required"}
	}
	if err := j.Train.Validate(); err != nil {
		return nil, false, err // a *transformer.TrainConfigError, an *OptionError too
	}
	if err := j.Model.check(e); err != nil {
		return nil, false, err
	}
	if j.Mode == ModeNew {
		if _, err := os.Stat(filepath.Join(j.Dir, dataset.ManifestFile)); err == nil {
			return nil, false, &NoRunError{Dir: j.Dir, DataSet: true}
		}
		if err := CheckDir(j.Dir, false); err != nil && !j.Force {
			return nil, false, err // refused early
		}
	}
	r, err := j.load()
	if err != nil {
		return nil, false, err
	}
	if err := j.budget(r); err != nil {
		return nil, false, err
	}
	if j.Mode == ModeContinue {
		path := j.CheckpointPath()
		if _, err := os.Stat(path); err == nil {
			c, err := transformer.LoadCheckpoint(path)
			if err != nil {
				return nil, false, err
			}
			s, err := j.Model.resume(e, r, c)
			return s, true, err
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
	}
	m, err := j.Model.prepare(e, r.data)
	if err != nil {
		return nil, false, err
	}
	if j.Mode == ModeNew {
		if err := CheckDir(j.Dir, j.Force); err != nil { // every check passed: Force may clear the old run
			return nil, false, err
		}
	}
	s, err = m.start(e, r)
	return s, false, err
}

// CheckpointPath is the path of the run's checkpoint.
func (j *Job) CheckpointPath() string { return Options{Dir: j.Dir}.CheckpointPath() }

// load checks and reads the job's data and its snapshot steps.
func (j *Job) load() (*opening, error) {
	if f := j.Data.ValFrac; !(f >= 0 && f < 1) {
		return nil, &OptionError{Option: "val_frac", Msg: fmt.Sprintf(" %g outside [0, 1)", f)}
	}
	if j.Data.N < 0 {
		return nil, &OptionError{Option: "N", Msg: fmt.Sprintf(" %d is negative", j.Data.N)}
	}
	train, val, A, meta, err := j.Data.Load()
	if errors.Is(err, ErrWindowLength) {
		return nil, &OptionError{Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	snaps, err := SnapshotSteps(j.Snapshots, transformer.TotalSteps(j.Train, train.Windows()))
	if err != nil {
		return nil, err
	}
	maps.Copy(meta, j.Meta)
	if j.Snapshots != "" {
		meta[MetaSnapshots] = j.Snapshots
	}
	return &opening{job: j, data: RunData{Train: train, Val: val, A: A, Meta: meta}, snaps: snaps}, nil
}
