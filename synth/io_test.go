package synth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vomc/vomc/safetensors"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// seedFile is a small synth model file.
func seedFile(t testing.TB, v Variant, embed int) []byte {
	m, err := NewOn(cpu.NewDefault(), Config{Variant: v, A: 3, D: 1, Context: 8, Embed: embed, Hidden: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCraftedFiles: crafted configs (a huge hidden width, huge context)
// are refused without allocating what they claim; flips, trailing junk
// are refused; a file without a checksum loads with a warning.
func TestCraftedFiles(t *testing.T) {
	good := seedFile(t, TF20, 0)
	h, err := safetensors.ReadHeader(bytes.NewReader(good), 0, int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := h.ReadData(bytes.NewReader(good[h.Size-h.DataSize:]))
	for _, tc := range []struct{ name, cfg, want string }{
		{"hidden huge", `{"variant":"tf20","alphabet":3,"D":1,"context":8,"pos_period":64,"hidden":268280841371648,"activation":"gelu","count_norm":"log1p"}`, "hidden 268280841371648 (limit 1048576 each)"},
		{"hidden at the limit", `{"variant":"tf20","alphabet":3,"D":1,"context":8,"pos_period":64,"hidden":1048576,"activation":"gelu","count_norm":"log1p"}`, "tensor ff.fc.weight is F32 [5 21], the configuration needs F32 [1048576 21]"},
		{"embed and hidden at the limit", `{"variant":"tf20","alphabet":3,"D":1,"context":8,"pos_period":64,"embed":1048576,"hidden":1048576,"activation":"gelu","count_norm":"log1p"}`, "parameters (embed 1048576, hidden 1048576), more than the limit"},
		{"context huge", `{"variant":"tf20","alphabet":3,"D":1,"context":4000000000,"pos_period":4000000002,"hidden":5,"activation":"gelu","count_norm":"log1p"}`, "context 4000000000 (limit 1048576)"},
		{"count tables", `{"variant":"tf20","alphabet":256,"D":16,"context":8,"pos_period":64,"hidden":5,"activation":"gelu","count_norm":"log1p"}`, "256^17 exceeds the count-table limit"},
		{"alphabet", `{"variant":"tf20","alphabet":300,"D":1,"context":8,"pos_period":64,"hidden":5,"activation":"gelu","count_norm":"log1p"}`, "alphabet size 300"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := map[string]string{}
			for k, v := range h.Meta {
				md[k] = v
			}
			md["config"] = tc.cfg
			var buf bytes.Buffer
			if err := safetensors.Write(&buf, md, ts); err != nil {
				t.Fatal(err)
			}
			var a, b runtime.MemStats
			runtime.ReadMemStats(&a)
			_, err := ReadOn(cpu.NewDefault(), bytes.NewReader(buf.Bytes()))
			runtime.ReadMemStats(&b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if d := b.TotalAlloc - a.TotalAlloc; d > 4<<20 {
				t.Errorf("allocated %d bytes", d)
			}
		})
	}
	for k := 0; k < 8*len(good); k += 11 {
		b := bytes.Clone(good)
		b[k/8] ^= 1 << (k % 8)
		if _, err := ReadOn(cpu.NewDefault(), bytes.NewReader(b)); err == nil {
			t.Errorf("flip of bit %d of byte %d accepted", k%8, k/8)
		}
	}
	p := filepath.Join(t.TempDir(), "model.safetensors")
	os.WriteFile(p, append(bytes.Clone(good), 0), 0o644)
	if _, err := LoadOn(cpu.NewDefault(), p); err == nil || !strings.Contains(err.Error(), "trailing junk after the data section: 1 extra bytes") || !strings.HasPrefix(err.Error(), p) {
		t.Errorf("trailing junk: %v", err)
	}
	// An earlier version's file: no checksum.
	var old bytes.Buffer
	md := map[string]string{}
	for k, v := range h.Meta {
		md[k] = v
	}
	if err := writeUnchecked(&old, md, ts); err != nil {
		t.Fatal(err)
	}
	var warned []string
	defer func(f func(string, ...any)) { safetensors.Warnf = f }(safetensors.Warnf)
	safetensors.Warnf = func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }
	if _, err := ReadOn(cpu.NewDefault(), bytes.NewReader(old.Bytes())); err != nil || len(warned) != 1 || !strings.Contains(warned[0], "no checksum") {
		t.Errorf("old file: %v, warnings %q", err, warned)
	}
}

// writeUnchecked writes a safetensors file the way vomc did before
// checksums: Write's output with the checksum key removed from the
// header.
func writeUnchecked(w *bytes.Buffer, md map[string]string, ts []safetensors.Tensor) error {
	var buf bytes.Buffer
	if err := safetensors.Write(&buf, md, ts); err != nil {
		return err
	}
	b := buf.Bytes()
	n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
	hdr := string(b[8 : 8+n])
	i := strings.Index(hdr, `,"`+safetensors.ChecksumKey+`":"`)
	if i < 0 {
		return fmt.Errorf("no checksum key in %s", hdr)
	}
	hdr = hdr[:i] + hdr[i+len(`,"`+safetensors.ChecksumKey+`":"`)+64+1:]
	for len(hdr)%8 != 0 {
		hdr += " "
	}
	w.Write([]byte{byte(len(hdr)), byte(len(hdr) >> 8), byte(len(hdr) >> 16), 0, 0, 0, 0, 0})
	w.WriteString(hdr)
	w.Write(b[8+n:])
	return nil
}

// FuzzRead: reading a synth model file never panics, and a model it
// returns predicts a short sequence.
func FuzzRead(f *testing.F) {
	f.Add(seedFile(f, TF20, 0))
	f.Add(seedFile(f, WithAllCounts, 4))
	f.Add(seedFile(f, TotalCountsOnly, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		ReadOn(cpu.NewDefault(), bytes.NewReader(in))
		// Rewrite the input with a correct checksum, so that the fuzzer
		// explores what lies behind it.
		h, err := safetensors.ReadHeader(bytes.NewReader(in), 1<<20, int64(len(in)))
		if err != nil {
			return
		}
		h.Checksum = ""
		ts, err := h.ReadData(bytes.NewReader(in[h.Size-h.DataSize:]))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if safetensors.Write(&buf, h.Meta, ts) != nil {
			return
		}
		m, err := ReadOn(cpu.NewDefault(), bytes.NewReader(buf.Bytes()))
		if err != nil {
			return
		}
		if m.Config.NumParams() > 1<<18 {
			return
		}
		x := make([]byte, min(m.Config.Context+2, 40))
		for i := range x {
			x[i] = byte(i % m.Config.A)
		}
		m.PredictSequence(x, make([]float64, len(x)*m.Config.A))
	})
}

// TestNoDefaultBackend: synth makes no backend of its own (issue 46, item
// 3): given none, NewOn, FromParamsOn, ReadOn and LoadOn are
// transformer.ErrNoBackend.
func TestNoDefaultBackend(t *testing.T) {
	cfg := Config{Variant: TF20, A: 3, D: 1, Context: 8}
	m, err := NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.safetensors")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func() error{
		"NewOn":        func() error { _, err := NewOn(nil, cfg, 1); return err },
		"FromParamsOn": func() error { _, err := FromParamsOn(nil, cfg, m.HostParams()); return err },
		"ReadOn":       func() error { _, err := ReadOn(nil, bytes.NewReader(b)); return err },
		"LoadOn":       func() error { _, err := LoadOn(nil, path); return err },
	} {
		if err := f(); !errors.Is(err, transformer.ErrNoBackend) {
			t.Errorf("%s without a backend: %v, want transformer.ErrNoBackend", name, err)
		}
	}
}
