package trainrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// The models of Engine.Train: Transformer (either engine), torchModule
// (another PyTorch module: 'vomc train --arch lstm'), and GoModel (any
// model of the Go engine).

// Transformer is a transformer of configuration Config, trained by either
// engine from the same initial parameters (transformer.InitParams with the
// run's Train.Seed). For a new run, Config.Context and Config.Alphabet 0
// are the data's window length and alphabet size. Its run directory holds
// config.json and train_config.json (ConfigFiles) besides the checkpoint,
// log, curve and model.safetensors — unless NoConfigFiles, for a run on
// the Go engine that keeps its configuration elsewhere (the training
// stages of a study record theirs in the stage; the torch engine reads
// the files, so its runs always have them).
type Transformer struct {
	Config        transformer.Config
	NoConfigFiles bool
}

func (m Transformer) check(*Engine) error { return nil }

func (m Transformer) prepare(_ *Engine, d RunData) (Model, error) {
	if m.Config.Context == 0 {
		m.Config.Context = len(d.Train.Window(0))
	}
	if m.Config.Alphabet == 0 {
		m.Config.Alphabet = d.A
	}
	if err := m.Config.Validate(); err != nil {
		return nil, &OptionError{Msg: err.Error(), Err: err}
	}
	return m, nil
}

func (m Transformer) start(e *Engine, r *opening) (session, error) {
	cfg, tc := m.Config, r.job.Train
	if t := e.Torch(); t != nil {
		if err := startTorch(r.job.Dir, cfg, tc, tc.Seed, r.data.Meta, r.data.Train, r.data.Val); err != nil {
			return nil, err
		}
		return newTorchSession(e, r, nil), nil
	}
	if err := CheckMemoryOn(e.Backend(), cfg, tc.BatchSize, r.data.Train); err != nil {
		return nil, err
	}
	return m.goModel().start(e, r)
}

func (m Transformer) resume(e *Engine, r *opening, c *transformer.Checkpoint) (session, error) {
	if t := e.Torch(); t != nil {
		return newTorchSession(e, r, c), nil
	}
	if c.ModelFormat != "" {
		return nil, &ModelFormatError{Dir: r.job.Dir, Format: c.ModelFormat, Config: c.ModelConfig}
	}
	if err := CheckMemoryOn(e.Backend(), c.Config, c.Train.BatchSize, r.data.Train); err != nil {
		return nil, err
	}
	return m.goModel().resume(e, r, c)
}

// goModel is the transformer as a model of the Go engine.
func (m Transformer) goModel() GoModel[*transformer.Activations, *transformer.Model] {
	cfg := m.Config
	return GoModel[*transformer.Activations, *transformer.Model]{
		New: func(be backend.Backend, tc transformer.TrainConfig, d RunData) (*transformer.Trainer, error) {
			return NewTrainer(be, cfg, tc, tc.Seed, d.Train, d.Val)
		},
		Resume: func(be backend.Backend, c *transformer.Checkpoint, d RunData) (*transformer.Trainer, error) {
			return c.ResumeOn(be, d.Train, d.Val)
		},
		Files: func(tc transformer.TrainConfig, d RunData) ([]File, error) {
			if m.NoConfigFiles {
				return nil, nil
			}
			return ConfigFiles(cfg, tc, d.Meta, EngineGo)
		},
		Describe: func(w io.Writer, tr *transformer.Trainer) {
			nv := 0
			if tr.Val != nil {
				nv = tr.Val.Windows()
			}
			fmt.Fprintf(w, "%s: %d parameters; %d training and %d validation windows of %d symbols; ≤ %d steps\n",
				tr.Model.Name(), cfg.NumParams(), tr.Train.Windows(), nv, cfg.Context, tr.TotalSteps())
			fmt.Fprintf(w, "training memory ≈ %s\n", sysmem.GiB(MemoryBytes(tr.Model.Backend(), cfg, tr.Cfg.BatchSize, tr.Train)))
		},
		Finish: func(dir string, tr *transformer.Trainer) error {
			return fsutil.WriteFile(filepath.Join(dir, ModelFile), true, tr.Model.WriteSafetensors)
		},
	}
}

// torchModule is another model of the torch engine: its JSON
// configuration (with "arch", see python/vomc_torch/model.py), completed
// with the data's "alphabet" and "context", and for a custom module
// (MODULE:FACTORY) with where its module is ("arch_source": ArchSource).
type torchModule struct {
	config map[string]any
}

func (m torchModule) check(e *Engine) error {
	if e.Torch() == nil {
		return errors.New("trainrun: the Go engine trains transformers only")
	}
	return nil
}

func (m torchModule) prepare(e *Engine, d RunData) (Model, error) {
	conf := map[string]any{"alphabet": d.A, "context": len(d.Train.Window(0))}
	for k, v := range m.config {
		conf[k] = v
	}
	if err := m.check(e); err != nil {
		return nil, err
	}
	if arch, _ := conf["arch"].(string); IsModuleArch(arch) && conf["arch_source"] == nil {
		src, err := e.Torch().ResolveArch(context.Background(), arch)
		if err != nil {
			return nil, err
		}
		conf["arch_source"] = src
	}
	return torchModule{conf}, nil
}

func (m torchModule) start(e *Engine, r *opening) (session, error) {
	if err := startTorchModule(r.job.Dir, m.config, r.job.Train, r.data.Meta); err != nil {
		return nil, err
	}
	return newTorchSession(e, r, nil), nil
}

func (m torchModule) resume(e *Engine, r *opening, c *transformer.Checkpoint) (session, error) {
	if err := m.check(e); err != nil {
		return nil, err
	}
	return newTorchSession(e, r, c), nil
}

// GoModel is a model that the Go engine trains (a transformer.Trainable
// whose activations are of type A), given by how its trainer is made:
// synth's TF 2-0 models use it. It trains on the Go engine's backend
// whichever engine was chosen (the torch engine trains transformers and
// its own modules only).
type GoModel[A any, M transformer.Trainable[A]] struct {
	// New makes the trainer of a new run with tc (tc.Seed also seeds the
	// initialisation) on d, on the backend be.
	New func(be backend.Backend, tc transformer.TrainConfig, d RunData) (*transformer.TrainerOf[A, M], error)
	// Resume rebuilds the trainer of the checkpoint c on d, on be.
	Resume func(be backend.Backend, c *transformer.Checkpoint, d RunData) (*transformer.TrainerOf[A, M], error)
	// Files, if set, are written into a new run's directory.
	Files func(tc transformer.TrainConfig, d RunData) ([]File, error)
	// Describe, if set, says what a new run trains (log lines of
	// Job.Events).
	Describe func(w io.Writer, tr *transformer.TrainerOf[A, M])
	// Finish, if set, writes what a finished run leaves in dir besides
	// its checkpoint, log and curve (the model file).
	Finish func(dir string, tr *transformer.TrainerOf[A, M]) error
	// Opened, if set, receives the run once it is started or resumed
	// (also when its training then fails).
	Opened func(r *Run[A, M])
}

func (g GoModel[A, M]) check(*Engine) error { return nil }

// goOnly marks a model whose runs never need the torch engine.
func (g GoModel[A, M]) goOnly() {}

func (g GoModel[A, M]) prepare(*Engine, RunData) (Model, error) { return g, nil }

func (g GoModel[A, M]) start(e *Engine, r *opening) (session, error) {
	var files []File
	if g.Files != nil {
		var err error
		if files, err = g.Files(r.job.Train, r.data); err != nil {
			return nil, err
		}
	}
	tr, err := g.New(e.Backend(), r.job.Train, r.data)
	if err != nil {
		return nil, err
	}
	run, err := Start(tr, r.options(), files...)
	if err != nil {
		return nil, err
	}
	if ev := r.job.Events; ev != nil && g.Describe != nil {
		g.Describe(events.LogWriter(ev), tr)
	}
	return g.session(r, run, 0), nil
}

func (g GoModel[A, M]) resume(e *Engine, r *opening, c *transformer.Checkpoint) (session, error) {
	tr, err := g.Resume(e.Backend(), c, r.data)
	if err != nil {
		return nil, err
	}
	run, err := Resume(tr, r.options())
	if err != nil {
		return nil, err
	}
	if ev := r.job.Events; ev != nil {
		SayResume(events.LogWriter(ev), r.job.Dir, tr)
	}
	return g.session(r, run, tr.Elapsed), nil
}

// session is the opened run on the Go engine.
func (g GoModel[A, M]) session(r *opening, run *Run[A, M], earlier time.Duration) session {
	if st := r.job.Status; st != nil {
		tr := run.Trainer
		run.Status = func(step int, loss float64) string { return st(step, tr.TotalSteps(), loss) }
	}
	if g.Opened != nil {
		g.Opened(run)
	}
	return &goSession[A, M]{r: run, finish: g.Finish, earlier: earlier}
}

// goSession is a run on the Go engine.
type goSession[A any, M transformer.Trainable[A]] struct {
	r       *Run[A, M]
	finish  func(dir string, tr *transformer.TrainerOf[A, M]) error
	earlier time.Duration
}

func (s *goSession[A, M]) at() (int, time.Duration) { return s.r.Trainer.Step, s.earlier }

func (s *goSession[A, M]) engine() string { return EngineGo }

func (s *goSession[A, M]) run(ctx context.Context) (*Summary, error) {
	if err := RunToEnd(ctx, s.r); err != nil {
		return nil, err
	}
	tr := s.r.Trainer
	if s.finish != nil {
		if err := s.finish(s.r.Dir, tr); err != nil {
			return nil, err
		}
	}
	name := ""
	if n, ok := any(tr.Model).(interface{ Name() string }); ok {
		name = n.Name()
	}
	return &Summary{Engine: EngineGo, Name: name, Step: tr.Step, Epoch: tr.Epoch, Stopped: tr.Stopped, Train: tr.Cfg,
		Elapsed: tr.ElapsedTotal(), BestVal: tr.BestVal, History: tr.History, TrainWindows: tr.Train.Windows()}, nil
}

// torchSession is a run on the torch engine, resumed from c0 (nil: started
// by startTorch or startTorchModule).
type torchSession struct {
	t    *Torch
	spec torchRun
	c0   *transformer.Checkpoint
	// windows is the number of training windows vomc read (the engine
	// must have trained on as many).
	windows int
}

// newTorchSession is the run r on e's torch engine: a new run's data is
// the engine's to read from the run directory; a resumed run's new data
// paths are passed on.
func newTorchSession(e *Engine, r *opening, c0 *transformer.Checkpoint) *torchSession {
	j, t := r.job, e.Torch()
	tr := torchRun{Dir: j.Dir, CheckpointEvery: j.CheckpointEvery, Snapshots: r.snaps, Output: j.TorchOutput, Host: e.Backend()}
	switch {
	case c0 != nil && j.Mode == ModeResume:
		tr.Data, tr.Val = j.Data.Data, j.Data.Val
	case c0 != nil:
		// the data where it is now (a study's output directory may have
		// moved since the run started; its checksum is checked)
		tr.Data = r.data.Meta["data"]
	}
	return &torchSession{t: t, spec: tr, c0: c0, windows: r.data.Train.Windows()}
}

func (s *torchSession) at() (int, time.Duration) {
	if s.c0 == nil {
		return 0, 0
	}
	return s.c0.State.Step, s.c0.State.Elapsed
}

func (s *torchSession) engine() string { return EngineTorch }

func (s *torchSession) run(ctx context.Context) (*Summary, error) {
	c, err := s.t.train(ctx, s.spec)
	if err != nil {
		return nil, err
	}
	if c.TrainWindows != s.windows {
		return nil, fmt.Errorf("%s: the torch engine trained on %d windows, the split has %d", s.spec.Dir, c.TrainWindows, s.windows)
	}
	name := c.ModelFormat
	if name == "" {
		name = (&transformer.Model{Config: c.Config}).Name()
	}
	st := c.State
	return &Summary{Engine: EngineTorch, Name: name, Step: st.Step, Epoch: st.Epoch, Stopped: st.Stopped, Train: c.Train,
		Elapsed: st.Elapsed, BestVal: st.BestVal, History: c.History, TrainWindows: c.TrainWindows}, nil
}
