package transformer

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/safetensors"
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

// SaveSafetensors writes the model to path atomically: to a temporary file
// in the same directory, synced, then renamed over path (and the directory
// synced), so a crash leaves either the old file or the new one.
func (m *Model) SaveSafetensors(path string) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = m.WriteSafetensors(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ReadSafetensors reads a model written by WriteSafetensors: the config
// from the metadata, then every tensor of its layout, checking dtype,
// shape and offsets.
func ReadSafetensors(r io.Reader) (*Model, error) {
	meta, ts, err := safetensors.Read(r, 100<<20)
	if err != nil {
		return nil, fmt.Errorf("transformer: %w", err)
	}
	if meta["format"] != safetensorsFormat {
		return nil, fmt.Errorf("transformer: not a %s safetensors file", safetensorsFormat)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(meta["config"]), &cfg); err != nil {
		return nil, fmt.Errorf("transformer: config in safetensors metadata: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	layout := cfg.Layout()
	if len(ts) != len(layout) {
		return nil, fmt.Errorf("transformer: safetensors file has %d tensors, config has %d", len(ts), len(layout))
	}
	byName := make(map[string]safetensors.Tensor, len(ts))
	for _, t := range ts {
		byName[t.Name] = t
	}
	flat := make([]float32, cfg.NumParams())
	for _, t := range layout {
		st, ok := byName[t.Name]
		if !ok {
			return nil, fmt.Errorf("transformer: safetensors file has no tensor %s", t.Name)
		}
		if st.DType != "F32" || fmt.Sprint(st.Shape) != fmt.Sprint(t.Shape) {
			return nil, fmt.Errorf("transformer: tensor %s is %s %v, want F32 %v", t.Name, st.DType, st.Shape, t.Shape)
		}
		copy(flat[t.Offset:t.Offset+t.Size], safetensors.Float32s(st.Data))
	}
	return FromParams(cfg, flat)
}

// LoadSafetensors reads the model in path (see ReadSafetensors).
func LoadSafetensors(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSafetensors(f)
}
