package construct

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
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

type stEntry struct {
	DType       string `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets [2]int `json:"data_offsets"`
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
	header := map[string]any{"__metadata__": meta}
	ts := c.Tensors()
	off := 0
	for _, t := range ts {
		n := 8 * len(t.Mat.Data)
		header[t.Name] = stEntry{DType: "F64", Shape: []int{t.Mat.Rows, t.Mat.Cols}, DataOffsets: [2]int{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	buf := make([]byte, 8+len(h), 8+len(h)+off)
	binary.LittleEndian.PutUint64(buf, uint64(len(h)))
	copy(buf[8:], h)
	for _, t := range ts {
		for _, v := range t.Mat.Data {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	_, err = w.Write(buf)
	return err
}

// ReadSafetensorsTensors reads back the tensors of a file written by
// WriteSafetensors (names, shapes, F64 data) and its metadata, for
// inspection and tests.
func ReadSafetensorsTensors(r io.Reader) (map[string]*Mat, map[string]string, error) {
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, nil, err
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > 100<<20 {
		return nil, nil, fmt.Errorf("construct: safetensors header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, nil, err
	}
	var meta map[string]string
	if err := json.Unmarshal(raw["__metadata__"], &meta); err != nil || meta["format"] != SafetensorsFormat {
		return nil, nil, fmt.Errorf("construct: not a %s safetensors file", SafetensorsFormat)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]*Mat{}
	for name, msg := range raw {
		if name == "__metadata__" {
			continue
		}
		var e stEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("construct: tensor %s: %v", name, err)
		}
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if e.DType != "F64" || len(e.Shape) != 2 || b < 0 || en > len(data) || en-b != 8*e.Shape[0]*e.Shape[1] {
			return nil, nil, fmt.Errorf("construct: tensor %s: bad entry %+v", name, e)
		}
		m := NewMat(e.Shape[0], e.Shape[1])
		for i := range m.Data {
			m.Data[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[b+8*i:]))
		}
		out[name] = m
	}
	return out, meta, nil
}
