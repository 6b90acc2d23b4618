package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/panics"
	"github.com/vomc/vomc/source"
)

func smallConfig(fresh bool) Config {
	return Config{
		Prior: source.Prior{A: 3, Depths: []int{1, 2, 3, 4, 5}, Lambda: 0.15, Alpha: []float64{0.5}},
		K:     40, NK: 1100, N: 256, Fresh: fresh, Seed: 12345,
	}
}

func mustBuild(t testing.TB, cfg Config, workers int) *Dataset {
	t.Helper()
	d, err := Build(cfg, workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func treesJSON(t testing.TB, trees []*source.Tree) string {
	t.Helper()
	b, err := json.Marshal(trees)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuildWorkerIndependence: the same seed gives the same bytes whatever
// the number of workers.
func TestBuildWorkerIndependence(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		cfg := smallConfig(fresh)
		a := mustBuild(t, cfg, 1)
		b := mustBuild(t, cfg, 4)
		if !bytes.Equal(a.Symbols, b.Symbols) || a.Checksum() != b.Checksum() {
			t.Errorf("fresh=%v: 1 and 4 workers gave different symbols", fresh)
		}
		if a.Manifest.SymbolsSHA256 != b.Manifest.SymbolsSHA256 || a.Manifest.TreeOfSHA256 != b.Manifest.TreeOfSHA256 {
			t.Errorf("fresh=%v: checksums differ", fresh)
		}
		if treesJSON(t, a.Trees) != treesJSON(t, b.Trees) {
			t.Errorf("fresh=%v: trees differ", fresh)
		}
		ma, _ := json.Marshal(a.Manifest)
		mb, _ := json.Marshal(b.Manifest)
		if !bytes.Equal(ma, mb) {
			t.Errorf("fresh=%v: manifests differ", fresh)
		}
		c := cfg
		c.Seed++
		if bytes.Equal(mustBuild(t, c, 2).Symbols, a.Symbols) {
			t.Error("a different seed gave the same data")
		}
	}
	train, test := mustBuild(t, smallConfig(false), 2), mustBuild(t, smallConfig(true), 2)
	if treesJSON(t, train.Trees) != treesJSON(t, test.Trees) {
		t.Error("Fresh changed the trees drawn")
	}
	if bytes.Equal(train.Symbols, test.Symbols) {
		t.Error("Fresh did not change the windows")
	}
}

// TestBuildDerivation documents how windows are derived from the seed.
func TestBuildDerivation(t *testing.T) {
	for _, fresh := range []bool{false, true} {
		cfg := smallConfig(fresh)
		d := mustBuild(t, cfg, 3)
		W, N := cfg.WindowsPerTree(), cfg.N
		if W != 4 || d.Windows() != cfg.K*W || len(d.Symbols) != d.Windows()*N {
			t.Fatalf("W=%d windows=%d", W, d.Windows())
		}
		for i := range cfg.K {
			rng := source.RNG(cfg.Seed, uint64(i))
			tree, err := cfg.Prior.Sample(rng)
			if err != nil {
				t.Fatal(err)
			}
			if treesJSON(t, []*source.Tree{tree}) != treesJSON(t, d.Trees[i:i+1]) {
				t.Fatalf("tree %d is not Sample(RNG(seed, %d))", i, i)
			}
			var want []byte
			if fresh {
				for range W {
					x, _ := tree.Generate(rng, N, nil)
					want = append(want, x...)
				}
			} else {
				want, _ = tree.Generate(rng, W*N, nil)
			}
			if !bytes.Equal(want, d.Symbols[i*W*N:(i+1)*W*N]) {
				t.Fatalf("fresh=%v: windows of tree %d differ from the documented derivation", fresh, i)
			}
			for w := range W {
				if d.TreeOf[i*W+w] != int32(i) || !bytes.Equal(d.Window(i*W+w), want[w*N:(w+1)*N]) {
					t.Fatal("TreeOf / Window")
				}
				// Every symbol had positive probability under its tree.
				init := []byte(nil)
				if !fresh && w > 0 {
					init = want[:w*N]
				}
				ll, err := tree.LogLikelihood(d.Window(i*W+w), init)
				if err != nil || math.IsInf(ll, 0) {
					t.Fatalf("window log-likelihood %v %v", ll, err)
				}
			}
		}
		if d.Window(-1) != nil || d.Window(d.Windows()) != nil {
			t.Error("Window out of range is not nil")
		}
	}
}

func TestBuildProgress(t *testing.T) {
	cfg := smallConfig(false)
	last, calls := 0, 0
	_, err := Build(cfg, 4, func(done, total int) {
		calls++
		if done != last+1 || total != cfg.K {
			t.Errorf("progress(%d, %d) after %d", done, total, last)
		}
		last = done
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != cfg.K || last != cfg.K {
		t.Errorf("%d progress calls, last %d", calls, last)
	}
	if _, err := Build(cfg, 0, nil); err != nil {
		t.Errorf("workers = 0: %v", err)
	}
}

// TestBuildPanic: a panic on a worker (here of the progress callback, on
// the fifth tree) makes Build return an error with the panic's value and
// the worker's stack, for one worker and several.
func TestBuildPanic(t *testing.T) {
	cfg := smallConfig(true)
	for _, workers := range []int{1, 4} {
		_, err := Build(cfg, workers, func(done, _ int) {
			if done == 5 {
				progressBug()
			}
		})
		var pe *panics.Error
		if !errors.As(err, &pe) || pe.Value != "progress bug" || !strings.Contains(err.Error(), "dataset.progressBug") {
			t.Errorf("%d workers: error %v, want the worker's *panics.Error", workers, err)
		}
	}
}

func progressBug() { panic("progress bug") }

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		mod  func(c *Config)
		want string
	}{
		{"prior", func(c *Config) { c.Prior.Lambda = 1 }, "prior"},
		{"K", func(c *Config) { c.K = 0 }, "K (number of trees) = 0"},
		{"N", func(c *Config) { c.N = 0 }, "N (window length) = 0"},
		{"NK", func(c *Config) { c.NK = 100 }, "NK (sequence length per tree) = 100 is shorter than the window N = 256"},
		{"memory", func(c *Config) { c.K, c.NK = 1_000_000, 100_000 }, "GiB"},
		{"tree memory", func(c *Config) {
			c.Prior = source.Prior{A: 16, Depths: []int{6}, Lambda: 0.01, Alpha: []float64{1}}
			c.K = 10000
		}, "GiB"},
	}
	for _, c := range cases {
		cfg := smallConfig(false)
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if _, err := Build(cfg, 1, nil); err == nil {
			t.Errorf("%s: Build accepted", c.name)
		}
	}
}

func TestWriteRead(t *testing.T) {
	d := mustBuild(t, smallConfig(true), 2)
	parent := t.TempDir()
	dir := filepath.Join(parent, "sub", "ds")
	if err := d.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	e, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Symbols, e.Symbols) || len(d.TreeOf) != len(e.TreeOf) || treesJSON(t, d.Trees) != treesJSON(t, e.Trees) {
		t.Fatal("round trip changed the data set")
	}
	for i := range d.TreeOf {
		if d.TreeOf[i] != e.TreeOf[i] {
			t.Fatal("tree_of changed")
		}
	}
	if e.Config().Seed != 12345 || !e.Config().Fresh || e.Manifest.Tool != ToolVersion || e.Manifest.Windows != d.Windows() {
		t.Errorf("manifest: %+v", e.Manifest.Config())
	}
	// The files have the documented sizes and the manifest is readable.
	st, _ := os.Stat(filepath.Join(dir, SymbolsFile))
	tt, _ := os.Stat(filepath.Join(dir, TreeOfFile))
	if st.Size() != int64(d.Windows()*256) || tt.Size() != int64(4*d.Windows()) {
		t.Errorf("file sizes %d, %d", st.Size(), tt.Size())
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if !json.Valid(raw) || !strings.HasPrefix(string(raw), "{\n  \"format\": \"vomc-dataset\",\n  \"version\": 1,") {
		t.Errorf("manifest starts %q", raw[:min(80, len(raw))])
	}
	// No temporary directories are left behind.
	entries, _ := os.ReadDir(filepath.Join(parent, "sub"))
	if len(entries) != 1 {
		t.Errorf("parent holds %d entries", len(entries))
	}
}

func TestWriteRefusal(t *testing.T) {
	d := mustBuild(t, smallConfig(false), 2)
	parent := t.TempDir()

	// Existing empty directory: fine.
	empty := filepath.Join(parent, "empty")
	os.Mkdir(empty, 0o755)
	if err := d.Write(empty, false); err != nil {
		t.Fatal(err)
	}
	// Existing data set: refused without force, replaced with force.
	if err := d.Write(empty, false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("overwrite without force: %v", err)
	}
	d2 := mustBuild(t, Config{Prior: d.Manifest.Prior, K: 3, NK: 512, N: 512, Seed: 9}, 1)
	if err := d2.Write(empty, true); err != nil {
		t.Fatal(err)
	}
	if e, err := Read(empty); err != nil || e.Manifest.K != 3 {
		t.Errorf("replaced data set: %v", err)
	}
	// A non-empty directory that is not a data set: refused even with force.
	other := filepath.Join(parent, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "precious.txt"), []byte("keep"), 0o644)
	if err := d.Write(other, true); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("force over a non-data-set: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "precious.txt")); string(b) != "keep" {
		t.Error("non-data-set directory was touched")
	}
	// A file.
	file := filepath.Join(parent, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	if err := d.Write(file, true); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("write over a file: %v", err)
	}
	// An invalid data set is not written at all.
	bad := mustBuild(t, smallConfig(false), 2)
	bad.Symbols[17] = 3
	target := filepath.Join(parent, "bad")
	if err := bad.Write(target, false); err == nil || !strings.Contains(err.Error(), "symbol 3 at byte 17 (window 0, position 17)") {
		t.Errorf("invalid data set: %v", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Error("invalid data set left a directory")
	}
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left-over temporary %s", e.Name())
		}
	}
}

// written returns a fresh data set directory for corruption tests.
func written(t *testing.T) (string, *Dataset) {
	t.Helper()
	d := mustBuild(t, Config{Prior: source.PaperPrior(2), K: 5, NK: 300, N: 100, Seed: 1}, 2)
	dir := filepath.Join(t.TempDir(), "ds")
	if err := d.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir, d
}

func editManifest(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("manifest lacks %q", old)
	}
	os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		name    string
		corrupt func(t *testing.T, dir string, d *Dataset)
		want    []string
	}{
		{"truncated symbols", func(t *testing.T, dir string, d *Dataset) {
			os.Truncate(filepath.Join(dir, SymbolsFile), 1000)
		}, []string{"symbols.bin is truncated: expected 1500 bytes (k·⌊nk/n⌋·n = 5·3·100), got 1000"}},
		{"long symbols", func(t *testing.T, dir string, d *Dataset) {
			f, _ := os.OpenFile(filepath.Join(dir, SymbolsFile), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{0})
			f.Close()
		}, []string{"too long: expected 1500 bytes", "got 1501"}},
		{"missing symbols", func(t *testing.T, dir string, d *Dataset) {
			os.Remove(filepath.Join(dir, SymbolsFile))
		}, []string{"symbols.bin", "no such file"}},
		{"truncated tree_of", func(t *testing.T, dir string, d *Dataset) {
			os.Truncate(filepath.Join(dir, TreeOfFile), 7)
		}, []string{"tree_of.bin is truncated: expected 60 bytes", "got 7"}},
		{"corrupted byte", func(t *testing.T, dir string, d *Dataset) {
			p := filepath.Join(dir, SymbolsFile)
			b, _ := os.ReadFile(p)
			b[700] = (b[700] + 1) % 3
			os.WriteFile(p, b, 0o644)
		}, []string{"symbols.bin is corrupt: SHA-256"}},
		{"symbol outside alphabet", func(t *testing.T, dir string, d *Dataset) {
			p := filepath.Join(dir, SymbolsFile)
			b, _ := os.ReadFile(p)
			b[234] = 7
			os.WriteFile(p, b, 0o644)
			editManifest(t, dir, d.Manifest.SymbolsSHA256, sha256Hex(b))
		}, []string{"symbol 7 at byte 234 (window 2, position 34) is outside the alphabet 0..2"}},
		{"wrong tree index", func(t *testing.T, dir string, d *Dataset) {
			p := filepath.Join(dir, TreeOfFile)
			b, _ := os.ReadFile(p)
			b[4*4] = 9
			os.WriteFile(p, b, 0o644)
			editManifest(t, dir, d.Manifest.TreeOfSHA256, sha256Hex(b))
		}, []string{"window 4 has tree index 9, want 1"}},
		{"malformed manifest", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"k": 5,`, `"k": 5`)
		}, []string{"manifest.json", "invalid character"}},
		{"manifest wrong type", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"nk": 300`, `"nk": "300"`)
		}, []string{"manifest.json", `field "nk"`}},
		{"manifest unknown field", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"k": 5,`, `"k": 5, "colour": 1,`)
		}, []string{`unknown field "colour"`}},
		{"manifest missing field", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"seed": 1,`, ``)
		}, []string{`missing field "seed"`}},
		{"format", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"vomc-dataset"`, `"other"`)
		}, []string{`field "format"`}},
		{"version", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"version": 1`, `"version": 2`)
		}, []string{`field "version": 2 is not supported`}},
		{"prior", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"lambda": 0.15`, `"lambda": 1.5`)
		}, []string{`field "prior"`, "λ = 1.5"}},
		{"leaf kind", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"dirichlet"`, `"gauss"`)
		}, []string{"manifest.json", `unknown leaf kind "gauss"`}},
		{"n", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"n": 100`, `"n": 0`)
		}, []string{`field "n"`}},
		{"nk", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"nk": 300`, `"nk": 50`)
		}, []string{`field "nk"`}},
		{"windows", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"windows": 15`, `"windows": 14`)
		}, []string{`field "windows": 14, want k·⌊nk/n⌋ = 15`}},
		{"symbols file name", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"symbols_file": "symbols.bin"`, `"symbols_file": "../etc/passwd"`)
		}, []string{`field "symbols_file"`}},
		{"checksum format", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, d.Manifest.SymbolsSHA256, "abc")
		}, []string{`field "symbols_sha256"`}},
		{"tree count", func(t *testing.T, dir string, d *Dataset) {
			editManifest(t, dir, `"k": 5,`, `"k": 4,`)
			editManifest(t, dir, `"windows": 15`, `"windows": 12`)
		}, []string{`field "trees": more than k = 4 trees`}},
		{"bad tree", func(t *testing.T, dir string, d *Dataset) {
			js, _ := json.Marshal(d.Trees[3])
			var leaves = d.Trees[3].Leaves()
			// Drop the last leaf: the suffix set is no longer complete.
			bad, _ := json.Marshal(map[string]any{"alphabet": 3, "max_depth": 2, "leaves": leafMaps(leaves[:len(leaves)-1])})
			editManifest(t, dir, string(js), string(bad))
		}, []string{"trees[3]", "not complete", "missing suffix"}},
		{"tree probability", func(t *testing.T, dir string, d *Dataset) {
			js, _ := json.Marshal(d.Trees[1])
			leaves := d.Trees[1].Leaves()
			leaves[0].P[0] += 0.5
			bad, _ := json.Marshal(map[string]any{"alphabet": 3, "max_depth": 2, "leaves": leafMaps(leaves)})
			editManifest(t, dir, string(js), string(bad))
		}, []string{"trees[1]", "leaf (", "sum to"}},
		{"tree depth", func(t *testing.T, dir string, d *Dataset) {
			js, _ := json.Marshal(d.Trees[0])
			editManifest(t, dir, string(js), `{"alphabet":3,"max_depth":1,"leaves":[{"suffix":[],"p":[1,0,0]}]}`)
		}, []string{"trees[0]", "maximum depth 1 is not one of the prior's depths [2]"}},
		{"missing manifest", func(t *testing.T, dir string, d *Dataset) {
			os.Remove(filepath.Join(dir, ManifestFile))
		}, []string{"manifest.json", "it is not a data set"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, d := written(t)
			c.corrupt(t, dir, d)
			_, err := Read(dir)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func leafMaps(leaves []source.Leaf) []map[string]any {
	var out []map[string]any
	for _, l := range leaves {
		s := make([]int, len(l.Suffix))
		for i, a := range l.Suffix {
			s[i] = int(a)
		}
		out = append(out, map[string]any{"suffix": s, "p": l.P})
	}
	return out
}

func TestManifestJSON(t *testing.T) {
	d := mustBuild(t, smallConfig(false), 2)
	b, err := d.Manifest.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	c1, _ := json.Marshal(m.Config())
	c2, _ := json.Marshal(d.Config())
	if string(c1) != string(c2) {
		t.Errorf("manifest round trip: %s vs %s", c1, c2)
	}
	if len(m.Trees) != d.Manifest.K {
		t.Error("trees")
	}
	// One tree per line.
	if n := strings.Count(string(b), "\n    {\"alphabet\":3"); n != d.Manifest.K {
		t.Errorf("%d tree lines", n)
	}
}

// BenchmarkBuild builds a paper-sized slice of a training set (D = 5,
// N_K = 5120, N = 1536) on all CPUs; MB/s = millions of symbols per second.
func BenchmarkBuild(b *testing.B) {
	cfg := Config{Prior: source.PaperPrior(5), K: 200, NK: 5120, N: 1536, Seed: 1}
	b.SetBytes(int64(cfg.K * cfg.WindowsPerTree() * cfg.N))
	for b.Loop() {
		if _, err := Build(cfg, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteRead measures writing and reading back (with all checks)
// a data set of 5 M symbols.
func BenchmarkWriteRead(b *testing.B) {
	d, err := Build(Config{Prior: source.PaperPrior(3), K: 1000, NK: 5120, N: 512, Seed: 1}, 0, nil)
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), "ds")
	b.SetBytes(int64(len(d.Symbols)))
	for b.Loop() {
		if err := d.Write(dir, true); err != nil {
			b.Fatal(err)
		}
		if _, err := Read(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadStreaming checks the streaming manifest reader: trees before the
// prior are still checked against it, repeated fields are errors,
// ReadWindows keeps no trees, ReadHeader stops at the trees, and "leaves":
// null and "" both mean the default Dirichlet leaves.
func TestReadStreaming(t *testing.T) {
	dir, d := written(t)
	mb, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	// Move the trees to the front: `{"trees": [...], "format": ...}`.
	s := string(mb)
	i := strings.Index(s, `,
  "trees": [`)
	if i < 0 {
		t.Fatal("no trees in the manifest")
	}
	trees := strings.TrimSuffix(strings.TrimSpace(s[i+1:]), "}")
	moved := "{" + trees + "," + s[1:i] + "}"
	m, err := ReadManifest(strings.NewReader(moved))
	if err != nil {
		t.Fatalf("trees first: %v", err)
	}
	if len(m.Trees) != d.Manifest.K {
		t.Fatalf("trees first: %d trees, want %d", len(m.Trees), d.Manifest.K)
	}
	wrongDepth := strings.Replace(moved, `"depths": [`+"\n"+`      2`, `"depths": [`+"\n"+`      3`, 1)
	if wrongDepth == moved {
		wrongDepth = strings.Replace(moved, `"depths": [2]`, `"depths": [3]`, 1)
	}
	if wrongDepth == moved {
		t.Fatalf("cannot find the depths in %.300s", moved)
	}
	if _, err := ReadManifest(strings.NewReader(wrongDepth)); err == nil || !strings.Contains(err.Error(), "is not one of the prior's depths") {
		t.Errorf("trees first, prior of another depth: %v", err)
	}
	if _, err := ReadManifest(strings.NewReader(strings.Replace(s, `"k": 5,`, `"k": 5, "k": 5,`, 1))); err == nil || !strings.Contains(err.Error(), `field "k" appears twice`) {
		t.Errorf("repeated field: %v", err)
	}
	for _, leaves := range []string{`null`, `""`} {
		m, err := ReadManifest(strings.NewReader(strings.Replace(s, `"leaves": "dirichlet"`, `"leaves": `+leaves, 1)))
		if err != nil || m.Prior.Leaves != source.Dirichlet {
			t.Errorf(`"leaves": %s: %v`, leaves, err)
		}
	}
	w, err := ReadWindows(dir)
	if err != nil {
		t.Fatal(err)
	}
	if w.Trees != nil || w.Manifest.Trees != nil || !bytes.Equal(w.Symbols, d.Symbols) {
		t.Error("ReadWindows: trees kept or symbols differ")
	}
	// ReadWindows still checks the trees; ReadHeader does not read them.
	editManifest(t, dir, `"max_depth":2`, `"max_depth":7`)
	if _, err := ReadWindows(dir); err == nil || !strings.Contains(err.Error(), "trees[0]") {
		t.Errorf("ReadWindows with a bad tree: %v", err)
	}
	h, err := ReadHeader(dir)
	if err != nil || h.Trees != nil || h.Windows != d.Manifest.Windows {
		t.Errorf("ReadHeader: %v", err)
	}
}

// TestBuildMemoryEstimate pins the estimate (the values of the former
// package memest) and checks that it grows with K.
func TestBuildMemoryEstimate(t *testing.T) {
	pr := source.Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}}
	small := Config{Prior: pr, K: 10, NK: 16, N: 16, Seed: 1}.BuildMemoryEstimate()
	big := Config{Prior: pr, K: 2000, NK: 5120, N: 512, Seed: 1}.BuildMemoryEstimate()
	if small != 143557 || big != 69831514 {
		t.Errorf("estimates %d and %d, were 143557 and 69831514", small, big)
	}
	if more := (Config{Prior: pr, K: 1000, NK: 16, N: 16, Fresh: true, Seed: 1}).BuildMemoryEstimate(); more <= small {
		t.Errorf("K=1000: %d, K=10: %d", more, small)
	}
}
