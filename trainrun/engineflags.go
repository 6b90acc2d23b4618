package trainrun

import (
	"flag"

	"github.com/vomc/vomc/transformer/backend"
)

// BackendUsage is the usage of a --backend flag of the Go engine.
const BackendUsage = "compute backend of vomc's engine: cpu (the kernel set of VOMC_KERNELS) or cuda, cuda:N (NVIDIA GPU N through the driver; no CUDA toolkit needed)"

// TorchOnlyFlags are the flags that only the torch engine takes: its own
// (Torch.AddFlags) and the LSTM's width (ModelOptions.AddFlags).
var TorchOnlyFlags = []string{"device", "amp", "compile", "torch-threads", "hidden"}

// EngineResumeFlags are, per engine, the flags of its own that may also be
// given with --resume (the torch engine's device and speed).
var EngineResumeFlags = map[string]map[string]bool{EngineTorch: {"device": true, "amp": true, "compile": true, "torch-threads": true}}

// TorchOnlyFlag is the first of TorchOnlyFlags in given ("": none).
func TorchOnlyFlag(given map[string]bool) string {
	for _, f := range TorchOnlyFlags {
		if given[f] {
			return f
		}
	}
	return ""
}

// AddFlags defines the engine's flags on fs into s: --engine, --backend
// and, into s.Torch (which must be set), the torch engine's.
func (s *Spec) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.Name, "engine", EngineGo, "training engine: go (vomc's CPU engine) or torch (PyTorch, CPU or CUDA)")
	fs.StringVar(&s.Backend, "backend", "cpu", "go engine: "+BackendUsage)
	s.Torch.AddFlags(fs)
}

// OpenBackend is the compute backend of s for models that run on one:
// with need, the engine's (NewEngine: a GPU is opened only then), else
// s.CPU once s is checked (Validate); done releases it. Without need a
// backend other than the CPU would have no effect: an *OptionError.
func (s Spec) OpenBackend(need bool) (be backend.Backend, done func(), err error) {
	if !need {
		if s.Backend != "" && s.Backend != "cpu" {
			return nil, nil, &OptionError{Option: "backend", Value: s.Backend, Msg: " has no effect: none of the methods runs on a backend (tf: and synth: methods do)"}
		}
		return s.CPU, func() {}, s.Validate()
	}
	eng, err := NewEngine(s)
	if err != nil {
		return nil, nil, err
	}
	return eng.Backend(), func() { eng.Close() }, nil
}
