package perf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// Logits are a trained model's logits on one window ('vomc bench logits',
// compared with another implementation by scripts/pytorch_bench.py).
type Logits struct {
	Config transformer.Config `json:"config"`
	Input  []int              `json:"input"`
	Logits [][]float32        `json:"logits"` // (T, A)
}

// InputError is an input that the model cannot take: an option error
// (vomc's one type, opterr.Error) of option "input".
type InputError = opterr.Error

// ModelLogits runs the model in path (a run directory or a .safetensors
// file), loaded on the backend be (nil: transformer.ErrNoBackend), on the
// comma-separated symbols of input (at most the model's context).
func ModelLogits(be backend.Backend, path, input string) (*Logits, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, trainrun.ModelFile)
	}
	m, err := transformer.LoadSafetensorsOn(be, path)
	if err != nil {
		return nil, err
	}
	A := m.Config.Alphabet
	var x []byte
	for _, f := range strings.Split(input, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 || v >= A {
			return nil, &InputError{Option: "input", Msg: fmt.Sprintf(": %q is not a symbol of 0..%d", f, A-1)}
		}
		x = append(x, byte(v))
	}
	T := len(x)
	if T > m.Config.Context {
		return nil, &InputError{Option: "input", Msg: fmt.Sprintf(" has %d symbols, the model's context is N=%d", T, m.Config.Context)}
	}
	acts := m.NewActivations(1, T, false)
	m.Forward(acts, x, 1, T)
	lg := acts.Logits()
	r := &Logits{Config: m.Config, Input: make([]int, T), Logits: make([][]float32, T)}
	for t := range r.Logits {
		r.Logits[t] = lg[t*A : (t+1)*A]
		r.Input[t] = int(x[t])
	}
	return r, nil
}

// JSON is the logits as one line of JSON: {"config": …, "input": […],
// "logits": [[…], …]}.
func (l *Logits) JSON() ([]byte, error) {
	b, err := json.Marshal(l)
	return append(b, '\n'), err
}
