package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReproduceConfig checks the preset, --config file and --set layering
// and the usage errors.
func TestReproduceConfig(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"N": 96, "E": 24}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := reproduceConfig("tiny", file, []string{"E=48", "fig3_models=2;2,2", "depths=1,2"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.N != 96 || cfg.Embed != 48 || len(cfg.Fig3Models) != 2 || len(cfg.Depths) != 2 {
		t.Errorf("effective config %+v", cfg)
	}
	for _, bad := range [][]string{{"E"}, {"nokey=1"}, {"N=x"}, {"fig3_models=7"}} {
		if _, err := reproduceConfig("tiny", "", bad); err == nil {
			t.Errorf("--set %v accepted", bad)
		}
	}
	if _, err := reproduceConfig("huge", "", nil); err == nil {
		t.Error("unknown preset accepted")
	}
	if err := runReproduce([]string{"--preset", "paper", "--dry-run"}); err != nil {
		t.Error(err)
	}
}
