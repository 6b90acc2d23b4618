package transformer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
)

// A generic safetensors container for checkpoints: F32 tensors only, any
// names, string metadata. The layout is the standard one (8-byte
// little-endian header length, JSON header padded with spaces to a multiple
// of 8, then the tensors' bytes back to back in the header's data_offsets).

// stNamed is one tensor to write.
type stNamed struct {
	name  string
	shape []int
	data  []float32
}

// writeST writes tensors in the given order with the metadata md.
func writeST(w io.Writer, md map[string]string, tensors []stNamed) error {
	header := map[string]any{"__metadata__": md}
	off := 0
	for _, t := range tensors {
		n := 1
		for _, s := range t.shape {
			n *= s
		}
		if n != len(t.data) {
			return fmt.Errorf("transformer: tensor %s: shape %v for %d values", t.name, t.shape, len(t.data))
		}
		header[t.name] = stTensor{DType: "F32", Shape: t.shape, DataOffsets: [2]int{off, off + 4*n}}
		off += 4 * n
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	var nb [8]byte
	binary.LittleEndian.PutUint64(nb[:], uint64(len(h)))
	if _, err := w.Write(nb[:]); err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	buf := make([]byte, 0, 64<<10)
	for _, t := range tensors {
		for _, v := range t.data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	_, err = w.Write(buf)
	return err
}

// readST reads a container written by writeST (or any safetensors file
// whose tensors are all F32): its metadata and its tensors by name. It
// checks that the tensors exactly tile the data section.
func readST(r io.Reader) (map[string]string, map[string][]float32, error) {
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		return nil, nil, fmt.Errorf("transformer: safetensors header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > 256<<20 {
		return nil, nil, fmt.Errorf("transformer: safetensors header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return nil, nil, fmt.Errorf("transformer: safetensors header: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, nil, fmt.Errorf("transformer: safetensors header: %w", err)
	}
	md := map[string]string{}
	if m, ok := raw["__metadata__"]; ok {
		if err := json.Unmarshal(m, &md); err != nil {
			return nil, nil, fmt.Errorf("transformer: safetensors metadata: %w", err)
		}
		delete(raw, "__metadata__")
	}
	type entry struct {
		name string
		st   stTensor
	}
	var es []entry
	for name, m := range raw {
		var st stTensor
		if err := json.Unmarshal(m, &st); err != nil {
			return nil, nil, fmt.Errorf("transformer: tensor %s: %w", name, err)
		}
		if st.DType != "F32" {
			return nil, nil, fmt.Errorf("transformer: tensor %s has dtype %s, want F32", name, st.DType)
		}
		es = append(es, entry{name, st})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].st.DataOffsets[0] < es[j].st.DataOffsets[0] })
	end := 0
	for _, e := range es {
		size := 4
		for _, s := range e.st.Shape {
			if s < 0 {
				return nil, nil, fmt.Errorf("transformer: tensor %s has shape %v", e.name, e.st.Shape)
			}
			size *= s
		}
		if e.st.DataOffsets[0] != end || e.st.DataOffsets[1]-e.st.DataOffsets[0] != size {
			return nil, nil, fmt.Errorf("transformer: tensor %s at %v does not follow byte %d with %d bytes", e.name, e.st.DataOffsets, end, size)
		}
		end = e.st.DataOffsets[1]
	}
	data := make([]byte, end)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, nil, fmt.Errorf("transformer: safetensors data: %w", err)
	}
	ts := make(map[string][]float32, len(es))
	for _, e := range es {
		b := data[e.st.DataOffsets[0]:e.st.DataOffsets[1]]
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		ts[e.name] = v
	}
	return md, ts, nil
}
