package reproduce

import (
	"strings"
	"testing"

	"github.com/vomc/vomc/reproduce/study"
)

// TestLadderPlan: the ladder preset plans a profile stage per trained
// model replicate; other presets none.
func TestLadderPlan(t *testing.T) {
	cfg, _ := study.Preset("ladder")
	stages, err := Plan(cfg, Options{Engine: testEngine, Out: t.TempDir(), CodeKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range stages {
		if strings.HasPrefix(s.Name, "profile-tf-") {
			n++
		}
	}
	if n != 16 {
		t.Errorf("%d profile stages, want 16", n)
	}
	small, _ := study.Preset("small")
	stages, _ = Plan(small, Options{Engine: testEngine, Out: t.TempDir(), CodeKey: "test"})
	for _, s := range stages {
		if strings.HasPrefix(s.Name, "profile-tf-") {
			t.Errorf("small plans %s", s.Name)
		}
	}
}
