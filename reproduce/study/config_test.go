package study

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
)

// TestSetAndLoad checks the override parsing: scalars, lists, model lists,
// JSON values, a config file, unknown keys and bad values.
func TestSetAndLoad(t *testing.T) {
	t.Parallel()
	c, err := Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"N", "128"}, {"lr", "2e-3"}, {"depths", "1,2,3"}, {"seed", "7"},
		{"sum-loss", "true"}, {"fig3_models", "2;2,2;1,1,1-ff"}, {"fig4_models", `["4,4-ff-ln"]`}, {"heatmap_model", "2,2"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if c.N != 128 || c.LR != 2e-3 || !slices.Equal(c.Depths, []int{1, 2, 3}) || c.Seed != 7 || !c.SumLoss ||
		!slices.Equal(c.Fig3Models, []string{"2", "2,2", "1,1,1-ff"}) || !slices.Equal(c.Fig4Models, []string{"4,4-ff-ln"}) {
		t.Fatalf("after Set: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("nope", "1"); err == nil || !strings.Contains(err.Error(), `key "nope" is unknown`) {
		t.Errorf("unknown key: %v", err)
	}
	if err := c.Set("N", "abc"); err == nil {
		t.Error("N=abc accepted")
	}
	if err := c.Load(strings.NewReader(`{"E": 48, "batch": 8}`)); err != nil || c.Embed != 48 || c.Batch != 8 || c.N != 128 {
		t.Errorf("Load: %v %+v", err, c)
	}
	if err := c.Load(strings.NewReader(`{"bogus": 1}`)); err == nil {
		t.Error("unknown JSON key accepted")
	}
	m, err := ParseModel("1,1,1-ff")
	if err != nil || m.Label() != "TF(1,1,1) w/o FF" || m.FF || !m.LN || len(m.Heads) != 3 {
		t.Errorf("ParseModel: %+v %v", m, err)
	}
	if m, _ := ParseModel("4,4-ff-ln"); m.Label() != "TF(4,4) attn-only" {
		t.Errorf("label %q", m.Label())
	}
	if _, err := ParseModel("4,x"); err == nil {
		t.Error("bad model accepted")
	}
	sm, err := ParseModel("4,4-sin")
	if err != nil || !sm.Sin || sm.Label() != "TF(4,4) sin" || sm.Slug() != "h4-4-sin" || sm.TransformerConfig(c).Positional != transformer.Sinusoidal {
		t.Errorf("ParseModel(4,4-sin): %+v %v, label %q slug %q", sm, err, sm.Label(), sm.Slug())
	}
	if m, _ := ParseModel("4,4"); m.TransformerConfig(c).Positional != transformer.Learned {
		t.Error("default positions should be learned")
	}
	c.Fig3Models = []string{"3"} // E=48 is not divisible by... 3 is fine; 5 is not
	c.Fig3Models = []string{"5"}
	if err := c.Validate(); err == nil {
		t.Error("E=48 with 5 heads accepted")
	}
	for _, p := range Presets {
		c, err := Preset(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %s: %v", p, err)
		}
		if h := c.EstimateHours(); !(h > 0) {
			t.Errorf("preset %s: estimate %g h", p, h)
		}
	}
}

// TestLayered: the preset, then the file, then the overrides; bad
// overrides and unknown presets are refused.
func TestLayered(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(file, []byte(`{"N": 96}`), 0o644)
	cfg, err := Layered("tiny", file, []string{"E=48"})
	if err != nil || cfg.N != 96 || cfg.Embed != 48 {
		t.Errorf("layered: N=%d E=%d, %v", cfg.N, cfg.Embed, err)
	}
	for _, bad := range [][]string{{"E"}, {"nokey=1"}, {"N=x"}} {
		if _, err := Layered("tiny", "", bad); err == nil {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := Layered("huge", "", nil); err == nil {
		t.Error("unknown preset accepted")
	}
}

// TestFileJSONRoundTrip: the configuration file vomc writes (FileJSON)
// reads back, over every preset, as exactly the configuration written —
// also where an override sets a key back to its empty value, which
// JSON's omitempty drops (before FileJSON, a stage process or Slurm task
// reading OUT/config.json over the preset got the preset's value back).
func TestFileJSONRoundTrip(t *testing.T) {
	overrides := [][]string{nil, {"seeds=1"}, {"synth_encodings=paper"}, {"ladder=false"}, {"extra_methods="},
		{"seeds=2", "leaves=dirichlet", "synth_seeds=0", "dynamics=", "engine="}}
	for _, preset := range Presets {
		for _, sets := range overrides {
			cfg, err := Layered(preset, "", sets)
			if err != nil {
				continue // an override this preset refuses
			}
			file := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(file, []byte(cfg.FileJSON()), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, over := range Presets {
				back, err := Layered(over, file, nil)
				if err != nil {
					t.Fatalf("%s %v read over %s: %v", preset, sets, over, err)
				}
				if !reflect.DeepEqual(back.Normalized(), cfg.Normalized()) {
					t.Errorf("%s %v read back over preset %s:\n%s\nwant\n%s", preset, sets, over, back.JSON(), cfg.JSON())
				}
			}
		}
	}
	// A file of some keys still overrides only those.
	file := filepath.Join(t.TempDir(), "part.json")
	os.WriteFile(file, []byte(`{"N": 96}`), 0o644)
	if cfg, err := Layered("small", file, nil); err != nil || cfg.N != 96 || cfg.A != 3 || len(cfg.Fig3Models) == 0 {
		t.Errorf("partial file over small: %v %+v", err, cfg)
	}
}
