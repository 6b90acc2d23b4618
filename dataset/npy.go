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
)

// NPY files (NumPy's format, version 1.0; see package npy, which writes
// the preamble and parses it): the header names the element type, '|u1'
// or '<i4' here, and the shape, e.g.
// "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 512), }";
// the array data follows in C (row-major) order.

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
