package reproduce

import (
	"strings"
	"testing"
)

// TestDynamicsPlan: with Config.Dynamics set, every transformer replicate
// gets a dynamics stage after its training, and the training stages'
// inputs record the snapshots; without it the plan has no such stage and
// the training stages' inputs are as before; a bad specification is
// refused.
func TestDynamicsPlan(t *testing.T) {
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	count := func(c Config) (dyn int, snapInputs int) {
		t.Helper()
		stages, err := Plan(c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stages {
			if strings.HasPrefix(s.Name, "dynamics-tf-") {
				dyn++
			}
			if in, ok := s.Inputs.(map[string]any); ok && strings.HasPrefix(s.Name, "train-tf-") {
				if _, ok := in["snapshots"]; ok {
					snapInputs++
				}
			}
		}
		return dyn, snapInputs
	}
	if d, s := count(cfg); d != 0 || s != 0 {
		t.Fatalf("without dynamics: %d dynamics stages, %d training stages with snapshots", d, s)
	}
	cfg.Dynamics = "log:5"
	cfg.Seeds = 2
	for _, tc := range []struct{ dynSeeds, want int }{{0, len(cfg.Models())}, {1, len(cfg.Models())}, {2, 2 * len(cfg.Models())}, {5, 2 * len(cfg.Models())}} {
		c := cfg
		c.DynamicsSeeds = tc.dynSeeds
		if d, s := count(c); d != tc.want || s != tc.want {
			t.Fatalf("dynamics_seeds %d: %d dynamics stages and %d training stages with snapshots, want %d", tc.dynSeeds, d, s, tc.want)
		}
	}
	for _, bad := range []string{"log:1", "every:0", "x"} {
		c := cfg
		c.Dynamics = bad
		if err := c.Validate(); err == nil {
			t.Errorf("dynamics %q accepted", bad)
		}
	}
}
