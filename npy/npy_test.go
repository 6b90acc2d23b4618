package npy

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
)

// file builds a .npy file of the given version, header dict and data.
func file(major byte, dict string, data []byte) []byte {
	total := 6 + 2 + 2 + len(dict) + 1
	if major == 2 {
		total += 2
	}
	pad := (64 - total%64) % 64
	h := dict + strings.Repeat(" ", pad) + "\n"
	b := append([]byte(magic), major, 0)
	if major == 2 {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(h)))
	} else {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(h)))
	}
	return append(append(b, h...), data...)
}

func f4(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func f8(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	data := []float64{0.25, 0.5, 0.25, 1, 0, 0, math.Inf(1), -0.5, 1e-300, 3, 4, 5}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 2, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(data[:5]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(data[5:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%64 != len(data)*8%64 {
		t.Errorf("data does not start at a multiple of 64: %d bytes", buf.Len())
	}
	a, err := Read(bytes.NewReader(buf.Bytes()), 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Descr != "<f8" || !reflect.DeepEqual(a.Shape, []int{2, 2, 3}) || !reflect.DeepEqual(a.Data, data) {
		t.Errorf("read %+v", a)
	}
	// too few / too many elements
	w, _ = NewWriter(&bytes.Buffer{}, 3)
	if err := w.Write([]float64{1, 2, 3, 4}); err == nil {
		t.Error("writing 4 elements into 3 accepted")
	}
	w, _ = NewWriter(&bytes.Buffer{}, 3)
	w.Write([]float64{1})
	if err := w.Close(); err == nil {
		t.Error("closing after 1 of 3 elements accepted")
	}
}

func TestReadVariants(t *testing.T) {
	cases := []struct {
		name  string
		b     []byte
		shape []int
		data  []float64
	}{
		{"f4 v1", file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", f4(0.5, 0.25, 1, 0)), []int{2, 2}, []float64{0.5, 0.25, 1, 0}},
		{"f8 v2", file(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f8(1, 2, 3)), []int{3}, []float64{1, 2, 3}},
		{"scalar", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8(7)), nil, []float64{7}},
		{"empty", file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", nil), []int{0, 3}, []float64{}},
		{"key order, no trailing comma", file(1, "{'shape': (1, 1), 'fortran_order': False, 'descr': '<f8'}", f8(2)), []int{1, 1}, []float64{2}},
	}
	for _, c := range cases {
		a, err := Read(bytes.NewReader(c.b), 0)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(a.Shape, c.shape) || !reflect.DeepEqual(a.Data, c.data) {
			t.Errorf("%s: shape %v data %v", c.name, a.Shape, a.Data)
		}
	}
}

func TestReadHeader(t *testing.T) {
	cases := []struct {
		name  string
		major byte
		dict  string
		data  []byte
		want  Info
	}{
		{"u1 v1", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 5), }", make([]byte, 15), Info{Descr: "|u1", Shape: []int{3, 5}}},
		{"i4 v2", 2, "{'descr': '<i4', 'fortran_order': True, 'shape': (2,), }", make([]byte, 8), Info{Descr: "<i4", Fortran: true, Shape: []int{2}}},
		{"scalar", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8(7), Info{Descr: "<f8"}},
	}
	for _, c := range cases {
		b := file(c.major, c.dict, c.data)
		c.want.DataOffset = len(b) - len(c.data)
		r := bytes.NewReader(b)
		h, err := ReadHeader(r)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(h, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, h, c.want)
		}
		if rest := int(r.Size()) - r.Len(); rest != h.DataOffset {
			t.Errorf("%s: read %d bytes, preamble is %d", c.name, rest, h.DataOffset)
		}
	}
	// the header written by Header parses back
	b, err := Header("<f4", []int{7, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(bytes.NewReader(b))
	if err != nil || h.Descr != "<f4" || h.Fortran || !reflect.DeepEqual(h.Shape, []int{7, 0, 2}) || h.DataOffset != len(b) || len(b)%64 != 0 {
		t.Errorf("Header's preamble read as %+v, %v", h, err)
	}
}

func TestReadRejects(t *testing.T) {
	good := "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }"
	cases := map[string][]byte{
		"bad magic":    append([]byte("\x93NUMPX\x01\x00"), file(1, good, f8(1, 2))[8:]...),
		"version 3":    append(append([]byte(magic), 3, 0), file(1, good, f8(1, 2))[8:]...),
		"big endian":   file(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", f8(1, 2)),
		"object":       file(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", f8(1, 2)),
		"int":          file(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", f8(1, 2)),
		"fortran":      file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", f8(1, 2)),
		"missing key":  file(1, "{'descr': '<f8', 'shape': (2,), }", f8(1, 2)),
		"unknown key":  file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1, }", f8(1, 2)),
		"repeated key": file(1, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", f8(1, 2)),
		"1-tuple":      file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }", f8(1, 2)),
		"negative dim": file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }", f8(1, 2)),
		"truncated":    file(1, good, f8(1)),
		"trailing":     file(1, good, f8(1, 2, 3)),
		"no newline":   append(append([]byte(magic), 1, 0, byte(len(good)), 0), append([]byte(good), f8(1, 2)...)...),
		"short header": append([]byte(magic), 1, 0, 200, 0, '{'),
		"huge shape":   file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (100000000000, 100000000000), }", nil),
		"python call":  file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': __import__('os'), }", f8(1, 2)),
		"empty":        nil,
		"magic only":   []byte(magic),
	}
	for name, b := range cases {
		if a, err := Read(bytes.NewReader(b), 0); err == nil {
			t.Errorf("%s: accepted: %+v", name, a)
		}
	}
	// the size limit is checked before reading the data
	b := file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }", nil)
	if _, err := Read(bytes.NewReader(b), 1<<20); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("an 8 MB array under a 1 MB limit: %v", err)
	}
}

// FuzzReadNPY: Read never panics, and whatever it accepts has Π shape
// elements and survives a float64 round trip bit for bit.
func FuzzReadNPY(f *testing.F) {
	good := "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"
	f.Add(file(1, good, f8(0.1, 0.2, 0.7, 1, 0, 0)))
	f.Add(file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4(1, 2, 3)))
	f.Add(file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f8(7)))
	f.Add(file(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (1,), }", f8(7)))
	f.Add(file(1, good, f8(1)))
	f.Add([]byte(magic + "\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bytes.NewReader(b), 1<<22)
		if err != nil {
			return
		}
		n := 1
		for _, d := range a.Shape {
			n *= d
		}
		if len(a.Data) != n {
			t.Fatalf("shape %v but %d elements", a.Shape, len(a.Data))
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, a.Shape...)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(a.Data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b2, err := Read(&buf, 0)
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if !reflect.DeepEqual(b2.Shape, a.Shape) || len(b2.Data) != len(a.Data) {
			t.Fatalf("round trip: %v vs %v", b2.Shape, a.Shape)
		}
		for i := range a.Data {
			if math.Float64bits(a.Data[i]) != math.Float64bits(b2.Data[i]) {
				t.Fatalf("element %d: %v vs %v", i, a.Data[i], b2.Data[i])
			}
		}
	})
}
