package trainrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cuda"
)

// The engine is chosen once, at the top of a command: the command line
// (--engine, --backend and the torch flags) or a study's configuration
// (reproduce's "engine") names it in a Spec, NewEngine makes the Engine,
// and every training run below — 'vomc train', 'vomc synth', every
// training stage of 'vomc reproduce' — runs on that value (Engine.Train),
// as do the models that are evaluated on the Go engine's backend.

// Engine names: the Go engine (package transformer on a backend) and
// vomc's PyTorch engine (python/vomc_torch, driven by Torch).
const (
	EngineGo    = "go"
	EngineTorch = "torch"
)

// CheckEngine refuses an engine name other than EngineGo and EngineTorch.
func CheckEngine(name string) error {
	if name != EngineGo && name != EngineTorch {
		return fmt.Errorf("engine %q: want %q or %q", name, EngineGo, EngineTorch)
	}
	return nil
}

// Spec names an engine and its settings.
type Spec struct {
	// Name is EngineGo ("" too) or EngineTorch.
	Name string
	// Backend is the Go engine's compute backend: "cpu" ("" too), "cuda"
	// or "cuda:N" (NVIDIA GPU N through the driver). The torch engine
	// takes none (its device is Torch.Device).
	Backend string
	// CPU is the backend of "cpu", chosen by the caller (e.g.
	// cpu.New(kernels.Default())). It is also the backend of the models
	// that only the Go engine trains (synth's TF 2-0), and the one vomc
	// reads the torch engine's model files onto, when the engine is torch.
	// NewEngine refuses a Spec without one (transformer.ErrNoBackend) unless
	// Backend names a GPU.
	CPU backend.Backend
	// Torch holds the torch engine's settings (nil: the defaults).
	Torch *Torch
}

// ForRun is s for continuing the run in dir: without a Name, the engine
// that trains it (RunEngine).
func (s Spec) ForRun(dir string) Spec {
	if s.Name == "" {
		s.Name = RunEngine(dir)
	}
	return s
}

// name is the engine's name, EngineGo for "".
func (s Spec) name() string {
	if s.Name == "" {
		return EngineGo
	}
	return s.Name
}

// Validate checks the names and the settings without opening anything:
// a bad engine or backend name, a backend for the torch engine and bad
// torch settings are *OptionErrors (options "engine", "backend" and, for
// the torch settings, none).
func (s Spec) Validate() error {
	if err := CheckEngine(s.name()); err != nil {
		return &OptionError{Option: "engine", Msg: strings.TrimPrefix(err.Error(), "engine"), Err: err}
	}
	if _, _, err := ParseBackend(s.Backend); err != nil {
		return err
	}
	if s.name() != EngineTorch {
		return nil
	}
	if s.Backend != "" && s.Backend != "cpu" {
		return &OptionError{Option: "backend", Msg: " is the go engine's; the torch engine's device is %s", Also: []string{"device"}}
	}
	if s.Torch != nil {
		if err := s.Torch.Validate(); err != nil {
			return &OptionError{Msg: err.Error(), Err: err}
		}
	}
	return nil
}

// ParseBackend reads a backend name: cpu ("" too), or cuda[:N] (device N,
// default 0). A bad name is an *OptionError of option "backend".
func ParseBackend(name string) (gpu bool, device int, err error) {
	switch {
	case name == "" || name == "cpu":
		return false, 0, nil
	case name == "cuda":
		return true, 0, nil
	case strings.HasPrefix(name, "cuda:"):
		v, err := strconv.Atoi(strings.TrimPrefix(name, "cuda:"))
		if err != nil || v < 0 {
			return false, 0, &OptionError{Option: "backend", Msg: fmt.Sprintf(" %q: want cuda:N with N a device number", name)}
		}
		return true, v, nil
	}
	return false, 0, &OptionError{Option: "backend", Msg: fmt.Sprintf(" %q: want cpu, cuda or cuda:N", name)}
}

// BackendError is a compute backend that could not be opened.
type BackendError struct {
	Name string
	Err  error
}

func (e *BackendError) Error() string { return fmt.Sprintf("backend %s: %v", e.Name, e.Err) }

func (e *BackendError) Unwrap() error { return e.Err }

// Engine is a training engine made by NewEngine: the Go engine on its
// backend, or the torch engine (whose runs of models only the Go engine
// trains use the Go backend). Its zero value and nil are the Go engine
// without a backend: Train refuses to run on it (transformer.ErrNoBackend).
type Engine struct {
	name  string
	be    backend.Backend
	own   bool // be was opened by NewEngine: Close closes it
	torch *Torch
}

// NewEngine makes the engine s names (Validate), opening a GPU backend
// (a *BackendError when that fails). The torch engine's interpreter and
// device are checked by Check (Train calls it before anything is
// written). Close releases what NewEngine opened.
func NewEngine(s Spec) (*Engine, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{name: s.name(), be: s.CPU}
	gpu, device, _ := ParseBackend(s.Backend)
	if s.CPU == nil && !(gpu && e.name == EngineGo) {
		return nil, transformer.ErrNoBackend
	}
	if e.name == EngineTorch {
		e.torch = s.Torch
		if e.torch == nil {
			e.torch = &Torch{}
		}
		return e, nil
	}
	if gpu {
		be, err := cuda.Open(device)
		if err != nil {
			return nil, &BackendError{Name: s.Backend, Err: err}
		}
		e.be, e.own = be, true
	}
	return e, nil
}

// GoEngine is the Go engine on the backend be, for callers that have
// chosen the backend (nil: Train refuses, transformer.ErrNoBackend).
func GoEngine(be backend.Backend) *Engine { return &Engine{name: EngineGo, be: be} }

// TorchEngine is the torch engine t, with be the backend of the models
// only the Go engine trains and of reading the engine's model files (nil:
// Train refuses, transformer.ErrNoBackend).
func TorchEngine(t *Torch, be backend.Backend) *Engine {
	return &Engine{name: EngineTorch, be: be, torch: t}
}

// Name is EngineGo or EngineTorch.
func (e *Engine) Name() string {
	if e == nil || e.name == "" {
		return EngineGo
	}
	return e.name
}

// Backend is the Go engine's compute backend: that of every model the Go
// engine trains or builds (nil: none was given).
func (e *Engine) Backend() backend.Backend {
	if e == nil {
		return nil
	}
	return e.be
}

// Torch is the torch engine (nil for the Go engine).
func (e *Engine) Torch() *Torch {
	if e == nil {
		return nil
	}
	return e.torch
}

// Check checks the machine for the engine, once: the torch engine's
// interpreter, torch, numpy and device (Torch.Check); nothing for the Go
// engine.
func (e *Engine) Check() error {
	if t := e.Torch(); t != nil {
		_, err := t.Check()
		return err
	}
	return nil
}

// Flags are the torch engine's settings as vomc's flags (none for the Go
// engine), e.g. for the training tasks of a Slurm submission.
func (e *Engine) Flags() []string {
	if t := e.Torch(); t != nil {
		return t.Flags()
	}
	return nil
}

// Close releases the backend NewEngine opened (none: nil).
func (e *Engine) Close() error {
	if e == nil || !e.own {
		return nil
	}
	e.own = false
	return e.be.Close()
}

// RunEngine reads the engine recorded in a run directory's
// train_config.json (EngineGo when none is).
func RunEngine(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, TrainConfigFile))
	if err != nil {
		return EngineGo
	}
	var v struct {
		Engine string `json:"engine"`
	}
	if json.Unmarshal(b, &v) != nil || v.Engine == "" {
		return EngineGo
	}
	return v.Engine
}
