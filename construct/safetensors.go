package construct

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/vomc/vomc/safetensors"
)

// SafetensorsFormat is the "format" entry of the metadata of the weights
// files written by WriteSafetensors.
const SafetensorsFormat = "vomc-construct"

// Tensor is one named weight matrix of the construction.
type Tensor struct {
	Name string
	Mat  *Mat
}

// Tensors lists the attention weights in storage order:
// "layers.ℓ.heads.m.W_Q", ".W_K", ".W_V" (Dk×E, Dk×E, Dv×E) for every head
// m = 1.. of layer ℓ = 1..D+2, then "layers.ℓ.W_O" (E × Σ Dv). The FF
// sub-layers and the read-out are exact functions, not weights (see FF).
func (c *Construction) Tensors() []Tensor {
	var out []Tensor
	for li, l := range c.TF.Layers {
		for m, h := range l.Heads {
			p := fmt.Sprintf("layers.%d.heads.%d.", li+1, m+1)
			out = append(out, Tensor{p + "W_Q", h.WQ}, Tensor{p + "W_K", h.WK}, Tensor{p + "W_V", h.WV})
		}
		if len(l.Heads) > 0 {
			out = append(out, Tensor{fmt.Sprintf("layers.%d.W_O", li+1), l.WO})
		}
	}
	return out
}

// WriteSafetensors writes the attention weights in safetensors format with
// the conventions of transformer/safetensors.go: a little-endian uint64
// header length, the JSON header padded with spaces to a multiple of 8,
// then the raw little-endian data. The dtype is F64 (the construction's
// exact values, c up to 1e6 and cos(iπ/N) included). "__metadata__" holds
// "format" ("vomc-construct"), "config" (Config as JSON, C = 0 for the
// hard limit), "layout" (the
// embedding blocks as JSON), "heads" (head names per layer) and "ff" (what
// each layer's exact FF computes).
func (c *Construction) WriteSafetensors(w io.Writer) error {
	cc := c.Config
	if cc.Hard() {
		cc.C = 0 // JSON has no +Inf; 0 also means the hard limit
	}
	cfg, err := json.Marshal(cc)
	if err != nil {
		return err
	}
	layout, err := json.Marshal(c.Layout.Blocks)
	if err != nil {
		return err
	}
	var heads [][]string
	var ffs []string
	for _, l := range c.TF.Layers {
		var hs []string
		for _, h := range l.Heads {
			hs = append(hs, h.Name)
		}
		heads = append(heads, hs)
		ffs = append(ffs, l.Name+": "+l.FFDoc)
	}
	hj, _ := json.Marshal(heads)
	fj, _ := json.Marshal(ffs)
	meta := map[string]string{"format": SafetensorsFormat, "config": string(cfg), "layout": string(layout),
		"heads": string(hj), "ff": string(fj), "hard": fmt.Sprint(c.TF.Hard)}
	var ts []safetensors.Tensor
	for _, t := range c.Tensors() {
		ts = append(ts, safetensors.Tensor{Name: t.Name, DType: "F64", Shape: []int{t.Mat.Rows, t.Mat.Cols},
			Data: safetensors.Float64Bytes(t.Mat.Data)})
	}
	return safetensors.Write(w, meta, ts)
}

// ReadSafetensorsTensors reads back the tensors of a file written by
// WriteSafetensors (names, shapes, F64 data) and its metadata, for
// inspection and tests.
func ReadSafetensorsTensors(r io.Reader) (map[string]*Mat, map[string]string, error) {
	meta, ts, err := safetensors.Read(r, 100<<20)
	if err != nil {
		return nil, nil, fmt.Errorf("construct: %w", err)
	}
	if meta["format"] != SafetensorsFormat {
		return nil, nil, fmt.Errorf("construct: not a %s safetensors file", SafetensorsFormat)
	}
	out := map[string]*Mat{}
	for _, t := range ts {
		if t.DType != "F64" || len(t.Shape) != 2 {
			return nil, nil, fmt.Errorf("construct: tensor %s: %s %v, want a 2-D F64 matrix", t.Name, t.DType, t.Shape)
		}
		m := NewMat(t.Shape[0], t.Shape[1])
		copy(m.Data, safetensors.Float64s(t.Data))
		out[t.Name] = m
	}
	return out, meta, nil
}
