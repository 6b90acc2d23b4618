package trainrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Budgets. Every rule that decides how long a run trains is here.
//
// A run ends at the first of three bounds: Train.Epochs passes over the
// training windows (⌈n/BatchSize⌉ steps each), Train.MaxSteps steps (0:
// none), and early stopping (Train.Patience epochs in a row without a new
// best validation loss; 0: none). transformer.TotalSteps is the length of
// the first two, which the learning-rate schedule spans. Then:
//
//   - A new run (Job.Budget) whose epochs would end it before MaxSteps:
//     EitherBound keeps both (the epochs end it; a study's stages),
//     StepsWin raises the epochs to ⌈MaxSteps/per⌉ (the epochs were not
//     asked for), EpochsAsked refuses it with an *OptionError saying which
//     bound wins and how to get the steps asked for (newBudget).
//   - A resumed run with an Extension (Job.Extend): its MaxSteps and
//     Epochs, when > 0, replace the checkpoint's; steps asked for without
//     epochs raise the epochs to reach them, epochs asked for without steps
//     drop a MaxSteps they would pass; the new total must lie beyond the
//     current step; early stopping counts afresh; a run that MaxSteps ended
//     in the middle of an epoch goes on with that epoch's shuffle where it
//     stopped (extendBudget).
//   - A finished run says which bound ended it (EndReason).
//
// budgetCases in budget_test.go holds one case of each.

// BudgetRule says what a new run whose Train.Epochs would end it before
// Train.MaxSteps does (Job.Budget).
type BudgetRule int

const (
	// EitherBound keeps both bounds: the first one reached ends the run.
	EitherBound BudgetRule = iota
	// StepsWin raises Train.Epochs to reach Train.MaxSteps (the epochs
	// were not asked for).
	StepsWin
	// EpochsAsked refuses the run: both bounds were asked for, and the
	// epochs would win.
	EpochsAsked
)

// BudgetOf is the rule of a command whose user gave the epochs (--epochs)
// or not: EpochsAsked or StepsWin.
func BudgetOf(epochsGiven bool) BudgetRule {
	if epochsGiven {
		return EpochsAsked
	}
	return StepsWin
}

// stepsPerEpoch is the number of steps of one epoch of n windows in
// batches of B: ⌈n/B⌉.
func stepsPerEpoch(n, B int) int { return (n + B - 1) / B }

// newBudget applies rule to the settings tc of a new run on n training
// windows.
func newBudget(rule BudgetRule, tc transformer.TrainConfig, n int) (transformer.TrainConfig, error) {
	per := stepsPerEpoch(n, tc.BatchSize)
	if tc.MaxSteps == 0 || per == 0 || tc.MaxSteps <= tc.Epochs*per {
		return tc, nil
	}
	switch rule {
	case StepsWin:
		tc.Epochs = (tc.MaxSteps + per - 1) / per
	case EpochsAsked:
		need := (tc.MaxSteps + per - 1) / per
		return tc, &OptionError{Option: "max_steps", Also: []string{"epochs", "epochs", "max_steps"}, Msg: fmt.Sprintf(
			" %d is more than %%s %d allows (%d steps per epoch: the epochs end the run at step %d, so the epochs bound would win); "+
				"give %%s %d to train %d steps, or leave out %%s", tc.MaxSteps, tc.Epochs, per, tc.Epochs*per, need, tc.MaxSteps)}
	}
	return tc, nil
}

// Extension is a larger budget for a resumed run (ModeResume): MaxSteps
// and Epochs, when > 0, replace the checkpoint's (extendBudget). The Go
// engine extends any run, the torch engine transformers (the extended
// checkpoint is written back for it to read).
//
// The schedule: from the step it resumes at, the run follows the schedule
// of a run of the new total length (as if it had been started with the
// new budget); under the cosine schedule a finished run's learning rate
// thus rises from MinLR to that schedule's value at the current step and
// decays to MinLR at the new end, under the constant schedule it goes on
// unchanged. Early stopping counts afresh (a run stopped by its patience
// continues). The extension is kept in the checkpoint's metadata
// (MetaExtensions) and written to the training log as a line
// {"extended": …} (ReadLog skips it).
type Extension struct {
	MaxSteps, Epochs int
}

// none says that x extends nothing.
func (x Extension) none() bool { return x.MaxSteps == 0 && x.Epochs == 0 }

// extendBudget is the settings of the run in dir — settings tc on n
// training windows, at state s — extended by x; the early-stopping count
// of s starts afresh.
func extendBudget(dir string, tc transformer.TrainConfig, n int, s *transformer.TrainerState, x Extension) (transformer.TrainConfig, error) {
	step, epoch, before := s.Step, s.Epoch, transformer.TotalSteps(tc, n)
	per := stepsPerEpoch(n, tc.BatchSize)
	// A run that MaxSteps ended in the middle of an epoch counted that
	// epoch as done (it validated, and dropped its place in the epoch's
	// shuffle); its earlier epochs were whole. The extension goes on in
	// that epoch, from the window after the last step's, so that under a
	// constant schedule the steps are those of a run asked for with the
	// larger budget from the start.
	if in := step - (s.Epoch-1)*per; s.Index == 0 && tc.MaxSteps > 0 && step == tc.MaxSteps && s.Epoch >= 1 && in > 0 && in < per {
		s.Epoch, s.Index = s.Epoch-1, in*tc.BatchSize
	}
	if x.Epochs > 0 {
		tc.Epochs = x.Epochs
		if x.MaxSteps == 0 && tc.MaxSteps > 0 && tc.MaxSteps < x.Epochs*per {
			tc.MaxSteps = 0 // the epochs asked for
		}
	}
	if x.MaxSteps > 0 {
		tc.MaxSteps = x.MaxSteps
		need := epochsFor(*s, per, n, tc.BatchSize, x.MaxSteps)
		if x.Epochs == 0 {
			tc.Epochs = max(tc.Epochs, need)
		} else if x.Epochs < need {
			return tc, &OptionError{Option: "max_steps", Also: []string{"epochs", "epochs"}, Msg: fmt.Sprintf(
				" %d is more than %%s %d allows (the run is at step %d; the epochs bound would win): give %%s %d or more", x.MaxSteps, x.Epochs, step, need)}
		}
	}
	if transformer.TotalSteps(tc, n) <= step || tc.Epochs <= s.Epoch {
		return tc, &OptionError{Msg: fmt.Sprintf("the run in %s is at step %d (epoch %d) of %d: extending it needs a larger budget (%%s or %%s)", dir, step, epoch, before),
			Also: []string{"max_steps", "epochs"}}
	}
	if err := tc.Validate(); err != nil {
		return tc, &OptionError{Msg: err.Error(), Err: err}
	}
	s.Stopped, s.SinceBest = false, 0
	return tc, nil
}

// MetaExtensions is the checkpoint metadata key of a run's extensions (a
// JSON array of ExtensionRecord).
const MetaExtensions = "extensions"

// ExtensionRecord is one extension of a run, as kept in its checkpoint
// and training log.
type ExtensionRecord struct {
	AtStep        int     `json:"at_step"`
	MaxSteps      int     `json:"max_steps,omitempty"`
	Epochs        int     `json:"epochs"`
	PreviousTotal int     `json:"previous_total_steps"`
	Total         int     `json:"total_steps"`
	LR            float64 `json:"lr_at_step"`
	Schedule      string  `json:"schedule"`
}

// extendSchedule says how an extended run of settings tc's learning rate
// goes on.
func extendSchedule(tc transformer.TrainConfig) string {
	if tc.Schedule == transformer.ScheduleConstant {
		return "constant, as before"
	}
	return "warm-up/cosine of the new total length, from the current step"
}

// budget applies the job's BudgetRule to the opened new run r.
func (j *Job) budget(r *opening) error {
	n := r.data.Train.Windows()
	tc, err := newBudget(j.Budget, j.Train, n)
	if err != nil || tc == j.Train {
		return err
	}
	j.Train = tc
	r.snaps, err = SnapshotSteps(j.Snapshots, transformer.TotalSteps(tc, n))
	return err
}

// extend applies the job's extension to the checkpoint c of a run
// (nothing without one): its settings, its metadata and, for the torch
// engine, the checkpoint and train config it reads.
func (j *Job) extend(e *Engine, c *transformer.Checkpoint, train, val transformer.Windows) error {
	x := j.Extend
	if x.none() {
		return nil
	}
	if e.Torch() != nil && c.ModelFormat != "" {
		return &OptionError{Option: "engine", Msg: fmt.Sprintf(" %s cannot extend a run of a %s model yet", EngineTorch, c.ModelFormat)}
	}
	n, step := c.TrainWindows, c.State.Step
	st := c.State
	tc, err := extendBudget(j.Dir, c.Train, n, &st, x)
	if err != nil {
		return err
	}
	before, total := transformer.TotalSteps(c.Train, n), transformer.TotalSteps(tc, n)
	rec := ExtensionRecord{AtStep: step, MaxSteps: tc.MaxSteps, Epochs: tc.Epochs, PreviousTotal: before, Total: total,
		LR: transformer.LearningRate(tc.Schedule, step, tc.WarmupSteps, total, tc.LR, tc.MinLR), Schedule: extendSchedule(tc)}
	recs := extensions(c.Meta)
	b, err := json.Marshal(append(recs, rec))
	if err != nil {
		return err
	}
	c.Meta[MetaExtensions] = string(b)
	c.Train, c.State = tc, st
	if err := rewriteTrainConfig(j.Dir, tc, c.Meta); err != nil {
		return err
	}
	if e.Torch() != nil {
		return rewriteCheckpoint(e.Backend(), j.Dir, c, train, val)
	}
	if j.Events != nil {
		j.Events.Log(fmt.Sprintf("extending %s from %d to %d steps (%d epochs) at step %d; learning rate: %s (%.3g now)",
			j.Dir, before, total, tc.Epochs, step, extendSchedule(tc), rec.LR))
	}
	return nil
}

// rewriteCheckpoint writes the extended checkpoint c of a transformer
// back into dir for the torch engine, which reads its settings there: the
// same parameters, moments and state, the new settings and metadata (the
// trainer rebuilt on the backend be).
func rewriteCheckpoint(be backend.Backend, dir string, c *transformer.Checkpoint, train, val transformer.Windows) error {
	tr, err := c.ResumeOn(be, train, val)
	if err != nil {
		return err
	}
	defer tr.Free()
	return tr.SaveCheckpoint(filepath.Join(dir, CheckpointFile), c.Meta)
}

// rewriteTrainConfig writes the extended settings tc and the data's
// metadata into the run's TrainConfigFile, if it has one (its engine
// stays).
func rewriteTrainConfig(dir string, tc transformer.TrainConfig, meta map[string]string) error {
	p := filepath.Join(dir, TrainConfigFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var v map[string]any
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	v["train"], v["data"] = tc, meta
	if b, err = json.MarshalIndent(v, "", "  "); err != nil {
		return err
	}
	return fsutil.WriteFile(p, true, func(w io.Writer) error { _, err := w.Write(append(b, '\n')); return err })
}

// epochsFor is the number of epochs after which a run at state s (per
// steps an epoch on n windows in batches of B) has taken steps steps.
func epochsFor(s transformer.TrainerState, per, n, B, steps int) int {
	left := steps - s.Step
	if s.Index > 0 {
		rem := (n - s.Index + B - 1) / B // the current epoch's steps
		if left <= rem {
			return s.Epoch + 1
		}
		return s.Epoch + 1 + (left-rem+per-1)/per
	}
	return s.Epoch + (left+per-1)/per
}

// extensions are the extension records in a checkpoint's metadata.
func extensions(meta map[string]string) []ExtensionRecord {
	var recs []ExtensionRecord
	if s := meta[MetaExtensions]; s != "" {
		_ = json.Unmarshal([]byte(s), &recs) // written by extend
	}
	return recs
}

// writeLogExtended writes the log es with the extension records of meta,
// each after the entries up to its step.
func writeLogExtended(w io.Writer, es []transformer.LogEntry, meta map[string]string) error {
	recs := extensions(meta)
	i := 0
	for _, r := range recs {
		j := i
		for j < len(es) && es[j].Step <= r.AtStep {
			j++
		}
		if err := WriteLog(w, es[i:j]); err != nil {
			return err
		}
		i = j
		b, err := json.Marshal(map[string]ExtensionRecord{"extended": r})
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return WriteLog(w, es[i:])
}

// EpochsOf is the number of epochs, as the progress bar and the summary
// count them, of step steps in batches of B on n training windows: the
// steps over the steps per epoch (⌈n/B⌉).
func EpochsOf(step, B, n int) float64 {
	if n == 0 || B == 0 {
		return 0
	}
	return float64(step) / float64((n+B-1)/B)
}

// Epochs is the run's length in epochs (EpochsOf), the same on either
// engine and in the progress bar.
func (s *Summary) Epochs() float64 { return EpochsOf(s.Step, s.Train.BatchSize, s.TrainWindows) }

// EndReason says what ended a finished run of tc at step: early stopping,
// the maximum number of steps or the epochs.
func EndReason(stopped bool, tc transformer.TrainConfig, step int) string {
	switch {
	case stopped:
		return "early stopping, patience " + strconv.Itoa(tc.Patience)
	case tc.MaxSteps > 0 && step >= tc.MaxSteps:
		return fmt.Sprintf("max steps %d reached", tc.MaxSteps)
	}
	return fmt.Sprintf("all %d epochs", tc.Epochs)
}

// NoRunError says that Dir holds no run to resume: no checkpoint, and
// DataSet says that it is a data set (it has a manifest).
type NoRunError struct {
	Dir     string
	DataSet bool
}

func (e *NoRunError) Error() string {
	if e.DataSet {
		return fmt.Sprintf("%s is a data set, not a training run", e.Dir)
	}
	return fmt.Sprintf("no run in %s (no %s)", e.Dir, CheckpointFile)
}

// checkRun refuses (*NoRunError) to resume a directory without a
// checkpoint.
func checkRun(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); !errors.Is(err, fs.ErrNotExist) {
		return nil // there, or an error Load reports
	}
	_, err := os.Stat(filepath.Join(dir, dataset.ManifestFile))
	return &NoRunError{Dir: dir, DataSet: err == nil}
}

// NoSpaceError is a run stopped by a full disk: the checkpoint at
// Checkpoint, of step Step, is intact, and the run continues from it once
// space is freed.
type NoSpaceError struct {
	Err        error
	Checkpoint string
	Step       int
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("%v; the checkpoint %s (step %d) is intact", e.Err, e.Checkpoint, e.Step)
}

func (e *NoSpaceError) Unwrap() error { return e.Err }

// noSpace makes err a *NoSpaceError when a disk is full (ENOSPC).
func noSpace(err error, checkpoint string, step int) error {
	if errors.Is(err, syscall.ENOSPC) {
		return &NoSpaceError{Err: err, Checkpoint: checkpoint, Step: step}
	}
	return err
}
