package methods

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/trainrun"
)

// buildTorch runs a model of the PyTorch engine (torch:path=RUN[:name=LABEL]):
// RUN/model.safetensors (or RUN itself when it is a file) of any
// architecture `vomc train --engine torch` trains — a module of
// --arch lstm or MODULE:FACTORY, whose module is found from the source the
// run recorded, or a transformer — predicts the evaluated windows
// d.Windows on d.Torch (trainrun.Torch.PredictWindows: the engine's own
// predict, as `vomc predict` runs it), and its distributions are evaluated
// as an npy method's (NewNPYPredictor). Its name is the run's --arch and
// the directory's base name, "gru:make@gru", or LABEL.
func buildTorch(a *args, d Defaults) (Built, error) {
	var b Built
	path := a.str("path", "") // required (ParseSpec), present (List.Check)
	file := modelFile(path)
	if _, err := os.Stat(file); err != nil && file != path {
		if _, cerr := os.Stat(filepath.Join(path, "checkpoint.safetensors")); cerr == nil {
			return b, fmt.Errorf("methods: %q: %s has a checkpoint but no model.safetensors: %w", a.text, path, ErrUnfinished)
		}
	}
	arch, err := torchArch(file)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	switch {
	case d.Torch == nil:
		return b, fmt.Errorf("methods: %q: no torch engine was given to run the model on (torch methods run in vomc eval, reproduce's extra_methods and the Python library)", a.text)
	case len(d.Windows) == 0:
		return b, fmt.Errorf("methods: %q: no evaluated windows to predict (a torch method predicts the windows of the data set or file evaluated)", a.text)
	}
	rows, err := d.Torch.PredictWindows(context.Background(), path, d.Windows, d.A)
	if err != nil {
		return b, fmt.Errorf("methods: %q: %w", a.text, err)
	}
	base := filepath.Base(filepath.Clean(path))
	if file == path {
		base = strings.TrimSuffix(base, ".safetensors")
		if base == "model" {
			base = filepath.Base(filepath.Dir(filepath.Clean(path)))
		}
	}
	N := len(d.Windows[0])
	p, err := NewNPYPredictor(a.str("name", arch+"@"+base), rows, []int{len(d.Windows), N, d.A}, d.Windows, d.A)
	if err != nil {
		return b, fmt.Errorf("methods: %q: the engine's predictions: %w", a.text, err)
	}
	b.Predictor = p
	b.Note = fmt.Sprintf("%s (--arch %s): run by the torch engine on %d windows × %d positions (float32 distributions)", file, arch, len(d.Windows), N)
	return b, nil
}

// torchArch is the architecture of a model file of the torch engine: the
// "arch" of a torch module's config (trainrun.TorchModuleFormat: lstm or
// MODULE:FACTORY), or "transformer" for vomc's transformer.
func torchArch(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, err := safetensors.ReadHeader(f, 0, -1)
	if err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	if h.Meta["format"] != trainrun.TorchModuleFormat {
		return "transformer", nil // the engine checks the file
	}
	var c struct {
		Arch string `json:"arch"`
	}
	if err := json.Unmarshal([]byte(h.Meta["config"]), &c); err != nil || c.Arch == "" {
		return "", fmt.Errorf("%s: a torch module's file without its arch in the config metadata", file)
	}
	return c.Arch, nil
}

// torchMemory is torch's estimate in vomc's process: the distributions
// as float64s and as the engine's float32 file, read (windows × N × A ×
// (8+4+4) bytes), and the windows written for the engine. The engine's
// own process (Python, torch, the model, its float32 output) is not
// counted.
func torchMemory(_ Spec, w Workload) int64 {
	return int64(w.Windows) * int64(w.N) * (int64(w.A)*16 + 1)
}
