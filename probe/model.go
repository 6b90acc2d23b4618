package probe

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
)

// streamer is a model whose residual stream is read: Streams read-outs of
// Width values per position, over windows of up to Context symbols.
type streamer interface {
	Name() string
	Streams() []string
	Width() int
	Context() int
	Alphabet() int
	// run runs the model on B windows of T symbols (inputs, row-major) and
	// fills dst[s] with rows (b·T + t) of stream s, len(rows)·Width values.
	run(inputs []byte, B, T int, rows []int, dst [][]float32) error
	// fresh is the same architecture with the initial parameters of seed;
	// initAbout says which initialisation that is.
	fresh(seed uint64) (streamer, error)
	initAbout(seed uint64) string
	Free() error
}

// ModelFile returns the model file of path: path/model.safetensors for a
// directory (a run of 'vomc train' or 'vomc synth'), else path itself.
func ModelFile(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return filepath.Join(path, "model.safetensors")
	}
	return path
}

// loadStreamer reads a transformer (either engine's model file) or a
// synth model, told apart by the file's metadata format, onto be.
func loadStreamer(be backend.Backend, path string) (streamer, error) {
	file := ModelFile(path)
	h, err := fsutil.ReadSized(file, func(r io.Reader, size int64) (*safetensors.Header, error) {
		return safetensors.ReadHeader(r, safetensors.DefaultMaxHeader, size)
	})
	if err != nil {
		return nil, fmt.Errorf("probe: model %s: %w", file, err)
	}
	if h.Meta["format"] == synth.FileFormat {
		m, err := synth.LoadOn(be, file)
		if err != nil {
			return nil, fmt.Errorf("probe: %w", err)
		}
		return &synthStreams{m: m}, nil
	}
	m, err := transformer.LoadSafetensorsOn(be, file)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	return &tfStreams{m: m}, nil
}

// tfStreams reads a transformer's residual stream
// (transformer.Model.ResidualStreams, on forward-only buffers).
type tfStreams struct {
	m  *transformer.Model
	in *transformer.Inference
}

func (t *tfStreams) Name() string { return t.m.Name() }

func (t *tfStreams) Streams() []string {
	names := []string{"embedding"}
	for l := 1; l < t.m.Config.Streams(); l++ {
		names = append(names, fmt.Sprintf("layer %d", l))
	}
	return names
}

func (t *tfStreams) Width() int    { return t.m.Config.Embed }
func (t *tfStreams) Context() int  { return t.m.Config.Context }
func (t *tfStreams) Alphabet() int { return t.m.Config.Alphabet }

func (t *tfStreams) run(inputs []byte, B, T int, rows []int, dst [][]float32) error {
	if t.in == nil || t.in.Rows < B*T {
		if t.in != nil {
			t.in.Free()
		}
		var err error
		if t.in, err = t.m.AllocInference(B * T); err != nil {
			return err
		}
	}
	return t.m.ResidualStreams(t.in, inputs, B, T, rows, dst)
}

func (t *tfStreams) fresh(seed uint64) (streamer, error) {
	m, err := transformer.NewOn(t.m.Backend(), t.m.Config, seed)
	if err != nil {
		return nil, fmt.Errorf("probe: the model at initialisation: %w", err)
	}
	return &tfStreams{m: m}, nil
}

func (t *tfStreams) initAbout(seed uint64) string {
	return fmt.Sprintf("the Go engine's GPT-2-style initialisation of the same architecture (transformer.NewOn, seed %d: weights N(0, 0.02²), residual output projections N(0, (0.02/√(2L))²), biases 0, LayerNorm gains 1); "+
		"a torch-engine model's own initialisation draws from the same distribution with torch's generator (vomc_torch init_gpt2), so for it this is another draw from its initial distribution, not its initial parameters", seed)
}

func (t *tfStreams) Free() error {
	if t.in != nil {
		t.in.Free()
		t.in = nil
	}
	return t.m.Free()
}

// synthStreams reads a synth model's stream (synth.Activations.Residual).
type synthStreams struct {
	m   *synth.Model
	a   *synth.Activations
	all []float32 // one whole stream (scratch)
}

func (s *synthStreams) Name() string      { return s.m.Name() }
func (s *synthStreams) Streams() []string { return []string{"a (features)", "h (after FF)"} }
func (s *synthStreams) Width() int        { return s.m.Config.Width() }
func (s *synthStreams) Context() int      { return s.m.Config.Context }
func (s *synthStreams) Alphabet() int     { return s.m.Config.A }

func (s *synthStreams) run(inputs []byte, B, T int, rows []int, dst [][]float32) error {
	if s.a == nil || s.a.MaxB < B || s.a.MaxT < T {
		if s.a != nil {
			s.a.Free()
		}
		var err error
		if s.a, err = s.m.AllocActivations(B, T, false); err != nil {
			return err
		}
	}
	s.m.Forward(s.a, inputs, B, T)
	W := s.Width()
	if cap(s.all) < B*T*W {
		s.all = make([]float32, B*T*W)
	}
	all := s.all[:B*T*W]
	for k := range dst {
		if _, err := s.a.Residual(k, all); err != nil {
			return err
		}
		for i, r := range rows {
			copy(dst[k][i*W:(i+1)*W], all[r*W:(r+1)*W])
		}
	}
	return nil
}

func (s *synthStreams) fresh(seed uint64) (streamer, error) {
	m, err := synth.NewOn(s.m.Backend(), s.m.Config, seed)
	if err != nil {
		return nil, fmt.Errorf("probe: the model at initialisation: %w", err)
	}
	return &synthStreams{m: m}, nil
}

func (s *synthStreams) initAbout(seed uint64) string {
	return fmt.Sprintf("synth.NewOn's initialisation of the same model (seed %d)", seed)
}

func (s *synthStreams) Free() error {
	if s.a != nil {
		s.a.Free()
		s.a = nil
	}
	return nil
}
