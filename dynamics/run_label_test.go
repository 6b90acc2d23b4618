package dynamics

import (
	"strings"
	"testing"
)

// TestPhasesTextLabel: a label names the model in the phases text, with
// the run directory beside it; without one the directory alone.
func TestPhasesTextLabel(t *testing.T) {
	for _, c := range []struct{ label, want string }{
		{"", "out/stages/train-tf-h4-4-s1-abc: 0 snapshots"},
		{"TF(4,4) [seed 1]", "TF(4,4) [seed 1] (out/stages/train-tf-h4-4-s1-abc): 0 snapshots"},
	} {
		r := &Result{Run: "out/stages/train-tf-h4-4-s1-abc", Label: c.label, Windows: 200, N: 512, Data: "test"}
		if got, _, _ := strings.Cut(r.PhasesText(), "\n"); !strings.HasPrefix(got, c.want) {
			t.Errorf("label %q: first line %q, want prefix %q", c.label, got, c.want)
		}
	}
}
