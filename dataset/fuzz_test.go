package dataset

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/vomc/vomc/npy"
)

// fuzzSeedDataset builds a tiny data set for the fuzz seeds.
func fuzzSeedDataset(f *testing.F) *Dataset {
	cfg := smallConfig(true)
	cfg.K, cfg.NK, cfg.N = 3, 24, 8
	cfg.Prior.Depths = []int{2}
	return mustBuild(f, cfg, 1)
}

// FuzzReadManifest feeds arbitrary bytes to ReadManifest: it must return
// an error or a manifest that passes its own checks and round-trips, never
// panic or hang.
func FuzzReadManifest(f *testing.F) {
	d := fuzzSeedDataset(f)
	dir := filepath.Join(f.TempDir(), "ds")
	if err := d.Write(dir, false); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"leaves": "dirichlet"`), []byte(`"leaves": null`), 1))
	f.Add(bytes.Replace(good, []byte(`"leaves": "dirichlet"`), []byte(`"leaves": ""`), 1))
	f.Add(bytes.Replace(good, []byte(`"k": 3`), []byte(`"k": 2147483647`), 1))
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadManifest(bytes.NewReader(data))
		if err != nil {
			if m != nil {
				t.Fatal("error with a manifest")
			}
			return
		}
		if len(m.Trees) != m.K || m.Windows != m.K*m.WindowsPerTree {
			t.Fatalf("accepted an inconsistent manifest: k=%d trees=%d windows=%d", m.K, len(m.Trees), m.Windows)
		}
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted manifest does not marshal: %v", err)
		}
		if _, err := ReadManifest(bytes.NewReader(out)); err != nil {
			t.Fatalf("accepted manifest does not round-trip: %v", err)
		}
	})
}

// FuzzRead writes an arbitrary manifest, symbols file and tree-index file
// into a directory and reads it: Read must return an error or a data set
// whose symbols and tree indices are in range, never panic.
func FuzzRead(f *testing.F) {
	d := fuzzSeedDataset(f)
	dir := filepath.Join(f.TempDir(), "ds")
	if err := d.Write(dir, false); err != nil {
		f.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	m, s, to := read(ManifestFile), read(SymbolsFile), read(TreeOfFile)
	f.Add(m, s, to)
	f.Add(m, s[:len(s)-1], to)
	bad := append([]byte(nil), s...)
	bad[0] = 200
	f.Add(m, bad, to)
	f.Add(m, s, to[:4])
	f.Add([]byte(`{}`), []byte{}, []byte{})
	// One directory for all inputs: a fresh t.TempDir per input (create,
	// then remove recursively) cost more than the read itself. Inputs are
	// small; larger ones only slow the search down.
	work := f.TempDir()
	f.Fuzz(func(t *testing.T, manifest, symbols, treeOf []byte) {
		if len(manifest)+len(symbols)+len(treeOf) > 1<<16 {
			t.Skip("input larger than 64 KiB")
		}
		dir := work
		for name, b := range map[string][]byte{ManifestFile: manifest, SymbolsFile: symbols, TreeOfFile: treeOf} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d, err := Read(dir)
		if err != nil {
			return
		}
		A, N := d.Manifest.Prior.A, d.Manifest.N
		if len(d.Symbols) != d.Windows()*N {
			t.Fatalf("%d symbols for %d windows of %d", len(d.Symbols), d.Windows(), N)
		}
		for i, c := range d.Symbols {
			if int(c) >= A {
				t.Fatalf("symbol %d at %d ≥ A = %d", c, i, A)
			}
		}
		for w, k := range d.TreeOf {
			if k < 0 || int(k) >= len(d.Trees) {
				t.Fatalf("window %d: tree %d of %d", w, k, len(d.Trees))
			}
		}
	})
}

// FuzzNPYHeader feeds arbitrary bytes, seeded with the files this package
// writes, to the NPY header parser (npy.ReadHeader): it must return an
// error or a header whose data offset lies inside the input.
func FuzzNPYHeader(f *testing.F) {
	var b bytes.Buffer
	if err := WriteNPYUint8(&b, []byte{1, 2, 3, 4, 5, 6}, 2, 3); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	b.Reset()
	if err := WriteNPYInt32(&b, []int32{1, 2}, 2); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	hdr := append([]byte("\x93NUMPY"), 1, 0, 0, 0)
	binary.LittleEndian.PutUint16(hdr[8:], 0xffff)
	f.Add(hdr)
	f.Add([]byte("\x93NUMPY\x01\x00\x10\x00{'descr': '|u1',"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := npy.ReadHeader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if info.DataOffset < 10 || info.DataOffset > len(data) {
			t.Fatalf("data offset %d outside the %d-byte input", info.DataOffset, len(data))
		}
	})
}
