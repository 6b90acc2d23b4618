package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/trainrun"
)

// Training runs of synth models go through the run driver of package
// trainrun, as the transformer's do: checkpoints every CheckpointEvery
// steps, at epoch ends and on cancellation, the training log and curve,
// and runs resumed bit-identically from their checkpoint.

// Run is a synth model's training run in its directory.
type Run = trainrun.Run[*Activations, *Model]

// SummaryFile is the summary (RunSummary) that TrainDir writes beside the
// model (trainrun.ModelFile) in a run directory.
const SummaryFile = "synth.json"

// StartRun begins a run in opts.Dir (trainrun.Start) of a fresh model of
// architecture cfg trained with tc on train and val (NewTrainer, on the
// backend be; nil: the CPU backend).
func StartRun(be backend.Backend, cfg Config, tc transformer.TrainConfig, train, val transformer.Windows, opts trainrun.Options) (*Run, error) {
	tr, err := NewTrainer(be, cfg, train, val, tc)
	if err != nil {
		return nil, err
	}
	return trainrun.Start(tr, opts)
}

// ResumeRun continues the run in opts.Dir (trainrun.Resume) from its
// checkpoint c on the windows train and val (Resume, on the backend be).
func ResumeRun(be backend.Backend, c *transformer.Checkpoint, train, val transformer.Windows, opts trainrun.Options) (*Run, error) {
	tr, err := Resume(be, c, train, val)
	if err != nil {
		return nil, err
	}
	return trainrun.Resume(tr, opts)
}

// OpenRun continues the run in opts.Dir from its checkpoint when the
// directory holds one (ResumeRun; the checkpoint's model and training
// settings, not cfg and tc, which the caller keeps the same for a
// directory) and otherwise starts it (StartRun); resumed says which.
func OpenRun(be backend.Backend, cfg Config, tc transformer.TrainConfig, train, val transformer.Windows, opts trainrun.Options) (r *Run, resumed bool, err error) {
	path := opts.CheckpointPath()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		r, err := StartRun(be, cfg, tc, train, val, opts)
		return r, false, err
	} else if err != nil {
		return nil, false, err
	}
	c, err := transformer.LoadCheckpoint(path)
	if err != nil {
		return nil, false, err
	}
	r, err = ResumeRun(be, c, train, val, opts)
	return r, true, err
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
	// Force, which removes that run's files.
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
	// Backend is the backend of the model (nil: the CPU backend).
	Backend backend.Backend
	// Out, if set, receives a line once the run is started or resumed,
	// before any training step: what is trained on which windows, or
	// where the run resumes (or that it had finished).
	Out io.Writer
	// Progress receives a progress bar of the steps (nil: none).
	Progress io.Writer
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
// afresh or resumed from its checkpoint (see DirOptions), to its end: the
// directory receives the checkpoint (trainrun.CheckpointFile), the
// training log and curve, the model (trainrun.ModelFile) and its summary
// (SummaryFile). When ctx ends, the checkpoint is saved and the error is a
// *trainrun.InterruptedError; a divergence (*trainrun.DivergedError)
// leaves the last good checkpoint. Resuming a run and training it to its
// end gives exactly the parameters and losses of an uninterrupted run.
func TrainDir(ctx context.Context, o DirOptions) (*DirResult, error) {
	if o.CheckpointEvery < 0 {
		return nil, fmt.Errorf("synth: checkpoint interval %d is negative", o.CheckpointEvery)
	}
	opts := trainrun.Options{Dir: o.Dir, CheckpointEvery: o.CheckpointEvery, Log: true, Progress: o.Progress, Label: "steps", OnStep: o.OnStep}
	var r *Run
	var err error
	if o.Resume {
		r, err = resumeDir(o, opts)
	} else {
		r, err = startDir(o, opts)
	}
	if err != nil {
		return nil, err
	}
	if o.Out != nil {
		sayStart(o.Out, r, o.Resume)
	}
	res := &DirResult{Run: r}
	if err := trainrun.RunToEnd(ctx, r); err != nil {
		return res, err
	}
	return res, finishDir(res)
}

// resumeDir resumes the run in o.Dir from its checkpoint and its data.
func resumeDir(o DirOptions, opts trainrun.Options) (*Run, error) {
	c, train, val, err := trainrun.Load(o.Dir, o.Data.Data, o.Data.Val, false)
	if err != nil {
		return nil, err
	}
	opts.Meta = c.Meta
	return ResumeRun(o.Backend, c, train, val, opts)
}

// startDir starts a new run in o.Dir on the data o.Data describes.
func startDir(o DirOptions, opts trainrun.Options) (*Run, error) {
	if o.Data.MaxWindows < 0 {
		return nil, fmt.Errorf("synth: a negative number of training windows (%d)", o.Data.MaxWindows)
	}
	if err := trainrun.CheckDir(o.Dir, o.Force); err != nil {
		return nil, err
	}
	spec := o.Data
	spec.N = 0
	train, val, A, meta, err := spec.Load()
	if err != nil {
		return nil, err
	}
	cfg := o.Model
	cfg.A = A
	if cfg.D == 0 {
		cfg.D = max(trainrun.MaxDepth(train), 1)
	}
	opts.Meta = meta
	return StartRun(o.Backend, cfg, o.Train, train, val, opts)
}

// sayStart writes to w what r trains, or where it resumes.
func sayStart(w io.Writer, r *Run, resumed bool) {
	tr := r.Trainer
	if resumed {
		trainrun.SayResume(w, r.Dir, tr)
		return
	}
	c, nv := tr.Model.Config, 0
	if tr.Val != nil {
		nv = tr.Val.Windows()
	}
	fmt.Fprintf(w, "%s: D=%d, %d features, %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
		Label(c.Variant), c.D, c.Features(), tr.Model.NumParams(), tr.Train.Windows(), nv, len(tr.Train.Window(0)), tr.TotalSteps())
}

// finishDir writes the model and its summary of the finished run.
func finishDir(res *DirResult) error {
	r := res.Run
	m := Finish(r.Trainer)
	if err := m.Save(filepath.Join(r.Dir, trainrun.ModelFile)); err != nil {
		return err
	}
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
