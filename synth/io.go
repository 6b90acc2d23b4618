package synth

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/vomc/vomc/fsutil"
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

type stEntry struct {
	Dtype   string `json:"dtype"`
	Shape   []int  `json:"shape"`
	Offsets [2]int `json:"data_offsets"`
}

// Write writes the model as safetensors: one F32 tensor per parameter
// (names embed.*, ff.fc.*, ff.proj.*, head.*; weights out×in) and
// __metadata__ with format, label, config (JSON) and train (TrainInfo as
// JSON; a missing validation loss is written as −1).
func (m *Model) Write(w io.Writer) error {
	c := m.Config
	cj, _ := json.Marshal(fileConfig{ShortName(c.Variant), c.A, c.D, c.Context, c.PosN, c.Embed, c.Hidden, c.Activation, c.CountNorm})
	ij, err := infoJSON(m.Info)
	if err != nil {
		return err
	}
	header := map[string]any{"__metadata__": map[string]string{"format": FileFormat, "label": Label(c.Variant), "config": string(cj), "train": string(ij)}}
	off := 0
	for _, t := range c.tensors() {
		n := t.rows * max(t.cols, 1)
		shape := []int{t.rows}
		if t.cols > 0 {
			shape = append(shape, t.cols)
		}
		header[t.name] = stEntry{"F32", shape, [2]int{off * 4, (off + n) * 4}}
		off += n
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(hj)))
	buf.Write(hj)
	data := make([]byte, 4*len(m.Params))
	for _, t := range c.tensors() {
		n := t.rows * max(t.cols, 1)
		for i := range n {
			binary.LittleEndian.PutUint32(data[4*(t.off+i):], math.Float32bits(m.Params[t.off+i]))
		}
	}
	buf.Write(data)
	_, err = w.Write(buf.Bytes())
	return err
}

// Save writes the model to path atomically (temporary file, sync, rename;
// an existing file is replaced).
func (m *Model) Save(path string) error {
	return fsutil.WriteFile(path, true, m.Write)
}

// Read reads a model written by Write.
func Read(r io.Reader) (*Model, error) {
	var hl uint64
	if err := binary.Read(r, binary.LittleEndian, &hl); err != nil {
		return nil, fmt.Errorf("synth: reading header length: %w", err)
	}
	if hl > 1<<24 {
		return nil, fmt.Errorf("synth: header of %d bytes: not a synth model file", hl)
	}
	hj := make([]byte, hl)
	if _, err := io.ReadFull(r, hj); err != nil {
		return nil, fmt.Errorf("synth: reading header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hj, &raw); err != nil {
		return nil, fmt.Errorf("synth: header: %w", err)
	}
	var md map[string]string
	if err := json.Unmarshal(raw["__metadata__"], &md); err != nil || md["format"] != FileFormat {
		return nil, fmt.Errorf("synth: not a %s file (metadata format %q)", FileFormat, md["format"])
	}
	var fc fileConfig
	if err := json.Unmarshal([]byte(md["config"]), &fc); err != nil {
		return nil, fmt.Errorf("synth: config: %w", err)
	}
	v, err := ParseVariant(fc.Variant)
	if err != nil {
		return nil, err
	}
	cfg := Config{Variant: v, A: fc.A, D: fc.D, Context: fc.Context, PosN: fc.PosN, Embed: fc.Embed,
		Hidden: fc.Hidden, Activation: fc.Activation, CountNorm: fc.CountNorm}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	params := make([]float32, cfg.NumParams())
	ts := cfg.tensors()
	names := make([]string, 0, len(raw))
	for k := range raw {
		if k != "__metadata__" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) != len(ts) {
		return nil, fmt.Errorf("synth: %d tensors, the configuration has %d", len(names), len(ts))
	}
	for _, t := range ts {
		var e stEntry
		if err := json.Unmarshal(raw[t.name], &e); err != nil {
			return nil, fmt.Errorf("synth: tensor %s: %v", t.name, err)
		}
		n := t.rows * max(t.cols, 1)
		if e.Dtype != "F32" || e.Offsets[1]-e.Offsets[0] != 4*n || e.Offsets[0] < 0 || e.Offsets[1] > len(data) {
			return nil, fmt.Errorf("synth: tensor %s: %s %v at %v does not fit the configuration", t.name, e.Dtype, e.Shape, e.Offsets)
		}
		for i := range n {
			params[t.off+i] = math.Float32frombits(binary.LittleEndian.Uint32(data[e.Offsets[0]+4*i:]))
		}
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
