package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/sysmem"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend"
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
	// Encoding is absent for Paper (files of before the encodings).
	Encoding string `json:"encoding,omitempty"`
}

// infoFile is TrainInfo's JSON form: its losses by vomc's convention
// (jsonfloat: NaN, a run without validation, as "NaN"). Files written
// before it hold −1 for that NaN, which reads as NaN (losses are ≥ 0).
type infoFile struct {
	TrainInfo
	BestVal jsonfloat.Float `json:"best_val"`
	History []evalFile      `json:"history"`
}

// evalFile is Eval's JSON form (infoFile).
type evalFile struct {
	Eval
	TrainLoss jsonfloat.Float `json:"train_loss"`
	ValLoss   jsonfloat.Float `json:"val_loss"`
}

// infoJSON encodes info as an infoFile.
func infoJSON(info TrainInfo) ([]byte, error) {
	f := infoFile{TrainInfo: info, BestVal: jsonfloat.Float(info.BestVal)}
	for _, e := range info.History {
		f.History = append(f.History, evalFile{e, jsonfloat.Float(e.TrainLoss), jsonfloat.Float(e.ValLoss)})
	}
	return json.Marshal(f)
}

// parseInfo decodes an infoFile.
func parseInfo(b []byte) (TrainInfo, error) {
	var f infoFile
	if err := json.Unmarshal(b, &f); err != nil {
		return TrainInfo{}, err
	}
	old := func(v jsonfloat.Float) float64 { // −1: NaN, as files of before wrote it
		if v == -1 {
			return math.NaN()
		}
		return float64(v)
	}
	info := f.TrainInfo
	info.BestVal, info.History = old(f.BestVal), nil
	for _, e := range f.History {
		e.Eval.TrainLoss, e.Eval.ValLoss = float64(e.TrainLoss), old(e.ValLoss)
		info.History = append(info.History, e.Eval)
	}
	return info, nil
}

// Write writes the model as safetensors: one F32 tensor per parameter
// (names embed.*, ff.fc.*, ff.proj.*, head.*; weights out×in) and
// __metadata__ with format, label, config (JSON) and train (TrainInfo as
// JSON, an infoFile: a missing validation loss is "NaN").
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

// ReadOn reads a model written by Write onto the backend be (nil:
// transformer.ErrNoBackend; see readModel); the size of r's contents is
// not known.
func ReadOn(be backend.Backend, r io.Reader) (*Model, error) { return readModel(be, r, -1, "") }

// LoadOn reads a model file written by Save onto the backend be, chosen by
// the caller (nil: transformer.ErrNoBackend), checking its header against
// the file's size before reading any data. Errors name the file.
func LoadOn(be backend.Backend, path string) (*Model, error) {
	return fsutil.ReadSized(path, func(r io.Reader, size int64) (*Model, error) { return readModel(be, r, size, path) })
}

// readModel reads a model file of size bytes (< 0: unknown) named name
// (for the warning): first the header, whose config is validated
// (bounded sizes) and whose tensors must be exactly the config's (names,
// F32, shapes), and whose parameters must fit in memory; only then the
// data, verified against the file's checksum. A file without a checksum
// (written before vomc recorded them) is loaded with a warning through
// safetensors.Warnf.
func readModel(be backend.Backend, r io.Reader, size int64, name string) (*Model, error) {
	if be == nil {
		return nil, transformer.ErrNoBackend
	}
	h, err := safetensors.ReadHeader(r, 1<<24, size)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	md := h.Meta
	if md["format"] != FileFormat {
		return nil, fmt.Errorf("synth: not a %s file (metadata format %q)", FileFormat, md["format"])
	}
	cfg, err := parseFileConfig(md["config"])
	if err != nil {
		return nil, err
	}
	ts := cfg.tensors()
	if len(h.Tensors) != len(ts) {
		return nil, fmt.Errorf("synth: %d tensors, the configuration has %d", len(h.Tensors), len(ts))
	}
	byName := make(map[string]int, len(h.Tensors))
	for i, st := range h.Tensors {
		byName[st.Name] = i
	}
	for _, t := range ts {
		shape := []int{t.rows}
		if t.cols > 0 {
			shape = append(shape, t.cols)
		}
		i, ok := byName[t.name]
		if !ok {
			return nil, fmt.Errorf("synth: no tensor %s", t.name)
		}
		if e := h.Tensors[i]; e.DType != "F32" || !slices.Equal(e.Shape, shape) {
			return nil, fmt.Errorf("synth: tensor %s is %s %v, the configuration needs F32 %v", t.name, e.DType, e.Shape, shape)
		}
	}
	P := cfg.NumParams()
	if err := sysmem.Check(12*float64(P), fmt.Sprintf("loading a synthetic model of %d parameters", P)); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	sts, err := h.ReadData(r)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if h.Checksum == "" {
		if name == "" {
			name = "the synthetic model file"
		}
		safetensors.Warnf("%s has no checksum (written by an earlier vomc): its integrity cannot be verified; training it again adds one", name)
	}
	params := make([]float32, P)
	for _, t := range ts {
		n := t.rows * max(t.cols, 1)
		copy(params[t.off:t.off+n], safetensors.Float32s(sts[byName[t.name]].Data))
	}
	m, err := FromParamsOn(be, cfg, params)
	if err != nil {
		return nil, err
	}
	if s := md["train"]; s != "" {
		if m.Info, err = parseInfo([]byte(s)); err != nil {
			return nil, fmt.Errorf("synth: train info: %w", err)
		}
	}
	return m, nil
}
