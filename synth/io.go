package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/vomc/vomc/fsutil"
	"github.com/vomc/vomc/safetensors"
)

// FileFormat is the __metadata__ "format" of a synth model file.
const FileFormat = "vomc-synth"

// fileConfig is Config as stored in the file (the variant by short name).
type fileConfig struct {
	Variant    string `json:"variant"`
	A          int    `json:"alphabet"`
	D          int    `json:"D"`
	Context    int    `json:"context"`
	PosN       int    `json:"pos_period"`
	Embed      int    `json:"embed"`
	Hidden     int    `json:"hidden"`
	Activation string `json:"activation"`
	CountNorm  string `json:"count_norm"`
}

// infoJSON encodes info, writing the NaN losses of a run without
// validation as −1 (JSON has no NaN).
func infoJSON(info TrainInfo) ([]byte, error) {
	if math.IsNaN(info.BestVal) {
		info.BestVal = -1
	}
	h := make([]Eval, len(info.History))
	for i, e := range info.History {
		if math.IsNaN(e.ValLoss) {
			e.ValLoss = -1
		}
		h[i] = e
	}
	info.History = h
	return json.Marshal(info)
}

// Write writes the model as safetensors: one F32 tensor per parameter
// (names embed.*, ff.fc.*, ff.proj.*, head.*; weights out×in) and
// __metadata__ with format, label, config (JSON) and train (TrainInfo as
// JSON; a missing validation loss is written as −1).
func (m *Model) Write(w io.Writer) error {
	c := m.Config
	cj := c.fileJSON()
	params := m.HostParams()
	ij, err := infoJSON(m.Info)
	if err != nil {
		return err
	}
	meta := map[string]string{"format": FileFormat, "label": Label(c.Variant), "config": cj, "train": string(ij)}
	var ts []safetensors.Tensor
	for _, t := range c.tensors() {
		n := t.rows * max(t.cols, 1)
		shape := []int{t.rows}
		if t.cols > 0 {
			shape = append(shape, t.cols)
		}
		ts = append(ts, safetensors.Tensor{Name: t.name, DType: "F32", Shape: shape,
			Data: safetensors.Float32Bytes(params[t.off : t.off+n])})
	}
	return safetensors.Write(w, meta, ts)
}

// Save writes the model to path atomically (temporary file, sync, rename;
// an existing file is replaced).
func (m *Model) Save(path string) error {
	return fsutil.WriteFile(path, true, m.Write)
}

// Read reads a model written by Write.
func Read(r io.Reader) (*Model, error) {
	md, sts, err := safetensors.Read(r, 1<<24)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if md["format"] != FileFormat {
		return nil, fmt.Errorf("synth: not a %s file (metadata format %q)", FileFormat, md["format"])
	}
	cfg, err := parseFileConfig(md["config"])
	if err != nil {
		return nil, err
	}
	params := make([]float32, cfg.NumParams())
	ts := cfg.tensors()
	if len(sts) != len(ts) {
		return nil, fmt.Errorf("synth: %d tensors, the configuration has %d", len(sts), len(ts))
	}
	byName := make(map[string]safetensors.Tensor, len(sts))
	for _, st := range sts {
		byName[st.Name] = st
	}
	for _, t := range ts {
		e, ok := byName[t.name]
		n := t.rows * max(t.cols, 1)
		if !ok || e.DType != "F32" || len(e.Data) != 4*n {
			return nil, fmt.Errorf("synth: tensor %s: %s %v does not fit the configuration", t.name, e.DType, e.Shape)
		}
		copy(params[t.off:t.off+n], safetensors.Float32s(e.Data))
	}
	m, err := fromParams(cfg, params)
	if err != nil {
		return nil, err
	}
	if s := md["train"]; s != "" {
		if err := json.Unmarshal([]byte(s), &m.Info); err != nil {
			return nil, fmt.Errorf("synth: train info: %w", err)
		}
	}
	return m, nil
}

// Load reads a model file written by Save.
func Load(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}
