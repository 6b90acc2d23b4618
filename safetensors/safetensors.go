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
// the data section) and records the SHA-256 of the data section in the
// metadata (ChecksumKey). Read checks the file strictly: known dtypes,
// shapes matching the data sizes, offsets that tile the data section
// exactly, nothing after it, and the checksum when there is one.
// ReadHeader and Header.ReadData split Read in two so that a loader can
// check the tensors against what it expects before reading (and
// allocating) the data.
package safetensors

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"unicode/utf8"
)

// MetadataKey is the header key of the string metadata.
const MetadataKey = "__metadata__"

// ChecksumKey is the metadata key under which Write records a SHA-256
// (lowercase hex) of the canonical header — the header JSON as Write
// encodes it without this key (and without "__metadata__" when the
// metadata is empty) — followed by the data section, and which Read
// verifies: a corrupted byte anywhere in the file is detected. Files
// written by vomc before checksums (or by other programs) have none; Read
// accepts them, and Header.Checksum tells.
const ChecksumKey = "vomc.data_sha256"

// Warnf reports a file that was read without being verified (it has no
// checksum); the loaders of models call it. The default prints
// "warning: …" on standard error; tests and embedding programs may
// replace it.
var Warnf = func(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "warning: "+format+"\n", args...)
}

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

// Write writes meta plus ChecksumKey (the SHA-256 of the data section)
// and the tensors ts to w, the data in the order of ts. It fails, writing nothing, if a name is empty,
// repeated or MetadataKey, if meta has ChecksumKey, or if a tensor's dtype is unknown or its data
// length does not match its shape.
func Write(w io.Writer, meta map[string]string, ts []Tensor) error {
	if _, ok := meta[ChecksumKey]; ok {
		return fmt.Errorf("safetensors: metadata key %s is reserved for the data checksum", ChecksumKey)
	}
	header := make(map[string]any, len(ts)+1)
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
	if len(meta) > 0 {
		header[MetadataKey] = meta
	}
	canon, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("safetensors: header: %w", err)
	}
	sum := sha256.New()
	sum.Write(canon)
	for _, t := range ts {
		sum.Write(t.Data)
	}
	md := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		md[k] = v
	}
	md[ChecksumKey] = hex.EncodeToString(sum.Sum(nil))
	header[MetadataKey] = md
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

// Header is a file's header as read by ReadHeader: everything but the
// tensor data, checked (dtypes, shapes, offsets tiling the data section)
// but not yet trusted to describe data that exists.
type Header struct {
	// Meta is the metadata without ChecksumKey (nil if the file has
	// none).
	Meta map[string]string
	// Tensors are the tensors in data order, without Data.
	Tensors []Tensor
	// DataSize is the length in bytes of the data section, and Size the
	// file's: 8 + the header length + DataSize.
	DataSize, Size int64
	// Checksum is the SHA-256 recorded in the file (see ChecksumKey)
	// (lowercase hex), or "" if the file has none (one written before
	// vomc recorded checksums, or by another program).
	Checksum string
	offs     [][2]int64
	canon    []byte // the canonical header the checksum covers
}

// Read reads a safetensors file from r: its metadata (nil if the file has
// none; without ChecksumKey) and its tensors in data order. maxHeader
// bounds the header length (≤ 0: DefaultMaxHeader). Every tensor must
// have a known dtype, a shape with non-negative dimensions, and
// data_offsets [begin,end] whose length matches the shape; together the
// tensors must tile the data section exactly from byte 0, and nothing may
// follow the data section. A recorded checksum is verified; a file without
// one is accepted (use ReadHeader and Header.ReadData to tell). The
// tensors' Data share one buffer.
func Read(r io.Reader, maxHeader int64) (map[string]string, []Tensor, error) {
	h, err := ReadHeader(r, maxHeader, -1)
	if err != nil {
		return nil, nil, err
	}
	ts, err := h.ReadData(r)
	if err != nil {
		return nil, nil, err
	}
	return h.Meta, ts, nil
}

// ReadHeader reads and checks the header of a safetensors file from r
// (see Read), allocating memory in proportion to the bytes actually read
// only. maxHeader bounds the header length (≤ 0: DefaultMaxHeader). size,
// if ≥ 0, is the length of the whole input (a file's size): the header
// must then describe exactly that many bytes, so that a truncated file or
// one with trailing bytes is refused before any data is read.
func ReadHeader(r io.Reader, maxHeader, size int64) (*Header, error) {
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeader
	}
	h, n, err := readHeaderJSON(r, maxHeader, size)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(h, &raw); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	if raw == nil {
		return nil, errors.New("safetensors: header is not a JSON object")
	}
	hd := &Header{}
	if m, ok := raw[MetadataKey]; ok {
		if err := hd.parseMetadata(m); err != nil {
			return nil, err
		}
		delete(raw, MetadataKey)
	}
	ts := make([]Tensor, 0, len(raw))
	offs := make([][2]int64, 0, len(raw))
	for name, m := range raw {
		t, off, err := parseTensorEntry(name, m)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
		offs = append(offs, off)
	}
	end, err := hd.tile(ts, offs)
	if err != nil {
		return nil, err
	}
	hd.DataSize = end
	if end > math.MaxInt64-8-int64(n) {
		return nil, fmt.Errorf("safetensors: data section of %d bytes overflows", end)
	}
	hd.Size = 8 + int64(n) + end
	if hd.Checksum != "" {
		if hd.canon, err = hd.canonical(); err != nil {
			return nil, err
		}
	}
	if size >= 0 && hd.Size != size {
		what := "truncated"
		if size > hd.Size {
			what = fmt.Sprintf("trailing junk after the data section: %d extra bytes", size-hd.Size)
		}
		return nil, fmt.Errorf("safetensors: the header describes %d bytes, the file has %d (%s)", hd.Size, size, what)
	}
	return hd, nil
}

// readHeaderJSON reads the 8-byte little-endian header length n and then
// the n bytes of header JSON, refusing n > maxHeader, n > size-8 when
// size ≥ 0 (the input's total length), a short read and invalid UTF-8.
// The buffer grows as the header arrives rather than being sized by n.
func readHeaderJSON(r io.Reader, maxHeader, size int64) ([]byte, uint64, error) {
	var nb [8]byte
	if _, err := io.ReadFull(r, nb[:]); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, fmt.Errorf("safetensors: header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > uint64(maxHeader) {
		return nil, 0, fmt.Errorf("safetensors: header of %d bytes exceeds the limit of %d", n, maxHeader)
	}
	if size >= 0 && n > uint64(size-8) {
		return nil, 0, fmt.Errorf("safetensors: header of %d bytes in a file of %d bytes (truncated?)", n, size)
	}
	h, err := io.ReadAll(io.LimitReader(r, int64(n)))
	if err == nil && uint64(len(h)) != n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, 0, fmt.Errorf("safetensors: header of %d bytes: %w", n, err)
	}
	if !utf8.Valid(h) {
		return nil, 0, errors.New("safetensors: header is not valid UTF-8")
	}
	return h, n, nil
}

// parseMetadata decodes the "__metadata__" value m into hd.Meta and moves
// a recorded checksum (ChecksumKey, 64 lowercase hex digits) from it to
// hd.Checksum, leaving hd.Meta nil when nothing else remains. A key one
// byte away from ChecksumKey is refused as corruption.
func (hd *Header) parseMetadata(m json.RawMessage) error {
	if err := json.Unmarshal(m, &hd.Meta); err != nil {
		return fmt.Errorf("safetensors: metadata: %w", err)
	}
	for k := range hd.Meta {
		if nearChecksumKey(k) {
			return fmt.Errorf("safetensors: metadata key %q is a corrupted %q: the file is corrupt", k, ChecksumKey)
		}
	}
	sum, ok := hd.Meta[ChecksumKey]
	if !ok {
		return nil
	}
	if len(sum) != 2*sha256.Size || strings.ToLower(sum) != sum {
		return fmt.Errorf("safetensors: metadata %s %q is not a SHA-256 in lowercase hex", ChecksumKey, sum)
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return fmt.Errorf("safetensors: metadata %s %q is not a SHA-256 in lowercase hex", ChecksumKey, sum)
	}
	hd.Checksum = sum
	delete(hd.Meta, ChecksumKey)
	if len(hd.Meta) == 0 {
		hd.Meta = nil // Write(w, nil, …) reads back as nil
	}
	return nil
}

// parseTensorEntry decodes the header entry m of tensor name: exactly the
// keys dtype, shape and data_offsets (encoding/json would match them
// case-insensitively, so the keys are checked first), a known dtype, a
// shape with non-negative dimensions, and data_offsets [begin,end] with
// end-begin equal to the shape's size in bytes. It returns the tensor
// without data and its offsets.
func parseTensorEntry(name string, m json.RawMessage) (Tensor, [2]int64, error) {
	if name == "" { // Write refuses it too: a file must read back as it was written
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: a tensor has an empty name")
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(m, &keys); err != nil {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: %w", name, err)
	}
	for k := range keys {
		if k != "dtype" && k != "shape" && k != "data_offsets" {
			return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: unknown field %q", name, k)
		}
	}
	var e readEntry
	d := json.NewDecoder(bytes.NewReader(m))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: %w", name, err)
	}
	if e.Shape == nil {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: no shape", name)
	}
	if len(e.DataOffsets) != 2 {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: data_offsets %v, want [begin,end]", name, e.DataOffsets)
	}
	size, err := byteSize(e.DType, e.Shape)
	if err != nil {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: %v", name, err)
	}
	b, en := e.DataOffsets[0], e.DataOffsets[1]
	if b < 0 || en < b || en-b != size {
		return Tensor{}, [2]int64{}, fmt.Errorf("safetensors: tensor %s: %s %v needs %d bytes, data_offsets are %v", name, e.DType, e.Shape, size, e.DataOffsets)
	}
	return Tensor{Name: name, DType: e.DType, Shape: e.Shape}, [2]int64{b, en}, nil
}

// tile orders the tensors ts (with byte ranges offs) by offset, ties by
// name, into hd.Tensors and hd.offs, and checks that they tile the data
// section from byte 0 with no gap or overlap. It returns the end of the
// last tensor: the data section's length in bytes.
func (hd *Header) tile(ts []Tensor, offs [][2]int64) (int64, error) {
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
	hd.Tensors = make([]Tensor, len(ts))
	hd.offs = make([][2]int64, len(ts))
	for k, i := range idx {
		if offs[i][0] != end {
			return 0, fmt.Errorf("safetensors: tensor %s at %v does not start at byte %d (the end of the previous tensor)", ts[i].Name, offs[i], end)
		}
		end = offs[i][1]
		hd.Tensors[k], hd.offs[k] = ts[i], offs[i]
	}
	return end, nil
}

// canonical is the header JSON that the checksum covers, as Write encodes
// it before adding ChecksumKey: the tensors' entries and, when not empty,
// the metadata without ChecksumKey.
func (hd *Header) canonical() ([]byte, error) {
	header := make(map[string]any, len(hd.Tensors)+1)
	if len(hd.Meta) > 0 {
		header[MetadataKey] = hd.Meta
	}
	for k, t := range hd.Tensors {
		header[t.Name] = entry{DType: t.DType, Shape: t.Shape, DataOffsets: hd.offs[k]}
	}
	canon, err := json.Marshal(header)
	if err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	return canon, nil
}

// nearChecksumKey reports whether k differs from ChecksumKey in exactly
// one byte (as a bit flip makes it), which would otherwise turn a
// checksummed file into one without a checksum.
func nearChecksumKey(k string) bool {
	if len(k) != len(ChecksumKey) {
		return false
	}
	diff := 0
	for i := range len(k) {
		if k[i] != ChecksumKey[i] {
			diff++
		}
	}
	return diff == 1
}

// ReadData reads the data section described by h from r (positioned just
// after the header), checks that r ends there, verifies the recorded
// checksum if there is one, and returns the tensors in data order (their
// Data share one buffer). Memory grows with the bytes actually read, not
// with the sizes the header claims.
func (h *Header) ReadData(r io.Reader) ([]Tensor, error) {
	sum := sha256.New()
	var all []byte
	if h.DataSize <= 64<<20 {
		all = make([]byte, 0, h.DataSize)
	}
	chunk := make([]byte, min(h.DataSize, 1<<20))
	for int64(len(all)) < h.DataSize {
		k := min(int64(len(chunk)), h.DataSize-int64(len(all)))
		got, err := io.ReadFull(r, chunk[:k])
		all = append(all, chunk[:got]...)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("safetensors: data section of %d bytes (read %d): %w", h.DataSize, len(all), err)
		}
	}
	var one [1]byte
	if k, err := io.ReadFull(r, one[:]); k > 0 {
		return nil, fmt.Errorf("safetensors: trailing junk after the data section of %d bytes", h.DataSize)
	} else if err != io.EOF {
		return nil, fmt.Errorf("safetensors: after the data section: %w", err)
	}
	if h.Checksum != "" {
		sum.Write(h.canon)
		sum.Write(all)
		if got := hex.EncodeToString(sum.Sum(nil)); got != h.Checksum {
			return nil, fmt.Errorf("safetensors: checksum mismatch (SHA-256 %s…, the file records %s…): the file is corrupt", got[:12], h.Checksum[:12])
		}
	}
	out := make([]Tensor, len(h.Tensors))
	for k, t := range h.Tensors {
		o := h.offs[k]
		t.Data = all[o[0]:o[1]:o[1]]
		out[k] = t
	}
	return out, nil
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
