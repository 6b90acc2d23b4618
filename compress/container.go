// Package compress is a lossless compressor: a range coder (package arith)
// driven by a sequential byte model. Three models are built in and can be
// rebuilt exactly from a compressed file's header:
//
//   - mix (the CLI's default): context mixing of order 1, 2, 4 and 6, word,
//     sparse and record contexts and a match model by an online logistic
//     mixer with secondary estimation, bitwise, in integer arithmetic (see
//     MixConfig). On the Calgary corpus (18 files) it takes 1.770
//     bits/byte, on the Canterbury corpus (11 files) 1.092 (7-Zip PPMd
//     order 6: 1.930 and 1.466; xz -9e: 2.174 and 1.403), at 1.1–1.5 MB/s
//     of one core's CPU time, compressing and decompressing (a fifth of
//     PPM's speed);
//   - PPM: a byte-specialised PPM of order D with escape method C or D,
//     exclusion and update exclusion, computed entirely in integer
//     arithmetic (see PPMConfig);
//   - CTW: context-tree weighting over the binary decomposition of each
//     byte, with byte contexts of depth D (see CTWConfig).
//
// PPM (2.06 and 1.64 bits/byte at order 5, method D; 4–8 MB/s) and CTW
// (2.03 and 1.51 at depth 6, α = 1/8; under 1 MB/s) are the classical
// references; mix compresses best.
//
// Any predict.Predictor over bytes can drive the coder too (FromPredictor);
// its file records only the predictor's name, and decoding it needs the same
// predictor again (DecodeWith).
//
// # Container format (version 1)
//
// All integers are little-endian.
//
//	offset  size  field
//	0       4     magic "VMCZ"
//	4       1     format version (1)
//	5       1     model id: 1 = PPM, 2 = CTW, 3 = external predictor,
//	              4 = mix (added without a version change: files of
//	              models 1–3 are unchanged and still decode)
//	6       2     L, length of the model parameters
//	8       L     model parameters (see PPMConfig, CTWConfig, MixConfig;
//	              for an external predictor its Name in UTF-8)
//	8+L     8     original length in bytes (< 2^62)
//	16+L    4     CRC-32 (IEEE) of bytes 0 … 15+L (header check)
//	20+L    …     range-coder stream (package arith), self-delimiting
//	end−4   4     CRC-32 (IEEE) of the original data
//
// Nothing may follow the trailer. Decoding checks the magic, version,
// header CRC, model parameters, that the coder stream ends exactly where
// its encoder ended it, the data CRC and the absence of trailing bytes, and
// reports each failure with its own error (ErrFormat, ErrCorrupt,
// ErrTruncated wrapped with details).
//
// # Streaming and memory
//
// Encode reads its input through a bufio.Reader and Decode writes through a
// bufio.Writer; neither holds the data in memory. The model's memory is
// bounded by its budget (MemMB, like PPMd's -m); what happens when it is
// full is documented with each model and is identical in the encoder and
// the decoder.
//
// # Portability
//
// PPM and mix compute their coding frequencies in integer arithmetic only,
// and CTW in float64 with every product explicitly rounded (no fused
// multiply–add) and no transcendental function, so a file decodes
// identically on every platform. TestGoldenFiles pins the output of each
// built-in model byte for byte.
// Predictors plugged in with FromPredictor are quantised by Quantize, which
// is itself exact, but their float64 predictions may differ across
// platforms (fused multiply–add on arm64, ppc64le, s390x; assembly math
// functions): such files are guaranteed to decode only on a platform whose
// predictor output is bit-identical to the encoder's (same GOARCH is the
// safe rule).
package compress

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/vomc/vomc/arith"
)

// Magic is the first four bytes of every compressed file.
const Magic = "VMCZ"

// Version is the container format version this package writes and reads.
const Version = 1

// Model ids stored in the header.
const (
	idPPM       = 1
	idCTW       = 2
	idPredictor = 3
	idMix       = 4
)

// MaxSize is the largest original length the container records (2^62 − 1).
const MaxSize = 1<<62 - 1

var (
	// ErrFormat is wrapped by errors for input that is not a vomc
	// compressed file of a supported version (foreign input).
	ErrFormat = errors.New("not a vomc compressed file")
	// ErrCorrupt is wrapped by errors for a file whose header or contents
	// fail a check (CRC mismatch, invalid model parameters, bad coder
	// stream, trailing bytes).
	ErrCorrupt = errors.New("corrupt compressed file")
	// ErrTruncated is wrapped by errors for a file that ends early.
	ErrTruncated = errors.New("truncated compressed file")
	// ErrMemory is wrapped by errors for a file whose model needs more
	// memory than the decoder's limit allows (DecodeLimit).
	ErrMemory = errors.New("model memory over the limit")
)

// Model is a byte model that drives the range coder: Mix, PPM, CTW or
// FromPredictor build one. A Model is an immutable description; each
// Encode/Decode call builds fresh statistics from it.
type Model interface {
	// Name is a short human-readable label, e.g. "ppm(D=5,D,mem=256MiB)".
	Name() string
	// spec returns the model id and the parameter bytes of the header.
	spec() (id byte, params []byte)
	// newCoder returns fresh statistics for a stream of size bytes.
	newCoder(size int64) coder
}

// coder is one stream's model state, used by the encoder or the decoder.
type coder interface {
	// encode codes b and updates the statistics. Only a model with an
	// alphabet smaller than 256 can fail (a byte outside it).
	encode(e *arith.Encoder, b byte) error
	// decode decodes one byte and updates the statistics exactly as
	// encode did.
	decode(d *arith.Decoder) byte
}

// Header is the decoded header of a compressed file.
type Header struct {
	Version int    // format version
	ModelID int    // 1 = PPM, 2 = CTW, 3 = external predictor, 4 = mix
	Params  []byte // raw model parameters
	Size    int64  // original length in bytes
	// Model is the model rebuilt from the parameters, or nil for an
	// external predictor.
	Model Model
	// Len is the header's length in bytes.
	Len int
}

// ModelName is the name of the model that wrote the file: Model.Name(), or
// the predictor's name for an external predictor.
func (h Header) ModelName() string {
	if h.Model != nil {
		return h.Model.Name()
	}
	return string(h.Params)
}

// MemMB is the memory budget in MiB that the file's model allocates up to
// when decoding (0 for an external predictor, whose memory is its own).
func (h Header) MemMB() int {
	switch m := h.Model.(type) {
	case mixModel:
		return m.c.MemMB
	case ppmModel:
		return m.c.MemMB
	case ctwModel:
		return m.c.MemMB
	}
	return 0
}

func appendHeader(b []byte, m Model, size int64) ([]byte, error) {
	id, params := m.spec()
	if len(params) > 0xFFFF {
		return nil, fmt.Errorf("compress: model parameters of %d bytes exceed 65535", len(params))
	}
	start := len(b)
	b = append(b, Magic...)
	b = append(b, Version, id)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(params)))
	b = append(b, params...)
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:])), nil
}

// Stats describes one Encode call.
type Stats struct {
	In  int64 // original bytes
	Out int64 // compressed bytes, header and trailer included
}

// BitsPerByte is 8·Out/In (0 for empty input).
func (s Stats) BitsPerByte() float64 {
	if s.In == 0 {
		return 0
	}
	return 8 * float64(s.Out) / float64(s.In)
}

// Encode compresses exactly size bytes read from r into w with the model m.
// It is an error if r holds fewer or more than size bytes. r is read
// through a bufio.Reader and w written through a bufio.Writer that Encode
// flushes; nothing is held in memory beyond the model.
func Encode(w io.Writer, r io.Reader, size int64, m Model) (Stats, error) {
	if size < 0 || size > MaxSize {
		return Stats{}, fmt.Errorf("compress: size %d out of range", size)
	}
	hdr, err := appendHeader(nil, m, size)
	if err != nil {
		return Stats{}, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.Write(hdr); err != nil {
		return Stats{}, err
	}
	br := bufio.NewReaderSize(r, 1<<16)
	enc := arith.NewEncoder(bw)
	c := m.newCoder(size)
	crc := crc32.NewIEEE()
	var chunk [4096]byte
	for done := int64(0); done < size; {
		n := int(min(int64(len(chunk)), size-done))
		k, err := io.ReadFull(br, chunk[:n])
		crc.Write(chunk[:k])
		for _, b := range chunk[:k] {
			if err := c.encode(enc, b); err != nil {
				return Stats{}, fmt.Errorf("compress: byte %d: %w", done, err)
			}
			done++
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return Stats{}, fmt.Errorf("compress: input has %d bytes, expected %d", done, size)
			}
			return Stats{}, err
		}
		if enc.Err() != nil {
			return Stats{}, enc.Err()
		}
	}
	if _, err := br.ReadByte(); err == nil {
		return Stats{}, fmt.Errorf("compress: input is longer than the expected %d bytes", size)
	} else if err != io.EOF {
		return Stats{}, err
	}
	if err := enc.Close(); err != nil {
		return Stats{}, err
	}
	var tr [4]byte
	binary.LittleEndian.PutUint32(tr[:], crc.Sum32())
	if _, err := bw.Write(tr[:]); err != nil {
		return Stats{}, err
	}
	if err := bw.Flush(); err != nil {
		return Stats{}, err
	}
	return Stats{In: size, Out: int64(len(hdr)) + enc.BytesWritten() + 4}, nil
}

// EncodeBytes compresses x with the model m.
func EncodeBytes(x []byte, m Model) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := Encode(&buf, bytes.NewReader(x), int64(len(x)), m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadHeader reads and checks the header of a compressed file from r and
// rebuilds its model (nil for an external predictor).
func ReadHeader(r io.Reader) (Header, error) {
	var fixed [8]byte
	if n, err := io.ReadFull(r, fixed[:]); err != nil {
		if n >= 1 && !bytes.HasPrefix([]byte(Magic), fixed[:min(n, 4)]) {
			return Header{}, fmt.Errorf("%w (bad magic)", ErrFormat)
		}
		if err == io.EOF {
			return Header{}, fmt.Errorf("%w (empty input)", ErrFormat)
		}
		return Header{}, fmt.Errorf("%w: header ends after %d bytes", ErrTruncated, n)
	}
	if string(fixed[:4]) != Magic {
		return Header{}, fmt.Errorf("%w (bad magic %q)", ErrFormat, fixed[:4])
	}
	if fixed[4] != Version {
		return Header{}, fmt.Errorf("%w: format version %d (this build reads version %d)", ErrFormat, fixed[4], Version)
	}
	L := int(binary.LittleEndian.Uint16(fixed[6:]))
	rest := make([]byte, L+12)
	if n, err := io.ReadFull(r, rest); err != nil {
		return Header{}, fmt.Errorf("%w: header ends after %d bytes", ErrTruncated, 8+n)
	}
	all := append(fixed[:], rest...)
	want := binary.LittleEndian.Uint32(all[16+L:])
	if got := crc32.ChecksumIEEE(all[:16+L]); got != want {
		return Header{}, fmt.Errorf("%w: header CRC mismatch", ErrCorrupt)
	}
	h := Header{
		Version: int(fixed[4]),
		ModelID: int(fixed[5]),
		Params:  all[8 : 8+L],
		Len:     len(all),
	}
	size := binary.LittleEndian.Uint64(all[8+L:])
	if size > MaxSize {
		return Header{}, fmt.Errorf("%w: original length %d out of range", ErrCorrupt, size)
	}
	h.Size = int64(size)
	var err error
	switch h.ModelID {
	case idPPM:
		h.Model, err = parsePPM(h.Params)
	case idCTW:
		h.Model, err = parseCTW(h.Params)
	case idMix:
		h.Model, err = parseMix(h.Params)
	case idPredictor:
	default:
		err = fmt.Errorf("unknown model id %d", h.ModelID)
	}
	if err != nil {
		return Header{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return h, nil
}

// Decode decompresses a file written by Encode with a built-in model (mix,
// PPM, CTW) from r into w, which it writes through a bufio.Writer that it
// flushes. On error, w may have received part of the output: write to a
// temporary file and keep it only on success (fsutil.WriteFile does).
func Decode(w io.Writer, r io.Reader) (Header, error) {
	return decode(w, r, nil, 0)
}

// DecodeLimit is Decode that refuses, before allocating anything, a file
// whose model's memory budget (Header.MemMB) exceeds maxMemMB MiB (0: no
// limit); the error wraps ErrMemory and names both numbers. The header of
// a compressed file is untrusted input: a crafted one can ask for up to
// MaxMemMB MiB.
func DecodeLimit(w io.Writer, r io.Reader, maxMemMB int) (Header, error) {
	return decode(w, r, nil, maxMemMB)
}

// DecodeWith is Decode for files written with FromPredictor(p): m must be
// a model whose Name equals the one recorded in the file. It also decodes
// built-in models (m is then ignored).
func DecodeWith(w io.Writer, r io.Reader, m Model) (Header, error) {
	return decode(w, r, m, 0)
}

// DecodeBytes decompresses b (see Decode).
func DecodeBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := Decode(&buf, bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decode(w io.Writer, r io.Reader, ext Model, maxMemMB int) (Header, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	h, err := ReadHeader(br)
	if err != nil {
		return h, err
	}
	if mb := h.MemMB(); maxMemMB > 0 && mb > maxMemMB {
		return h, fmt.Errorf("%w: the file's model %s needs up to %d MiB of memory, over the limit of %d MiB (raise the limit if you trust the file)", ErrMemory, h.ModelName(), mb, maxMemMB)
	}
	m := h.Model
	if m == nil {
		if ext == nil {
			return h, fmt.Errorf("compress: the file was written with the external predictor %q, which cannot be rebuilt from the file; decode it with the program (and predictor) that wrote it", h.Params)
		}
		if id, p := ext.spec(); id != idPredictor || !bytes.Equal(p, h.Params) {
			return h, fmt.Errorf("compress: the file was written with predictor %q, not %q", h.Params, ext.Name())
		}
		m = ext
	}
	dec, err := arith.NewDecoder(br)
	if err != nil {
		return h, coderErr(err)
	}
	c := m.newCoder(h.Size)
	bw := bufio.NewWriterSize(w, 1<<16)
	crc := crc32.NewIEEE()
	var chunk [4096]byte
	for done := int64(0); done < h.Size; {
		n := int(min(int64(len(chunk)), h.Size-done))
		for i := range n {
			chunk[i] = c.decode(dec)
		}
		if dec.Err() != nil {
			return h, coderErr(dec.Err())
		}
		crc.Write(chunk[:n])
		if _, err := bw.Write(chunk[:n]); err != nil {
			return h, err
		}
		done += int64(n)
	}
	if err := dec.Finish(); err != nil {
		return h, coderErr(err)
	}
	var tr [4]byte
	if n, err := io.ReadFull(br, tr[:]); err != nil {
		return h, fmt.Errorf("%w: trailer has %d of 4 bytes", ErrTruncated, n)
	}
	if got, want := crc.Sum32(), binary.LittleEndian.Uint32(tr[:]); got != want {
		return h, fmt.Errorf("%w: CRC-32 of the output is %08x, the file records %08x", ErrCorrupt, got, want)
	}
	if _, err := br.ReadByte(); err == nil {
		return h, fmt.Errorf("%w: trailing bytes after the end of the stream", ErrCorrupt)
	} else if err != io.EOF {
		return h, err
	}
	if err := bw.Flush(); err != nil {
		return h, err
	}
	return h, nil
}

func coderErr(err error) error {
	switch {
	case errors.Is(err, arith.ErrTruncated):
		return fmt.Errorf("%w: %v", ErrTruncated, err)
	case errors.Is(err, arith.ErrCorrupt):
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return err
}
