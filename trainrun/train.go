package trainrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/transformer"
)

// Model architectures of ModelOptions.Arch.
const (
	ArchTransformer = "transformer"
	ArchLSTM        = "lstm" // the torch engine's LSTM (python/vomc_torch)
	// ArchModule is the form of any other PyTorch module: MODULE:FACTORY,
	// MODULE a .py file or an importable module name (IsModuleArch).
	ArchModule = "MODULE:FACTORY"
)

// IsModuleArch reports an architecture of the form MODULE:FACTORY (the
// torch engine's custom modules: python/vomc_torch/arch.py).
func IsModuleArch(arch string) bool { return strings.Contains(arch, ":") }

// ModelOptions describe the model of a new run of 'vomc train' (a Model:
// Job.Model).
type ModelOptions struct {
	// Arch is ArchTransformer ("" too), or ArchLSTM or MODULE:FACTORY
	// (ArchModule; the torch engine only).
	Arch string
	// Layers, Heads ("8": every layer; "2,1": one count per layer), Embed,
	// FeedForward, LayerNorm, Activation and Positional make the
	// transformer.Config (an LSTM or a custom module: Layers, Embed and
	// Hidden, in its config as "layers", "embed" and "hidden").
	Layers                 int
	Heads                  string
	Embed                  int
	FeedForward, LayerNorm bool
	Activation, Positional string
	// Hidden is the LSTM's (or a custom module's) width (0: Embed).
	Hidden int
}

// hidden is the LSTM's width.
func (m ModelOptions) hidden() int {
	if m.Hidden == 0 {
		return m.Embed
	}
	return m.Hidden
}

// OptionError is a bad setting of a new run (vomc's one option-error
// type, opterr.Error): Option names it (a field of Job or of
// its model in lower case, or a TrainConfig field's JSON name; "" when Msg says it all),
// Value is the value given, if shown, and Msg follows ("lr" + ": learning
// rate NaN"), naming the options Also, if any, by %s verbs. Err is the
// underlying error, if any.
type OptionError = opterr.Error

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

// ModelOptions is a Model too: the model of 'vomc train', a Transformer,
// or an LSTM of the torch engine.

func (m ModelOptions) check(e *Engine) error {
	switch {
	case m.Layers < 0 || m.Layers > transformer.MaxLayers:
		return &OptionError{Option: "layers", Msg: fmt.Sprintf(" %d outside 0..%d", m.Layers, transformer.MaxLayers)}
	case m.Embed < 1 || m.Embed > transformer.MaxEmbed:
		return &OptionError{Option: "embed", Msg: fmt.Sprintf(" %d outside 1..%d", m.Embed, transformer.MaxEmbed)}
	case m.Arch != "" && m.Arch != ArchTransformer && m.Arch != ArchLSTM && !IsModuleArch(m.Arch):
		return &OptionError{Option: "arch", Msg: fmt.Sprintf(" %q: want %s, %s or %s (a .py file or a module name, a colon, its factory function)", m.Arch, ArchTransformer, ArchLSTM, ArchModule)}
	case m.Arch == ArchLSTM && (m.Layers < 1 || m.hidden() < 1):
		return &OptionError{Option: "arch", Msg: fmt.Sprintf(" %s needs %%s ≥ 1 and %%s ≥ 1 (got %d, %d)", ArchLSTM, m.Layers, m.hidden()), Also: []string{"layers", "hidden"}}
	case m.torchOnly() && e.Torch() == nil:
		return &OptionError{Option: "arch", Msg: fmt.Sprintf(" %q needs %%s %s (the Go engine trains transformers only)", m.Arch, EngineTorch), Also: []string{"engine"}}
	case m.Hidden != 0 && !m.torchOnly():
		return &OptionError{Option: "hidden", Msg: " is the width of %s " + ArchLSTM + " or " + ArchModule, Also: []string{"arch"}}
	}
	_, err := ParseHeads(m.Heads, m.Layers)
	return err
}

// torchOnly reports an architecture that only the torch engine trains.
func (m ModelOptions) torchOnly() bool { return m.Arch == ArchLSTM || IsModuleArch(m.Arch) }

func (m ModelOptions) prepare(e *Engine, d RunData) (Model, error) {
	if m.torchOnly() {
		return torchModule{map[string]any{"arch": m.Arch, "embed": m.Embed, "hidden": m.hidden(), "layers": m.Layers}}.prepare(e, d)
	}
	hs, err := ParseHeads(m.Heads, m.Layers)
	if err != nil {
		return nil, err
	}
	cfg := transformer.Config{Layers: m.Layers, Heads: hs, Embed: m.Embed, FeedForward: m.FeedForward, LayerNorm: m.LayerNorm,
		Activation: m.Activation, Positional: m.Positional}
	return Transformer{Config: cfg}.prepare(e, d)
}

func (m ModelOptions) start(*Engine, *opening) (session, error) {
	return nil, errors.New("trainrun: the model was not prepared")
}

// resume continues the run on the torch engine whatever its model, or a
// transformer's on the Go engine.
func (m ModelOptions) resume(e *Engine, r *opening, c *transformer.Checkpoint) (session, error) {
	if t := e.Torch(); t != nil {
		return newTorchSession(e, r, c), nil
	}
	return Transformer{}.resume(e, r, c)
}
