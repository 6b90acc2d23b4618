package transformer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// The weights file is safetensors: an unsigned 64-bit little-endian header
// length n, n bytes of JSON header (padded with spaces to a multiple of 8),
// then the raw little-endian float32 data of every tensor. The header maps
// each tensor name of Config.Layout to {"dtype":"F32","shape":…,
// "data_offsets":[begin,end]} (byte offsets into the data section) and
// "__metadata__" to {"format":"vomc-transformer","config":<Config JSON>}.
// PyTorch's safetensors.torch.load_file reads it.

const safetensorsFormat = "vomc-transformer"

type stTensor struct {
	DType       string `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets [2]int `json:"data_offsets"`
}

// WriteSafetensors writes the model to w in safetensors format.
func (m *Model) WriteSafetensors(w io.Writer) error {
	header := map[string]any{
		"__metadata__": map[string]string{"format": safetensorsFormat, "config": m.Config.String()},
	}
	for _, t := range m.Config.Layout() {
		header[t.Name] = stTensor{DType: "F32", Shape: t.Shape, DataOffsets: [2]int{4 * t.Offset, 4 * (t.Offset + t.Size)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	buf := make([]byte, 8+len(h)+4*len(m.Params))
	binary.LittleEndian.PutUint64(buf, uint64(len(h)))
	copy(buf[8:], h)
	data := buf[8+len(h):]
	for i, v := range m.Params {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	_, err = w.Write(buf)
	return err
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
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, fmt.Errorf("transformer: safetensors header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > 100<<20 {
		return nil, fmt.Errorf("transformer: safetensors header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, fmt.Errorf("transformer: safetensors header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, fmt.Errorf("transformer: safetensors header: %w", err)
	}
	var meta map[string]string
	if err := json.Unmarshal(raw["__metadata__"], &meta); err != nil || meta["format"] != safetensorsFormat {
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
	if len(raw) != len(layout)+1 {
		return nil, fmt.Errorf("transformer: safetensors file has %d tensors, config has %d", len(raw)-1, len(layout))
	}
	np := cfg.NumParams()
	data := make([]byte, 4*np)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("transformer: safetensors data: %w", err)
	}
	flat := make([]float32, np)
	for _, t := range layout {
		var st stTensor
		if err := json.Unmarshal(raw[t.Name], &st); err != nil {
			return nil, fmt.Errorf("transformer: tensor %s: %v", t.Name, err)
		}
		b, e := st.DataOffsets[0], st.DataOffsets[1]
		if st.DType != "F32" || fmt.Sprint(st.Shape) != fmt.Sprint(t.Shape) || e-b != 4*t.Size || b < 0 || e > len(data) {
			return nil, fmt.Errorf("transformer: tensor %s is %s %v at [%d,%d), want F32 %v", t.Name, st.DType, st.Shape, b, e, t.Shape)
		}
		for i := 0; i < t.Size; i++ {
			flat[t.Offset+i] = math.Float32frombits(binary.LittleEndian.Uint32(data[b+4*i:]))
		}
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
