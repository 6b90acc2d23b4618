package trainrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Train runs 'vomc train' as a library call: a new run, or the run in a
// directory continued from its checkpoint, on an engine chosen once by the
// caller (GoEngine or a *Torch) and passed down.

// Model architectures of TrainOptions.Model.Arch.
const (
	ArchTransformer = "transformer"
	ArchLSTM        = "lstm" // the torch engine's LSTM (python/vomc_torch)
)

// Engine is a training engine: GoEngine (vomc's engine, package
// transformer) or *Torch (vomc's PyTorch engine).
type Engine interface {
	// EngineName is EngineGo or EngineTorch.
	EngineName() string
	// start trains the new run s to its end.
	start(ctx context.Context, s *newRun, o TrainOptions) (*Summary, error)
	// resume trains the run r, continued from its checkpoint, to its end.
	resume(ctx context.Context, r *resumedRun, o TrainOptions) (*Summary, error)
}

// GoEngine is vomc's own training engine (package transformer) on the
// compute backend Backend, chosen by the caller (nil: each model makes a
// CPU backend of its own, with kernels.Default).
type GoEngine struct {
	Backend backend.Backend
}

// EngineName is EngineGo.
func (GoEngine) EngineName() string { return EngineGo }

// EngineName is EngineTorch.
func (t *Torch) EngineName() string { return EngineTorch }

// NewEngine is the engine of a name: GoEngine on the backend be for
// EngineGo, t for EngineTorch; other names are refused (CheckEngine).
func NewEngine(name string, be backend.Backend, t *Torch) (Engine, error) {
	if err := CheckEngine(name); err != nil {
		return nil, err
	}
	if name == EngineTorch {
		return t, nil
	}
	return GoEngine{Backend: be}, nil
}

// ModelOptions describe the model of a new run.
type ModelOptions struct {
	// Arch is ArchTransformer ("" too) or ArchLSTM (the torch engine only).
	Arch string
	// Layers, Heads ("8": every layer; "2,1": one count per layer), Embed,
	// FeedForward, LayerNorm, Activation and Positional make the
	// transformer.Config (an LSTM: Layers, Embed).
	Layers                 int
	Heads                  string
	Embed                  int
	FeedForward, LayerNorm bool
	Activation, Positional string
	// Hidden is the LSTM's width (0: Embed).
	Hidden int
}

// hidden is the LSTM's width.
func (m ModelOptions) hidden() int {
	if m.Hidden == 0 {
		return m.Embed
	}
	return m.Hidden
}

// TrainOptions are the settings of a training run.
type TrainOptions struct {
	// Dir is the run directory.
	Dir string
	// Resume continues the run in Dir from its checkpoint; Data.Data and
	// Data.Val, when set, are new paths of its data sets (their checksums
	// must match), AllowUnverified accepts a checkpoint without a
	// checksum (Go engine), and the other settings but CheckpointEvery
	// are the checkpoint's.
	Resume, AllowUnverified bool
	// Force clears a run held in Dir, once every check has passed.
	Force bool
	// Data are the data sets of a new run (Data.SplitSeed is Train.Seed).
	Data  DataSpec
	Model ModelOptions
	Train transformer.TrainConfig
	// CheckpointEvery is the checkpoint interval in steps (0: epoch ends).
	CheckpointEvery int
	// Snapshots is the snapshot specification (SnapshotSteps; "": none).
	Snapshots string
	// Out receives what the run is (size, memory) or where it resumes
	// (nil: nothing); Progress the Go engine's progress bar (nil: none).
	Out, Progress io.Writer
	// OnStep, when set, is called after every step of the Go engine.
	OnStep func(step int)
}

// Summary is the outcome of a finished run.
type Summary struct {
	// Engine is EngineGo or EngineTorch.
	Engine string
	// Step and Epoch are where the run ended; Stopped says that early
	// stopping ended it; Patience and MaxSteps are its settings.
	Step, Epoch        int
	Stopped            bool
	Patience, MaxSteps int
	// Elapsed is the training time of all sessions.
	Elapsed time.Duration
	// BestVal is the best validation loss (+Inf: no validation).
	BestVal float64
}

// OptionError is a bad setting of a new run: Option names it (a field of
// TrainOptions in lower case, or a TrainConfig field's JSON name; "" when
// Msg says it all) and Msg follows the name ("lr" + ": learning rate
// NaN"). Msg names the options Also, if any, by %s verbs. Err is the
// underlying error, if any.
type OptionError struct {
	Option, Msg string
	Also        []string
	Err         error
}

func (e *OptionError) Error() string { return e.Text(func(o string) string { return o }) }

// Text is the message with every option it names written as name(option).
func (e *OptionError) Text(name func(option string) string) string {
	msg := e.Msg
	if len(e.Also) > 0 {
		args := make([]any, len(e.Also))
		for i, o := range e.Also {
			args[i] = name(o)
		}
		msg = fmt.Sprintf(msg, args...)
	}
	if e.Option == "" {
		return msg
	}
	return name(e.Option) + msg
}

func (e *OptionError) Unwrap() error { return e.Err }

// DivergedError is a Go-engine run whose training diverged: the last good
// checkpoint, written at step Step, stays at Checkpoint; LR is the run's
// peak learning rate.
type DivergedError struct {
	Err        *transformer.DivergedError
	LR         float64
	Checkpoint string
	Step       int
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("%v; the last good checkpoint is %s (step %d)", e.Err, e.Checkpoint, e.Step)
}

func (e *DivergedError) Unwrap() error { return e.Err }

// ModelFormatError says that the run in Dir trains a model (Format,
// Config) that only the torch engine trains.
type ModelFormatError struct {
	Dir, Format, Config string
}

func (e *ModelFormatError) Error() string {
	return fmt.Sprintf("the run in %s trains a %s model (%s): resume it with the torch engine", e.Dir, e.Format, e.Config)
}

// Train trains a run with eng to its end: a new run in o.Dir (its
// settings and data checked before anything is written; Force then clears
// an old run) or, with o.Resume, the run in o.Dir from its checkpoint.
// When ctx ends the checkpoint is saved and an *InterruptedError returned;
// a Go-engine divergence returns a *DivergedError.
func Train(ctx context.Context, eng Engine, o TrainOptions) (*Summary, error) {
	if o.CheckpointEvery < 0 {
		return nil, &OptionError{Option: "checkpoint_every", Msg: fmt.Sprintf(" %d is negative", o.CheckpointEvery)}
	}
	if o.Resume {
		r, err := loadRun(o)
		if err != nil {
			return nil, err
		}
		return eng.resume(ctx, r, o)
	}
	s, err := o.newRun()
	if err != nil {
		return nil, err
	}
	return eng.start(ctx, s, o)
}

// resumedRun is a run to continue: its checkpoint, data and snapshot
// steps.
type resumedRun struct {
	c          *transformer.Checkpoint
	train, val transformer.Windows
	snaps      []int
}

// loadRun reads the checkpoint of the run in o.Dir and its data (Load).
func loadRun(o TrainOptions) (*resumedRun, error) {
	c, train, val, err := Load(o.Dir, o.Data.Data, o.Data.Val, o.AllowUnverified)
	if err != nil {
		return nil, err
	}
	snaps, err := SnapshotSteps(c.Meta[MetaSnapshots], transformer.TotalSteps(c.Train, c.TrainWindows))
	if err != nil {
		return nil, err
	}
	return &resumedRun{c, train, val, snaps}, nil
}

// newRun is a new run, checked: the model, the data's metadata and
// windows, the snapshot steps.
type newRun struct {
	cfg        transformer.Config
	meta       map[string]string
	train, val transformer.Windows
	snaps      []int
}

// newRun checks the settings of a new run and reads its data; only when
// all is well does Force clear an old run in the directory.
func (o TrainOptions) newRun() (*newRun, error) {
	m := o.Model
	if err := o.checkSettings(); err != nil {
		return nil, err
	}
	if err := CheckDir(o.Dir, false); err != nil && !o.Force {
		return nil, err // refused early
	}
	hs, err := ParseHeads(m.Heads, m.Layers)
	if err != nil {
		return nil, err
	}
	if err := o.checkData(); err != nil {
		return nil, err
	}
	spec := o.Data
	spec.SplitSeed = o.Train.Seed
	train, val, A, meta, err := spec.Load()
	if errors.Is(err, ErrWindowLength) {
		return nil, &OptionError{Msg: err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	cfg := transformer.Config{Layers: m.Layers, Heads: hs, Embed: m.Embed, Context: len(train.Window(0)), Alphabet: A,
		FeedForward: m.FeedForward, LayerNorm: m.LayerNorm, Activation: m.Activation, Positional: m.Positional}
	if err := cfg.Validate(); err != nil {
		return nil, &OptionError{Msg: err.Error(), Err: err}
	}
	snaps, err := SnapshotSteps(o.Snapshots, transformer.TotalSteps(o.Train, train.Windows()))
	if err != nil {
		return nil, err
	}
	if err := CheckDir(o.Dir, o.Force); err != nil { // every check passed: Force may clear the old run
		return nil, err
	}
	if o.Snapshots != "" {
		meta[MetaSnapshots] = o.Snapshots
	}
	return &newRun{cfg: cfg, meta: meta, train: train, val: val, snaps: snaps}, nil
}

// checkSettings checks the data directory, the training settings and the
// model's size and architecture.
func (o TrainOptions) checkSettings() error {
	m := o.Model
	if o.Data.Data == "" {
		return &OptionError{Option: "data", Msg: " DIR is required"}
	}
	if err := o.Train.Validate(); err != nil {
		var fe *transformer.TrainConfigError
		if errors.As(err, &fe) {
			return &OptionError{Option: fe.Field, Msg: ": " + fe.Msg, Err: err}
		}
		return err
	}
	switch {
	case m.Layers < 0 || m.Layers > transformer.MaxLayers:
		return &OptionError{Option: "layers", Msg: fmt.Sprintf(" %d outside 0..%d", m.Layers, transformer.MaxLayers)}
	case m.Embed < 1 || m.Embed > transformer.MaxEmbed:
		return &OptionError{Option: "embed", Msg: fmt.Sprintf(" %d outside 1..%d", m.Embed, transformer.MaxEmbed)}
	case m.Arch != "" && m.Arch != ArchTransformer && m.Arch != ArchLSTM:
		return &OptionError{Option: "arch", Msg: fmt.Sprintf(" %q: want %s or %s", m.Arch, ArchTransformer, ArchLSTM)}
	case m.Arch == ArchLSTM && (m.Layers < 1 || m.hidden() < 1):
		return &OptionError{Option: "arch", Msg: fmt.Sprintf(" %s needs %%s ≥ 1 and %%s ≥ 1 (got %d, %d)", ArchLSTM, m.Layers, m.hidden()), Also: []string{"layers", "hidden"}}
	}
	return nil
}

// checkData checks the validation fraction and the window length.
func (o TrainOptions) checkData() error {
	if f := o.Data.ValFrac; !(f >= 0 && f < 1) {
		return &OptionError{Option: "val_frac", Msg: fmt.Sprintf(" %g outside [0, 1)", f)}
	}
	if o.Data.N < 0 {
		return &OptionError{Option: "N", Msg: fmt.Sprintf(" %d is negative", o.Data.N)}
	}
	return nil
}

// ParseHeads reads the attention heads of L layers: "8" (every layer) or
// "2,1" (one count per layer).
func ParseHeads(s string, L int) ([]int, error) {
	var hs []int
	for _, p := range strings.Split(s, ",") {
		h, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || h < 1 {
			return nil, &OptionError{Option: "heads", Msg: fmt.Sprintf(" %q: want positive integers", s)}
		}
		hs = append(hs, h)
	}
	if len(hs) == 1 {
		for len(hs) < L {
			hs = append(hs, hs[0])
		}
		hs = hs[:L]
	}
	if len(hs) != L {
		return nil, &OptionError{Option: "heads", Msg: fmt.Sprintf(" %q gives %d head counts for %d layers", s, len(hs), L)}
	}
	return hs, nil
}

// runOptions are the Go engine's driver settings of a run: its log and
// curve, the progress bar, o.OnStep.
func (o TrainOptions) runOptions(meta map[string]string, snaps []int) Options {
	return Options{Dir: o.Dir, Meta: meta, CheckpointEvery: o.CheckpointEvery, Log: true, Progress: o.Progress,
		Label: "steps", OnStep: o.OnStep, Snapshots: snaps}
}

// start begins the new run s with the Go engine and trains it.
func (e GoEngine) start(ctx context.Context, s *newRun, o TrainOptions) (*Summary, error) {
	if o.Model.Arch == ArchLSTM {
		return nil, errors.New("trainrun: the Go engine trains transformers only")
	}
	tc := o.Train
	if err := CheckMemoryOn(e.Backend, s.cfg, tc.BatchSize, s.train); err != nil {
		return nil, err
	}
	files, err := ConfigFiles(s.cfg, tc, s.meta, EngineGo)
	if err != nil {
		return nil, err
	}
	tr, err := NewTrainer(e.Backend, s.cfg, tc, tc.Seed, s.train, s.val)
	if err != nil {
		return nil, err
	}
	r, err := Start(tr, o.runOptions(s.meta, s.snaps), files...)
	if err != nil {
		return nil, err
	}
	if o.Out != nil {
		nv := 0
		if s.val != nil {
			nv = s.val.Windows()
		}
		fmt.Fprintf(o.Out, "%s: %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
			tr.Model.Name(), s.cfg.NumParams(), s.train.Windows(), nv, s.cfg.Context, tr.TotalSteps())
		fmt.Fprintf(o.Out, "training memory ≈ %s\n", sysmem.GiB(MemoryBytes(s.cfg, tc.BatchSize, s.train)))
	}
	return trainGo(ctx, r)
}

// resume continues the run rr with the Go engine and trains it.
func (e GoEngine) resume(ctx context.Context, rr *resumedRun, o TrainOptions) (*Summary, error) {
	c := rr.c
	if c.ModelFormat != "" {
		return nil, &ModelFormatError{Dir: o.Dir, Format: c.ModelFormat, Config: c.ModelConfig}
	}
	if err := CheckMemoryOn(e.Backend, c.Config, c.Train.BatchSize, rr.train); err != nil {
		return nil, err
	}
	tr, err := c.ResumeOn(e.Backend, rr.train, rr.val)
	if err != nil {
		return nil, err
	}
	r, err := Resume(tr, o.runOptions(c.Meta, rr.snaps))
	if err != nil {
		return nil, err
	}
	if o.Out != nil {
		SayResume(o.Out, o.Dir, tr)
	}
	return trainGo(ctx, r)
}

// SayResume writes where the run in dir, resumed by tr, continues (or that
// it had finished).
func SayResume[A any, M transformer.Trainable[A]](w io.Writer, dir string, tr *transformer.TrainerOf[A, M]) {
	if tr.Done() {
		fmt.Fprintf(w, "the run in %s had finished at step %d; writing its outputs again\n", dir, tr.Step)
	} else {
		fmt.Fprintf(w, "resuming %s at step %d (epoch %d, window %d of %d)\n", dir, tr.Step, tr.Epoch+1, tr.Index, tr.Train.Windows())
	}
}

// RunToEnd is r.Run with a divergence returned as a *DivergedError.
func RunToEnd[A any, M transformer.Trainable[A]](ctx context.Context, r *Run[A, M]) error {
	err := r.Run(ctx)
	var de *transformer.DivergedError
	if errors.As(err, &de) {
		// The checkpoint on disk is from before the divergence; it is not
		// overwritten.
		return &DivergedError{Err: de, LR: r.Trainer.Cfg.LR, Checkpoint: r.CheckpointPath(), Step: r.LastCheckpoint}
	}
	return err
}

// trainGo runs r (the Go engine) to its end and writes the model.
func trainGo(ctx context.Context, r *Run[*transformer.Activations, *transformer.Model]) (*Summary, error) {
	if err := RunToEnd(ctx, r); err != nil {
		return nil, err
	}
	tr := r.Trainer
	if err := fsutil.WriteFile(filepath.Join(r.Dir, ModelFile), true, tr.Model.WriteSafetensors); err != nil {
		return nil, err
	}
	return &Summary{Engine: EngineGo, Step: tr.Step, Epoch: tr.Epoch, Stopped: tr.Stopped, Patience: tr.Cfg.Patience,
		MaxSteps: tr.Cfg.MaxSteps, Elapsed: tr.ElapsedTotal(), BestVal: tr.BestVal}, nil
}

// start prepares the new run s for the torch engine and trains it.
func (t *Torch) start(ctx context.Context, s *newRun, o TrainOptions) (*Summary, error) {
	tc := o.Train
	if o.Model.Arch == ArchLSTM {
		m := o.Model
		conf := map[string]any{"arch": ArchLSTM, "alphabet": s.cfg.Alphabet, "context": s.cfg.Context,
			"embed": m.Embed, "hidden": m.hidden(), "layers": m.Layers}
		if err := StartTorchModule(o.Dir, conf, tc, s.meta); err != nil {
			return nil, err
		}
	} else if err := StartTorch(o.Dir, s.cfg, tc, tc.Seed, s.meta, s.train, s.val); err != nil {
		return nil, err
	}
	return t.trainRun(ctx, TorchRun{Dir: o.Dir, CheckpointEvery: o.CheckpointEvery, Snapshots: s.snaps})
}

// resume continues the run r with the torch engine.
func (t *Torch) resume(ctx context.Context, r *resumedRun, o TrainOptions) (*Summary, error) {
	return t.trainRun(ctx, TorchRun{Dir: o.Dir, CheckpointEvery: o.CheckpointEvery, Data: o.Data.Data, Val: o.Data.Val, Snapshots: r.snaps})
}

// trainRun trains r with the engine to its end (Train) and sums it up.
func (t *Torch) trainRun(ctx context.Context, r TorchRun) (*Summary, error) {
	c, err := t.Train(ctx, r)
	if err != nil {
		return nil, err
	}
	s := c.State
	return &Summary{Engine: EngineTorch, Step: s.Step, Epoch: s.Epoch, Stopped: s.Stopped, Patience: c.Train.Patience,
		MaxSteps: c.Train.MaxSteps, Elapsed: s.Elapsed, BestVal: s.BestVal}, nil
}

// HasValidation says whether the run had a validation set.
func (s *Summary) HasValidation() bool { return !math.IsInf(s.BestVal, 1) }
