package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vomc/vomc/npy"
)

func TestNPYHeader(t *testing.T) {
	for _, shape := range [][]int{{0}, {7}, {3, 512}, {123456, 0}, {0, 1536}, {2, 3, 4}} {
		n := 1
		for _, s := range shape {
			n *= s
		}
		var buf bytes.Buffer
		if err := WriteNPYUint8(&buf, make([]byte, n), shape...); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		info, err := npy.ReadHeader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if info.Descr != "|u1" || info.Fortran || !slices.Equal(info.Shape, shape) {
			t.Errorf("shape %v: parsed %+v", shape, info)
		}
		if info.DataOffset%64 != 0 || len(b)-info.DataOffset != n {
			t.Errorf("shape %v: data at %d, %d data bytes", shape, info.DataOffset, len(b)-info.DataOffset)
		}
		if len(shape) == 1 && !strings.Contains(string(b[:info.DataOffset]), "'shape': ("+strconv.Itoa(shape[0])+",)") {
			t.Errorf("1-d shape tuple lacks its comma: %q", b[:info.DataOffset])
		}
	}
	var buf bytes.Buffer
	if err := WriteNPYUint8(&buf, make([]byte, 5), 2, 3); err == nil {
		t.Error("wrong shape accepted")
	}
	if err := WriteNPYInt32(&buf, make([]int32, 6), 2, -3); err == nil {
		t.Error("negative dimension accepted")
	}
	if err := WriteNPYInt32(&buf, nil); err == nil {
		t.Error("empty shape accepted")
	}
	if _, err := npy.ReadHeader(strings.NewReader("not an npy file")); err == nil {
		t.Error("bad magic accepted")
	}
}

func TestExportNPY(t *testing.T) {
	d := mustBuild(t, smallConfig(false), 2)
	dir := filepath.Join(t.TempDir(), "npy")
	if err := d.ExportNPY(dir); err != nil {
		t.Fatal(err)
	}
	sym, _ := os.ReadFile(filepath.Join(dir, "symbols.npy"))
	info, err := npy.ReadHeader(bytes.NewReader(sym))
	if err != nil {
		t.Fatal(err)
	}
	if info.Descr != "|u1" || !slices.Equal(info.Shape, []int{d.Windows(), 256}) || !bytes.Equal(sym[info.DataOffset:], d.Symbols) {
		t.Errorf("symbols.npy: %+v", info)
	}
	tof, _ := os.ReadFile(filepath.Join(dir, "tree_of.npy"))
	info, err = npy.ReadHeader(bytes.NewReader(tof))
	if err != nil {
		t.Fatal(err)
	}
	if info.Descr != "<i4" || !slices.Equal(info.Shape, []int{d.Windows()}) || len(tof)-info.DataOffset != 4*d.Windows() {
		t.Fatalf("tree_of.npy: %+v", info)
	}
	for w := range d.Windows() {
		if int32(binary.LittleEndian.Uint32(tof[info.DataOffset+4*w:])) != d.TreeOf[w] {
			t.Fatalf("tree_of.npy[%d]", w)
		}
	}
	// Exporting again replaces the files; no temporaries are left.
	if err := d.ExportNPY(dir); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("%d entries in the export directory", len(entries))
	}
	bad := *d
	bad.Symbols = bad.Symbols[:10]
	if err := bad.ExportNPY(filepath.Join(t.TempDir(), "bad")); err == nil {
		t.Error("exported an inconsistent data set")
	}
}

// TestExportNPYNumpy loads the export with NumPy when python3 and numpy are
// installed, and skips otherwise.
func TestExportNPYNumpy(t *testing.T) {
	if err := exec.Command("python3", "-c", "import numpy").Run(); err != nil {
		t.Skip("python3 with numpy not available")
	}
	d := mustBuild(t, smallConfig(true), 2)
	dir := t.TempDir()
	if err := d.ExportNPY(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw.bin"), d.Symbols, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, numpy as np
d = sys.argv[1]
s = np.load(d + "/symbols.npy")
t = np.load(d + "/tree_of.npy")
raw = np.fromfile(d + "/raw.bin", dtype=np.uint8)
assert s.dtype == np.uint8 and s.shape == (int(sys.argv[2]), int(sys.argv[3])), (s.dtype, s.shape)
assert t.dtype == np.int32 and t.shape == (int(sys.argv[2]),), (t.dtype, t.shape)
assert s.flags["C_CONTIGUOUS"]
assert (s.reshape(-1) == raw).all()
assert (t == np.arange(t.shape[0]) // int(sys.argv[4])).all()
print("ok", s.shape, t.shape)
`
	out, err := exec.Command("python3", "-c", script, dir, strconv.Itoa(d.Windows()), strconv.Itoa(d.Manifest.N), strconv.Itoa(d.Manifest.WindowsPerTree)).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy check failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
