// Package npy reads and writes NumPy .npy arrays of floating-point numbers,
// strictly: the reader accepts exactly the files numpy.save writes for a
// little-endian float32 ('<f4') or float64 ('<f8') array in C order
// (format versions 1.0 and 2.0), checks the header's syntax, the shape and
// the file size before allocating anything, and never evaluates pickles
// (object arrays are rejected). It serves `vomc eval`'s npy method (any
// model's predictive distributions beside CTW) and `vomc eval --export`.
// Its preamble writer (Header) and strict header reader (ReadHeader) are
// the module's only ones; package dataset uses them for its uint8 and
// int32 exports.
//
// The format (numpy.lib.format): the magic "\x93NUMPY", a major and a
// minor version byte, the header length as a little-endian uint16
// (version 1.0) or uint32 (2.0), and an ASCII header — a Python dict
// literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a
// multiple of 64 bytes — followed by the array's elements in C
// (row-major) order.
package npy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
)

const magic = "\x93NUMPY"

// maxHeader bounds the header length (numpy's own limit for reading is
// 10000 bytes by default).
const maxHeader = 1 << 16

// Array is an n-dimensional float array read from a .npy file.
type Array struct {
	// Descr is the element type of the file: "<f4" or "<f8".
	Descr string
	// Shape are the dimensions (C order: the last varies fastest).
	Shape []int
	// Data holds the Π Shape elements, converted to float64 (exactly:
	// every float32 is a float64).
	Data []float64
}

// Info is a parsed .npy preamble (see ReadHeader).
type Info struct {
	// Descr is the element type as the header names it ("<f8", "<f4",
	// "|u1", "<i4", …); ReadHeader does not check it.
	Descr string
	// Fortran is the header's fortran_order.
	Fortran bool
	// Shape are the dimensions (nil for a scalar).
	Shape []int
	// DataOffset is the length of the preamble (magic, version, header
	// length and header), where the data starts.
	DataOffset int
}

// ReadHeader reads the preamble of a .npy file (format version 1.0 or
// 2.0) from r and parses its header strictly (exactly the keys descr,
// fortran_order and shape, Python literal syntax, non-negative
// dimensions), leaving r at the first byte of the data. It reads nothing
// beyond the preamble and checks neither the element type nor the data.
func ReadHeader(r io.Reader) (Info, error) {
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return Info{}, fmt.Errorf("npy: reading the magic: %w", noEOF(err))
	}
	if string(pre[:6]) != magic {
		return Info{}, errors.New("npy: not a .npy file (bad magic)")
	}
	var hlen, off int
	switch v := [2]byte{pre[6], pre[7]}; v {
	case [2]byte{1, 0}:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return Info{}, fmt.Errorf("npy: reading the header length: %w", noEOF(err))
		}
		hlen, off = int(binary.LittleEndian.Uint16(b)), 10
	case [2]byte{2, 0}:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return Info{}, fmt.Errorf("npy: reading the header length: %w", noEOF(err))
		}
		n := binary.LittleEndian.Uint32(b)
		if n > maxHeader {
			return Info{}, fmt.Errorf("npy: header of %d bytes (at most %d)", n, maxHeader)
		}
		hlen, off = int(n), 12
	default:
		return Info{}, fmt.Errorf("npy: format version %d.%d (want 1.0 or 2.0)", v[0], v[1])
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return Info{}, fmt.Errorf("npy: reading the %d-byte header: %w", hlen, noEOF(err))
	}
	h, err := parseHeader(hb)
	if err != nil {
		return Info{}, err
	}
	h.DataOffset = off + hlen
	return h, nil
}

// Read reads one .npy array from r. It refuses files whose data would
// exceed maxBytes bytes (≤ 0: no limit other than the address space)
// before allocating, and any bytes after the data.
func Read(r io.Reader, maxBytes int64) (*Array, error) {
	br := bufio.NewReader(r)
	h, err := ReadHeader(br)
	if err != nil {
		return nil, err
	}
	var size int
	switch h.Descr {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	default:
		return nil, fmt.Errorf("npy: element type %q (want '<f4' or '<f8': little-endian float32 or float64)", h.Descr)
	}
	if h.Fortran {
		return nil, errors.New("npy: Fortran-order array (want C order: numpy.ascontiguousarray)")
	}
	n := 1
	for _, d := range h.Shape {
		if d != 0 && n > math.MaxInt/8/d {
			return nil, fmt.Errorf("npy: shape %v is too large", h.Shape)
		}
		n *= d
	}
	if maxBytes > 0 && int64(n)*int64(size) > maxBytes {
		return nil, fmt.Errorf("npy: shape %v needs %d bytes of data, more than the limit %d", h.Shape, int64(n)*int64(size), maxBytes)
	}
	a := &Array{Descr: h.Descr, Shape: h.Shape, Data: make([]float64, 0, min(n, 1<<20))}
	buf := make([]byte, 1<<16)
	for done := 0; done < n; {
		k := min(n-done, len(buf)/size)
		if _, err := io.ReadFull(br, buf[:k*size]); err != nil {
			return nil, fmt.Errorf("npy: data truncated after %d of %d elements: %w", done, n, noEOF(err))
		}
		for i := range k {
			if size == 4 {
				a.Data = append(a.Data, float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))))
			} else {
				a.Data = append(a.Data, math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:])))
			}
		}
		done += k
	}
	if _, err := br.ReadByte(); err != io.EOF {
		if err == nil {
			return nil, errors.New("npy: bytes after the array's data")
		}
		return nil, fmt.Errorf("npy: %w", err)
	}
	return a, nil
}

// ReadFile reads the .npy file at path (see Read); the data may not
// exceed the file's size, which bounds what is allocated.
func ReadFile(path string) (*Array, error) { return fsutil.ReadSized(path, Read) }

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHeader parses the header dict strictly: exactly the keys descr,
// fortran_order and shape, Python literal syntax, spaces, and a final
// '\n'.
func parseHeader(b []byte) (Info, error) {
	var h Info
	s := string(b)
	if !strings.HasSuffix(s, "\n") {
		return h, errors.New("npy: header does not end in a newline")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 && s[i] != '\n' || s[i] > 0x7e {
			return h, fmt.Errorf("npy: header has a non-ASCII or control byte at %d", i)
		}
	}
	p := &parser{s: strings.TrimRight(s, " \n")}
	if !p.eat('{') {
		return h, p.errf("'{'")
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, ok := p.str()
		if !ok {
			return h, p.errf("a quoted key")
		}
		if seen[key] {
			return h, fmt.Errorf("npy: header repeats %q", key)
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return h, p.errf("':'")
		}
		p.space()
		switch key {
		case "descr":
			if h.Descr, ok = p.str(); !ok {
				return h, p.errf("a quoted descr")
			}
		case "fortran_order":
			switch {
			case p.word("False"):
			case p.word("True"):
				h.Fortran = true
			default:
				return h, p.errf("True or False")
			}
		case "shape":
			sh, err := p.tuple()
			if err != nil {
				return h, err
			}
			h.Shape = sh
		default:
			return h, fmt.Errorf("npy: unknown header key %q", key)
		}
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return h, p.errf("',' or '}'")
		}
		break
	}
	if p.i != len(p.s) {
		return h, p.errf("the end of the header")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("npy: header lacks %q", k)
		}
	}
	return h, nil
}

type parser struct {
	s string
	i int
}

func (p *parser) errf(want string) error {
	return fmt.Errorf("npy: header: want %s at byte %d of %q", want, p.i, p.s)
}

func (p *parser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *parser) word(w string) bool {
	if strings.HasPrefix(p.s[p.i:], w) {
		p.i += len(w)
		return true
	}
	return false
}

// str parses a '…' or "…" literal without escapes.
func (p *parser) str() (string, bool) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", false
	}
	q := p.s[p.i]
	j := strings.IndexByte(p.s[p.i+1:], q)
	if j < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+j]
	if strings.ContainsRune(v, '\\') {
		return "", false
	}
	p.i += j + 2
	return v, true
}

// tuple parses (), (n,) or (n, m, …) of non-negative decimal integers.
func (p *parser) tuple() ([]int, error) {
	if !p.eat('(') {
		return nil, p.errf("'('")
	}
	var out []int
	for {
		p.space()
		if p.eat(')') {
			if len(out) == 1 {
				return nil, p.errf("',' after the single dimension")
			}
			return out, nil
		}
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i || j-p.i > 18 {
			return nil, p.errf("a dimension (non-negative integer)")
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, p.errf("a dimension")
		}
		p.i = j
		out = append(out, n)
		p.space()
		if p.eat(',') {
			if len(out) == 1 {
				p.space()
				if p.eat(')') {
					return out, nil
				}
			}
			continue
		}
		p.space()
		if !p.eat(')') {
			return nil, p.errf("',' or ')'")
		}
		if len(out) == 1 {
			return nil, p.errf("',' after the single dimension")
		}
		return out, nil
	}
}

// Header returns the .npy 1.0 preamble (magic, version, length, header
// dict padded to a multiple of 64 bytes) of an array with element type
// descr ("<f8", "<f4") and the given shape.
func Header(descr string, shape []int) ([]byte, error) {
	dims := make([]string, len(shape))
	for i, s := range shape {
		if s < 0 {
			return nil, fmt.Errorf("npy: negative dimension %d", s)
		}
		dims[i] = strconv.Itoa(s)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	total := len(magic) + 4 + len(dict) + 1
	pad := (64 - total%64) % 64
	hlen := len(dict) + pad + 1
	if hlen > 0xffff {
		return nil, errors.New("npy: header too long")
	}
	b := append([]byte(magic), 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(hlen))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n'), nil
}

// Writer streams a float64 ('<f8') array of a known shape: the header is
// written by NewWriter, the elements by Write in C order, and Close checks
// that exactly Π shape elements were written.
type Writer struct {
	w         io.Writer
	want, got int
	buf       []byte
}

// NewWriter writes the header of a float64 array of the given shape to w.
func NewWriter(w io.Writer, shape ...int) (*Writer, error) {
	h, err := Header("<f8", shape)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(h); err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Writer{w: w, want: n}, nil
}

// Write appends elements (little-endian float64).
func (w *Writer) Write(v []float64) error {
	if w.got+len(v) > w.want {
		return fmt.Errorf("npy: %d elements written to an array of %d", w.got+len(v), w.want)
	}
	w.buf = w.buf[:0]
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(x))
	}
	w.got += len(v)
	_, err := w.w.Write(w.buf)
	return err
}

// Close reports an error unless every element was written.
func (w *Writer) Close() error {
	if w.got != w.want {
		return fmt.Errorf("npy: %d of %d elements written", w.got, w.want)
	}
	return nil
}
