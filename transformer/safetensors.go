package transformer

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer/backend"
)

// The weights file is safetensors: an unsigned 64-bit little-endian header
// length n, n bytes of JSON header (padded with spaces to a multiple of 8),
// then the raw little-endian float32 data of every tensor. The header maps
// each tensor name of Config.Layout to {"dtype":"F32","shape":…,
// "data_offsets":[begin,end]} (byte offsets into the data section) and
// "__metadata__" to {"format":"vomc-transformer","config":<Config JSON>}.
// PyTorch's safetensors.torch.load_file reads it.

const safetensorsFormat = "vomc-transformer"

// WriteSafetensors writes the model to w in safetensors format.
func (m *Model) WriteSafetensors(w io.Writer) error {
	layout := m.Config.Layout()
	flat := m.HostParams()
	ts := make([]safetensors.Tensor, len(layout))
	for i, t := range layout {
		ts[i] = safetensors.Tensor{Name: t.Name, DType: "F32", Shape: t.Shape,
			Data: safetensors.Float32Bytes(flat[t.Offset : t.Offset+t.Size])}
	}
	meta := map[string]string{"format": safetensorsFormat, "config": m.Config.String()}
	return safetensors.Write(w, meta, ts)
}

// SaveSafetensors writes the model to path atomically (fsutil.WriteAtomic:
// a synced temporary in the same directory renamed over path, and the
// directory synced), so a crash leaves either the old file or the new one.
func (m *Model) SaveSafetensors(path string) error {
	return fsutil.WriteAtomic(path, true, m.WriteSafetensors)
}

// ReadSafetensorsOn reads a model written by WriteSafetensors onto the
// backend be (nil: ErrNoBackend; see readModel); the size of r's contents
// is not known, so a truncated input is detected only when its data runs
// out.
func ReadSafetensorsOn(be backend.Backend, r io.Reader) (*Model, error) {
	return readModel(be, r, -1, "")
}

// LoadSafetensorsOn reads the model in path onto the backend be (nil:
// ErrNoBackend; see ReadSafetensorsOn), checking the header against the
// file's size before reading any data. Errors name the file.
func LoadSafetensorsOn(be backend.Backend, path string) (*Model, error) {
	return fsutil.ReadSized(path, func(r io.Reader, size int64) (*Model, error) { return readModel(be, r, size, path) })
}

// ErrCheckpointFile is returned (wrapped) by LoadSafetensorsOn and
// ReadSafetensorsOn for a training checkpoint (checkpoint.safetensors), which
// holds a model's parameters beside the optimiser's state:
// LoadCheckpointModelOn reads the model from it.
var ErrCheckpointFile = errors.New("the file is a training checkpoint")

// LoadCheckpointModelOn reads the model of the training checkpoint in path
// onto the backend be (nil: ErrNoBackend): its current parameters, those
// the run would continue from (not BestParams), so that an unfinished run
// can be evaluated where it stands; the step is the checkpoint's. With a
// constant learning-rate schedule that model is a point on the run's
// training curve whatever the run's later length.
func LoadCheckpointModelOn(be backend.Backend, path string) (m *Model, step int, err error) {
	if be == nil {
		return nil, 0, ErrNoBackend
	}
	c, err := LoadCheckpoint(path)
	if err != nil {
		return nil, 0, err
	}
	if c.ModelFormat != "" {
		return nil, 0, fmt.Errorf("transformer: %s is the checkpoint of a %s model, not a transformer", path, c.ModelFormat)
	}
	m, err = FromParamsOn(be, c.Config, c.Params)
	if err != nil {
		return nil, 0, fmt.Errorf("transformer: %s: %w", path, err)
	}
	return m, c.State.Step, nil
}

// maxModelHeader bounds a model file's header: its config (≤ MaxLayers
// head counts) and ≤ 12·MaxLayers + 8 tensor entries (≈ 1.2 MB) fit.
const maxModelHeader = 4 << 20

// readModel reads a model file of size bytes (< 0: unknown) named name
// (for warnings): first the header, whose config is validated (bounded
// sizes) and whose tensors must be exactly the config's layout — names,
// F32, shapes —, and the model with the activations of one forward pass
// over its whole context must fit in memory; only then the data
// (verified against the file's checksum). A file without a checksum (one
// written before vomc recorded checksums) is loaded with a warning
// through safetensors.Warnf.
func readModel(be backend.Backend, r io.Reader, size int64, name string) (*Model, error) {
	if be == nil {
		return nil, ErrNoBackend
	}
	h, cfg, err := readModelHeader(r, size)
	if err != nil {
		return nil, err
	}
	if n := cfg.numTensors(); len(h.Tensors) != n {
		return nil, fmt.Errorf("transformer: the file has %d tensors, its config (L=%d) has %d", len(h.Tensors), cfg.Layers, n)
	}
	layout := cfg.Layout()
	byName := make(map[string]int, len(h.Tensors))
	for i, t := range h.Tensors {
		byName[t.Name] = i
	}
	for _, t := range layout {
		i, ok := byName[t.Name]
		if !ok {
			return nil, fmt.Errorf("transformer: the file has no tensor %s", t.Name)
		}
		st := h.Tensors[i]
		if st.DType != "F32" || !slices.Equal(st.Shape, t.Shape) {
			return nil, fmt.Errorf("transformer: tensor %s is %s %v, want F32 %v", t.Name, st.DType, st.Shape, t.Shape)
		}
	}
	// The file's data, its decoded copy and the flat vector (3 × 4P
	// bytes) besides the model itself (with a sinusoidal table of N·E
	// floats, which the file does not hold) and one window's activations.
	P := cfg.NumParams()
	if err := sysmem.Check(12*float64(P)+cfg.InferenceBytes(1, cfg.Context, KernelsOf(be)),
		fmt.Sprintf("loading a model of %d parameters, context N=%d, E=%d", P, cfg.Context, cfg.Embed)); err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	ts, err := h.ReadData(r)
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	if h.Checksum == "" {
		safetensors.Warnf("%s has no checksum (written by an earlier vomc): its integrity cannot be verified; saving it again (vomc train, or Model.SaveSafetensors) adds one", nameOr(name, "the model file"))
	}
	flat := make([]float32, P)
	for _, t := range layout {
		copy(flat[t.Offset:t.Offset+t.Size], safetensors.Float32s(ts[byName[t.Name]].Data))
	}
	return FromParamsOn(be, cfg, flat)
}

// readModelHeader reads a model file's header and its validated config.
func readModelHeader(r io.Reader, size int64) (*safetensors.Header, Config, error) {
	h, err := safetensors.ReadHeader(r, maxModelHeader, size)
	if err != nil {
		return nil, Config{}, fmt.Errorf("transformer: %w", err)
	}
	if f := h.Meta["format"]; f == checkpointFormat {
		return nil, Config{}, fmt.Errorf("transformer: %w, not a model file (format %q): LoadCheckpointModelOn reads its parameters", ErrCheckpointFile, f)
	} else if f != safetensorsFormat {
		return nil, Config{}, fmt.Errorf("transformer: not a %s safetensors file (metadata format %q)", safetensorsFormat, f)
	}
	cfg, err := ParseConfig([]byte(h.Meta["config"]))
	return h, cfg, err
}

// nameOr is name, or def when name is empty.
func nameOr(name, def string) string {
	if name == "" {
		return def
	}
	return name
}
