package reproduce

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/reproduce/study"
)

// TestModelSeeds checks per-model replicate counts: the ladder preset
// trains two seeds of TF(4,4) and TF(4,4) sin and one of the others, a
// replicate keeps its stage name, and bad counts or unknown models are
// refused.
func TestModelSeeds(t *testing.T) {
	cfg, err := study.Preset("ladder")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	stages, err := Plan(cfg, Options{Engine: testEngine, Out: t.TempDir(), CodeKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	train := map[string]bool{}
	for _, s := range stages {
		if strings.HasPrefix(s.Name, "train-tf-") {
			train[s.Name] = true
		}
	}
	for _, want := range []string{"train-tf-h4-4-x4", "train-tf-h4-4-x4-s1", "train-tf-h4-4-sin-s1", "train-tf-h4-4-4-x4", "train-tf-h4-4-4-4"} {
		if !train[want] {
			t.Errorf("no stage %s", want)
		}
	}
	for _, not := range []string{"train-tf-h4-4-4-x4-s1", "train-tf-h4-4-4-4-s1"} {
		if train[not] {
			t.Errorf("stage %s planned, but its model has one seed", not)
		}
	}
	if len(train) != 16 {
		t.Errorf("%d training stages, want 16 (6 models × 2 seeds + 4 × 1)", len(train))
	}
	for _, c := range []struct {
		seeds map[string]int
		want  string
	}{
		{map[string]int{"4,4": 0}, "want ≥ 1"},
		{map[string]int{"4,4,4,4,4": 1}, "not in fig3_models"},
	} {
		bad := cfg
		bad.ModelSeeds = c.seeds
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("model_seeds %v: error %v, want one containing %q", c.seeds, err, c.want)
		}
	}
	one := cfg
	one.ModelSeeds = nil
	if got, want := cfg.EstimateHours(), one.EstimateHours(); !(got < want) {
		t.Errorf("EstimateHours %.2f with single-seed models, %.2f without: want fewer", got, want)
	}
}

// TestKeywordCase: a keyword key in any case (--set lr_schedule=Constant,
// or "CONSTANT" in a --config file) is the same configuration, the same
// config.json and the same stage hashes as its canonical spelling; the
// hashes do see the schedule (cosine differs).
func TestKeywordCase(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, []byte(`{"lr_schedule": "CONSTANT"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hashes := func(file string, sets ...string) (string, []string) {
		t.Helper()
		cfg, err := study.Layered("tiny", file, sets)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Graph(cfg, Options{Engine: testEngine, Version: "test", CodeKey: "test"})
		if err != nil {
			t.Fatal(err)
		}
		var hs []string
		for _, s := range g {
			hs = append(hs, s.Name+"-"+s.Hash)
		}
		return cfg.FileJSON(), hs
	}
	wantJSON, want := hashes("", "lr_schedule=constant")
	for _, c := range []struct {
		file string
		sets []string
	}{{"", []string{"lr_schedule=Constant"}}, {"", []string{"lr-schedule=CONSTANT"}}, {file, nil}} {
		js, hs := hashes(c.file, c.sets...)
		if js != wantJSON || !slices.Equal(hs, want) {
			t.Errorf("--config %q --set %q: configuration or stage hashes differ from lr_schedule=constant's:\n%s\n%v\n%v", c.file, c.sets, js, hs, want)
		}
	}
	if _, cosine := hashes("", "lr_schedule=Cosine"); slices.Equal(cosine, want) {
		t.Error("the stage hashes do not depend on the schedule")
	}
}
