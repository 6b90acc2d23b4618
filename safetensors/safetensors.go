// Package safetensors reads and writes the safetensors container format: an
// unsigned 64-bit little-endian header length n, n bytes of JSON header
// (padded with spaces to a multiple of 8 by Write), then the raw
// little-endian bytes of every tensor back to back. The header maps
// "__metadata__" to a string→string map and each tensor name to
// {"dtype":…,"shape":[…],"data_offsets":[begin,end]}, the offsets being
// byte offsets into the data section.
//
// Write encodes the header with encoding/json (keys sorted, so the output
// depends only on the metadata and the tensors, in their given order for
// the data section). Read checks the file strictly: known dtypes, shapes
// matching the data sizes, and offsets that tile the data section exactly.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
)

// MetadataKey is the header key of the string metadata.
const MetadataKey = "__metadata__"

// DefaultMaxHeader is the header length limit Read applies when given a
// limit ≤ 0 (100 MiB).
const DefaultMaxHeader = 100 << 20

// Tensor is one named tensor: its dtype (such as "F32" or "F64"), its
// shape (empty for a scalar) and its raw little-endian bytes, row-major.
type Tensor struct {
	Name  string
	DType string
	Shape []int
	Data  []byte
}

// DTypeSize returns the size in bytes of one element of dtype, or 0 if
// dtype is not a safetensors dtype.
func DTypeSize(dtype string) int {
	switch dtype {
	case "BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3":
		return 1
	case "U16", "I16", "F16", "BF16":
		return 2
	case "U32", "I32", "F32":
		return 4
	case "U64", "I64", "F64":
		return 8
	}
	return 0
}

// byteSize is the number of data bytes of a tensor of dtype and shape.
func byteSize(dtype string, shape []int) (int64, error) {
	es := DTypeSize(dtype)
	if es == 0 {
		return 0, fmt.Errorf("unknown dtype %q", dtype)
	}
	n := int64(es)
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("negative dimension in shape %v", shape)
		}
		if s != 0 && n > math.MaxInt64/int64(s) {
			return 0, fmt.Errorf("shape %v overflows", shape)
		}
		n *= int64(s)
	}
	return n, nil
}

// entry is a tensor's header entry as written.
type entry struct {
	DType       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// Write writes meta (omitted if nil) and the tensors ts to w, the data in
// the order of ts. It fails, writing nothing, if a name is empty,
// repeated or MetadataKey, or if a tensor's dtype is unknown or its data
// length does not match its shape.
func Write(w io.Writer, meta map[string]string, ts []Tensor) error {
	header := make(map[string]any, len(ts)+1)
	if meta != nil {
		header[MetadataKey] = meta
	}
	var off int64
	for _, t := range ts {
		if t.Name == "" || t.Name == MetadataKey {
			return fmt.Errorf("safetensors: invalid tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return fmt.Errorf("safetensors: duplicate tensor name %q", t.Name)
		}
		n, err := byteSize(t.DType, t.Shape)
		if err != nil {
			return fmt.Errorf("safetensors: tensor %s: %v", t.Name, err)
		}
		if n != int64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %s: %s %v needs %d bytes, has %d", t.Name, t.DType, t.Shape, n, len(t.Data))
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = entry{DType: t.DType, Shape: shape, DataOffsets: [2]int64{off, off + n}}
		off += n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	pad := (8 - len(h)%8) % 8
	buf := make([]byte, 8, 8+len(h)+pad)
	binary.LittleEndian.PutUint64(buf, uint64(len(h)+pad))
	buf = append(buf, h...)
	buf = append(buf, bytes.Repeat([]byte{' '}, pad)...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	for _, t := range ts {
		if len(t.Data) == 0 {
			continue
		}
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// readEntry is a tensor's header entry as read (offsets as a slice so
// that a wrong count is detected).
type readEntry struct {
	DType       string  `json:"dtype"`
	Shape       []int   `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// Read reads a safetensors file from r: its metadata (nil if the file has
// none) and its tensors in data order. maxHeader bounds the header length
// (≤ 0: DefaultMaxHeader). Every tensor must have a known dtype, a shape
// with non-negative dimensions, and data_offsets [begin,end] whose length
// matches the shape; together the tensors must tile the data section
// exactly from byte 0. Read consumes exactly the header and the data
// section; the tensors' Data share one buffer.
func Read(r io.Reader, maxHeader int64) (map[string]string, []Tensor, error) {
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeader
	}
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > uint64(maxHeader) {
		return nil, nil, fmt.Errorf("safetensors: header of %d bytes exceeds the limit of %d", n, maxHeader)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	if raw == nil {
		return nil, nil, errors.New("safetensors: header is not a JSON object")
	}
	var meta map[string]string
	if m, ok := raw[MetadataKey]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, nil, fmt.Errorf("safetensors: metadata: %w", err)
		}
		delete(raw, MetadataKey)
	}
	ts := make([]Tensor, 0, len(raw))
	offs := make([][2]int64, 0, len(raw))
	for name, m := range raw {
		var e readEntry
		d := json.NewDecoder(bytes.NewReader(m))
		d.DisallowUnknownFields()
		if err := d.Decode(&e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: %w", name, err)
		}
		if e.Shape == nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: no shape", name)
		}
		if len(e.DataOffsets) != 2 {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: data_offsets %v, want [begin,end]", name, e.DataOffsets)
		}
		size, err := byteSize(e.DType, e.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: %v", name, err)
		}
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || en < b || en-b != size {
			return nil, nil, fmt.Errorf("safetensors: tensor %s: %s %v needs %d bytes, data_offsets are %v", name, e.DType, e.Shape, size, e.DataOffsets)
		}
		ts = append(ts, Tensor{Name: name, DType: e.DType, Shape: e.Shape})
		offs = append(offs, [2]int64{b, en})
	}
	idx := make([]int, len(ts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool {
		a, b := offs[idx[i]], offs[idx[j]]
		if a != b {
			return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
		}
		return ts[idx[i]].Name < ts[idx[j]].Name
	})
	var end int64
	for _, i := range idx {
		if offs[i][0] != end {
			return nil, nil, fmt.Errorf("safetensors: tensor %s at %v does not start at byte %d (the end of the previous tensor)", ts[i].Name, offs[i], end)
		}
		end = offs[i][1]
	}
	// Grow the buffer as the data arrives rather than trusting the header.
	var data bytes.Buffer
	if got, err := io.CopyN(&data, r, end); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, fmt.Errorf("safetensors: data section of %d bytes (read %d): %w", end, got, err)
	}
	all := data.Bytes()
	out := make([]Tensor, len(ts))
	for k, i := range idx {
		t := ts[i]
		t.Data = all[offs[i][0]:offs[i][1]:offs[i][1]]
		out[k] = t
	}
	return meta, out, nil
}

// Float32Bytes encodes v as little-endian bytes (4 per value, exact bits,
// NaN payloads included).
func Float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Float32s decodes little-endian float32 values from b; a trailing
// partial value (len(b) not a multiple of 4) is ignored.
func Float32s(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Float64Bytes encodes v as little-endian bytes (8 per value, exact bits).
func Float64Bytes(v []float64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return b
}

// Float64s decodes little-endian float64 values from b; a trailing
// partial value (len(b) not a multiple of 8) is ignored.
func Float64s(b []byte) []float64 {
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v
}
