package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Training runs of synth models go through the run driver of package
// trainrun (Engine.Train), as the transformer's do: RunModel describes a
// synth model to it. Checkpoints every CheckpointEvery steps, at epoch
// ends and on cancellation, the training log and curve, and runs resumed
// bit-identically from their checkpoint.

// Run is a synth model's training run in its directory.
type Run = trainrun.Run[*Activations, *Model]

// SummaryFile is the summary (RunSummary) that TrainDir writes beside the
// model (trainrun.ModelFile) in a run directory.
const SummaryFile = "synth.json"

// RunModel is a synth model of architecture cfg for the run driver
// (trainrun.Engine.Train; always on the Go engine's backend): a new run
// trains a fresh model (NewTrainer; cfg.A 0 is the data's alphabet size,
// cfg.D 0 its largest tree depth, at least 1), a checkpoint resumes
// (Resume), and a finished run's model (Finish, with the best parameters)
// is saved as trainrun.ModelFile.
func RunModel(cfg Config) trainrun.GoModel[*Activations, *Model] {
	return trainrun.GoModel[*Activations, *Model]{
		New: func(be backend.Backend, tc transformer.TrainConfig, d trainrun.RunData) (*Trainer, error) {
			c := cfg
			if c.A == 0 {
				c.A = d.A
			}
			if c.D == 0 {
				c.D = max(trainrun.MaxDepth(d.Train), 1)
			}
			return NewTrainer(be, c, d.Train, d.Val, tc)
		},
		Resume: func(be backend.Backend, c *transformer.Checkpoint, d trainrun.RunData) (*Trainer, error) {
			return Resume(be, c, d.Train, d.Val)
		},
		Describe: func(w io.Writer, tr *Trainer) {
			c, nv := tr.Model.Config, 0
			if tr.Val != nil {
				nv = tr.Val.Windows()
			}
			fmt.Fprintf(w, "%s: D=%d, %d features, %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
				Label(c.Variant), c.D, c.Features(), tr.Model.NumParams(), tr.Train.Windows(), nv, len(tr.Train.Window(0)), tr.TotalSteps())
		},
		Finish: func(dir string, tr *Trainer) error {
			return Finish(tr).Save(filepath.Join(dir, trainrun.ModelFile))
		},
	}
}

// DirOptions are the settings of TrainDir.
type DirOptions struct {
	// Dir is the run directory.
	Dir string
	// Resume continues the run in Dir from its checkpoint: the model,
	// the training settings and the data's split are the checkpoint's;
	// Data.Data and Data.Val, when set, replace the paths of its data
	// sets (whose checksums must match). Otherwise a new run starts;
	// a directory holding a run is refused (*trainrun.HeldError) unless
	// Force, which removes that run's files once every check has passed.
	Resume, Force bool
	// Data describes a new run's data (trainrun.DataSpec); N is ignored
	// (the data set's windows are used as they are).
	Data trainrun.DataSpec
	// Model is a new run's architecture: A is the data set's alphabet
	// size, D 0 its largest tree depth (at least 1), Context 0 the
	// window length.
	Model Config
	// Train is a new run's training configuration (Train.Seed also seeds
	// the initialisation).
	Train transformer.TrainConfig
	// CheckpointEvery is the interval of checkpoints in steps (0: only at
	// epoch ends).
	CheckpointEvery int
	// EpochsGiven says that Train.Epochs was asked for: a Train.MaxSteps
	// the epochs would cut short is then refused; otherwise the epochs are
	// raised to reach it (trainrun.BudgetOf).
	EpochsGiven bool
	// Events, if set, receives a log line once the run is started or
	// resumed, before any training step (what is trained on which
	// windows, or where the run resumes, or that it had finished), and
	// the progress of the steps (trainrun.Job.Events).
	Events events.Sink
	// OnStep, if set, is called after every step.
	OnStep func(step int)
}

// DirResult is the outcome of TrainDir.
type DirResult struct {
	// Run is the run (set as soon as it was started or resumed, also
	// when TrainDir then fails: its LastCheckpoint is the step of the
	// checkpoint on disk).
	Run *Run
	// Model is the trained model (Finish), Summary its SummaryFile.
	Model   *Model
	Summary map[string]any
	// Files are the files of the run directory.
	Files []string
}

// TrainDir trains a synth model in the run directory o.Dir, started
// afresh or resumed from its checkpoint (see DirOptions), to its end with
// the run driver (e.Train, on e's Go backend): the directory receives the
// checkpoint (trainrun.CheckpointFile), the training log and curve, the
// model (trainrun.ModelFile) and its summary (SummaryFile). When ctx ends,
// the checkpoint is saved and the error is a *trainrun.InterruptedError; a
// divergence (*trainrun.DivergedError) leaves the last good checkpoint.
// Resuming a run and training it to its end gives exactly the parameters
// and losses of an uninterrupted run.
func TrainDir(ctx context.Context, e *trainrun.Engine, o DirOptions) (*DirResult, error) {
	if o.Data.MaxWindows < 0 {
		return nil, fmt.Errorf("synth: a negative number of training windows (%d)", o.Data.MaxWindows)
	}
	res := &DirResult{}
	m := RunModel(o.Model)
	m.Opened = func(r *Run) { res.Run = r }
	j := trainrun.Job{Dir: o.Dir, Mode: trainrun.ModeNew, Force: o.Force, Data: o.Data, Model: m, Train: o.Train,
		CheckpointEvery: o.CheckpointEvery, Events: o.Events, OnStep: o.OnStep, Budget: trainrun.BudgetOf(o.EpochsGiven)}
	if o.Resume {
		j.Mode = trainrun.ModeResume
	}
	j.Data.N = 0
	if _, err := e.Train(ctx, j); err != nil {
		if res.Run == nil {
			return nil, err
		}
		return res, err
	}
	return res, finishDir(res)
}

// finishDir writes the summary of the finished run, whose model the run
// driver has saved.
func finishDir(res *DirResult) error {
	r := res.Run
	m := r.Trainer.Model // Finish has set its Info
	info := RunSummary(m, r.Trainer, r.Meta["data"], r.Meta["val"])
	ij, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteBytes(filepath.Join(r.Dir, SummaryFile), true, append(ij, '\n')); err != nil {
		return err
	}
	res.Model, res.Summary = m, info
	res.Files = []string{trainrun.ModelFile, trainrun.LogFile, SummaryFile, trainrun.CheckpointFile, trainrun.CurvePNG, trainrun.CurveSVG}
	return nil
}
