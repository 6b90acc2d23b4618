package dataset

import (
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/npy"

	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// NPY files (NumPy's format, version 1.0): the 6-byte magic "\x93NUMPY",
// the version bytes 1, 0, a little-endian uint16 header length, and an
// ASCII header such as
// "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 512), }"
// padded with spaces and ended by '\n' so that the data starts at a
// multiple of 64 bytes; the array data follows in C (row-major) order.

const npyMagic = "\x93NUMPY"

func checkShape(n int, shape []int) error {
	if len(shape) == 0 {
		return errors.New("dataset: NPY shape has no dimensions")
	}
	prod := 1
	for _, s := range shape {
		if s < 0 {
			return fmt.Errorf("dataset: negative NPY dimension in shape %v", shape)
		}
		prod *= s
	}
	if prod != n {
		return fmt.Errorf("dataset: NPY shape %v holds %d elements, data has %d", shape, prod, n)
	}
	return nil
}

// WriteNPYUint8 writes data as a NumPy array of dtype uint8 ('|u1') and the
// given shape (whose product must be len(data)), in C order, in NPY format
// version 1.0.
func WriteNPYUint8(w io.Writer, data []byte, shape ...int) error {
	if err := checkShape(len(data), shape); err != nil {
		return err
	}
	h, err := npy.Header("|u1", shape)
	if err != nil {
		return err
	}
	if _, err := w.Write(h); err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// WriteNPYInt32 writes data as a NumPy array of dtype little-endian int32
// ('<i4') and the given shape, in C order, in NPY format version 1.0.
func WriteNPYInt32(w io.Writer, data []int32, shape ...int) error {
	if err := checkShape(len(data), shape); err != nil {
		return err
	}
	h, err := npy.Header("<i4", shape)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if _, err := bw.Write(h); err != nil {
		return err
	}
	var buf [4]byte
	for _, v := range data {
		binary.LittleEndian.PutUint32(buf[:], uint32(v))
		if _, err := bw.Write(buf[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ExportNPY writes the data set as NumPy arrays into the directory dir
// (created if needed): symbols.npy, uint8 of shape (windows, N), and
// tree_of.npy, int32 of shape (windows,). Each file is written to a
// temporary file in dir, synced and renamed into place, so it is never
// seen half-written. Load with numpy.load("symbols.npy").
func (d *Dataset) ExportNPY(dir string) error {
	if err := d.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if err := writeAtomic(dir, "symbols.npy", func(w io.Writer) error {
		return WriteNPYUint8(w, d.Symbols, d.Windows(), d.Manifest.N)
	}); err != nil {
		return err
	}
	return writeAtomic(dir, "tree_of.npy", func(w io.Writer) error {
		return WriteNPYInt32(w, d.TreeOf, d.Windows())
	})
}

// writeAtomic writes dir/name atomically (see fsutil.WriteAtomic).
func writeAtomic(dir, name string, write func(io.Writer) error) error {
	p := filepath.Join(dir, name)
	if err := fsutil.WriteAtomic(p, true, write); err != nil {
		return fmt.Errorf("dataset: writing %s: %w", p, err)
	}
	return nil
}

// npyInfo is a parsed NPY 1.0 header.
type npyInfo struct {
	descr        string
	fortranOrder bool
	shape        []int
	dataOffset   int
}

// parseNPYHeader parses the preamble of an NPY 1.0 file (used by tests and
// for checking exports).
func parseNPYHeader(b []byte) (npyInfo, error) {
	var info npyInfo
	if len(b) < 10 || string(b[:6]) != npyMagic {
		return info, errors.New("not an NPY file (bad magic)")
	}
	if b[6] != 1 || b[7] != 0 {
		return info, fmt.Errorf("NPY version %d.%d, want 1.0", b[6], b[7])
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:10]))
	if len(b) < 10+hlen {
		return info, errors.New("NPY header truncated")
	}
	info.dataOffset = 10 + hlen
	h := string(b[10 : 10+hlen])
	if !strings.HasSuffix(h, "\n") {
		return info, errors.New("NPY header does not end in a newline")
	}
	h = strings.TrimSpace(h)
	get := func(key string) (string, error) {
		k := "'" + key + "': "
		i := strings.Index(h, k)
		if i < 0 {
			return "", fmt.Errorf("NPY header lacks %q", key)
		}
		rest := h[i+len(k):]
		if strings.HasPrefix(rest, "(") {
			j := strings.Index(rest, ")")
			if j < 0 {
				return "", errors.New("NPY shape not closed")
			}
			return rest[:j+1], nil
		}
		j := strings.IndexAny(rest, ",}")
		if j < 0 {
			return "", fmt.Errorf("NPY value of %q not terminated", key)
		}
		return strings.TrimSpace(rest[:j]), nil
	}
	d, err := get("descr")
	if err != nil {
		return info, err
	}
	info.descr = strings.Trim(d, "'")
	fo, err := get("fortran_order")
	if err != nil {
		return info, err
	}
	info.fortranOrder = fo == "True"
	sh, err := get("shape")
	if err != nil {
		return info, err
	}
	for _, f := range strings.Split(strings.Trim(sh, "()"), ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return info, fmt.Errorf("NPY shape %s: %w", sh, err)
		}
		info.shape = append(info.shape, n)
	}
	return info, nil
}
