package transformer

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

func TestSafetensorsRoundTrip(t *testing.T) {
	for _, cfg := range tinyConfigs() {
		m := randomModel(t, cfg, 1, 0.3)
		path := filepath.Join(t.TempDir(), "model.safetensors")
		if err := m.SaveSafetensors(path); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		n := binary.LittleEndian.Uint64(b)
		if n%8 != 0 || !strings.Contains(string(b[8:8+n]), `"h.0.attn.qkv.weight":{"dtype":"F32","shape":[24,8]`) {
			t.Fatalf("header: %s", b[8:8+n])
		}
		if int(8+n)+4*len(liveParams(m)) != len(b) {
			t.Fatalf("file has %d bytes", len(b))
		}
		m2, err := LoadSafetensorsOn(cpu.NewDefault(), path)
		if err != nil {
			t.Fatal(err)
		}
		if m2.Config.String() != m.Config.String() {
			t.Fatalf("config %v, want %v", m2.Config, m.Config)
		}
		for i := range liveParams(m) {
			if liveParams(m)[i] != liveParams(m2)[i] {
				t.Fatalf("param %d: %v vs %v", i, liveParams(m2)[i], liveParams(m)[i])
			}
		}
		if _, err := ReadSafetensorsOn(cpu.NewDefault(), strings.NewReader(string(b[:len(b)-1]))); err == nil {
			t.Fatal("truncated file accepted")
		}
	}
}
