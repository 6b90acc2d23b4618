package compress

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/internal/fsutil"
)

func TestModelSpec(t *testing.T) {
	base := ModelSpec{Model: "mix", Order: -1, MemMB: 16, Method: "D", AlphaInv: 8}
	for _, c := range []struct {
		name string
		edit func(*ModelSpec)
		want string // prefix of the model's name, or "error: substring"
	}{
		{"mix", func(*ModelSpec) {}, "mix"},
		{"ppm", func(s *ModelSpec) { s.Model, s.Order, s.Method = "ppm", 3, "c" }, "ppm(D=3,C"},
		{"ctw", func(s *ModelSpec) { s.Model, s.Order = "ctw", 4 }, "ctw"},
		{"mix order", func(s *ModelSpec) { s.Order = 2 }, "error: does not apply"},
		{"negative", func(s *ModelSpec) { s.Model, s.Order = "ppm", -2 }, "error: negative"},
		{"method", func(s *ModelSpec) { s.Model, s.Method = "ppm", "X" }, "error: C or D"},
		{"unknown", func(s *ModelSpec) { s.Model = "lzma" }, "error: mix, ppm or ctw"},
	} {
		s := base
		c.edit(&s)
		m, err := s.Build()
		if e, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), e) || strings.Contains(err.Error(), "--") {
				t.Errorf("%s: %v, want an error with %q and no flag", c.name, err, e)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(m.Name(), c.want) {
			t.Errorf("%s: %v, %v", c.name, m, err)
		}
	}
	ms, err := base.BuildModels("ppm, ctw")
	if err != nil || len(ms) != 2 {
		t.Errorf("BuildModels: %d models, %v", len(ms), err)
	}
	if ms, err := base.BuildModels(""); err != nil || len(ms) != 1 || !strings.HasPrefix(ms[0].Name(), "mix") {
		t.Errorf("BuildModels of the default: %v", err)
	}
}

func TestCompressFile(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	x := bytes.Repeat([]byte("a file to compress; "), 50)
	os.WriteFile(p("in"), x, 0o644)
	m, err := PPM(DefaultPPM())
	if err != nil {
		t.Fatal(err)
	}
	st, err := CompressFile(p("in"), p("z"), m, false, nil)
	if err != nil || st.In != int64(len(x)) {
		t.Fatalf("compress: %+v, %v", st, err)
	}
	if _, err := CompressFile(p("in"), p("z"), m, false, nil); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("overwrite without force: %v", err)
	}
	if _, err := CompressFile(dir, p("z2"), m, false, nil); err == nil {
		t.Error("a directory compressed")
	}
	h, err := DecompressFile(p("z"), p("out"), 1024, false, nil)
	if err != nil || h.Size != int64(len(x)) {
		t.Fatalf("decompress: %+v, %v", h, err)
	}
	if y, _ := os.ReadFile(p("out")); !bytes.Equal(x, y) {
		t.Error("round trip differs")
	}
	if _, err := DecompressFile(p("in"), p("bad"), 1024, false, nil); err == nil || !strings.HasPrefix(err.Error(), p("in")+": ") {
		t.Errorf("decompressing a non-container: %v", err)
	}
	if _, err := os.Stat(p("bad")); err == nil {
		t.Error("a failed decompression left its output")
	}
}
