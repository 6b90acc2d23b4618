package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestAblateCommand runs 'vomc ablate' on a freshly initialised tiny
// model: a bad command line is refused before any work with nothing
// written (a mistyped --mode with the closest mode), a run writes
// ablate.json, ablate.txt and ablate.png, gives the same bytes with 1 and
// 2 workers, and is not overwritten without --force.
func TestAblateCommand(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	cfg := transformer.Config{Layers: 2, Heads: []int{2, 1}, Embed: 16, Context: 32, Alphabet: 3,
		FeedForward: true, LayerNorm: true, Activation: transformer.GELU, Positional: transformer.Learned}
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p("model"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(p("model/model.safetensors")); err != nil {
		t.Fatal(err)
	}
	runOK(t, "data", "-A", "3", "-D", "2", "-K", "10", "-N", "33", "--seed", "3", "--out", p("test"))
	common := []string{"ablate", "--model", p("model"), "--data", p("test"), "--groups", "3", "--label-windows", "4"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(common, "--out", p("bad"), "--mode", "zer"), `did you mean "zero"?`},
		{append(common, "--mode", "mean"), "--out"},
		{append(common, "--out", p("bad"), "--groups", "-1"), "--groups"},
		{append(common, "--out", p("bad"), "--margin", "-0.1"), "--margin"},
	} {
		code, stderr := stderrOf(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and a message naming %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(p("bad")); !os.IsNotExist(err) {
		t.Errorf("a refused command line left %s (%v)", p("bad"), err)
	}

	runOK(t, append(common, "--out", p("a1"), "--workers", "1")...)
	runOK(t, append(common, "--out", p("a2"), "--workers", "2")...)
	exists(t, p("a1/ablate.json"), p("a1/ablate.txt"), p("a1/ablate.png"))
	for _, f := range []string{"ablate.json", "ablate.txt"} {
		b1, err1 := os.ReadFile(p("a1/" + f))
		b2, err2 := os.ReadFile(p("a2/" + f))
		if err1 != nil || err2 != nil || !bytes.Equal(b1, b2) {
			t.Errorf("%s differs between --workers 1 and 2 (%v, %v)", f, err1, err2)
		}
	}
	var rep struct {
		Windows int
		Heads   []struct{ Head string }
	}
	if b, err := os.ReadFile(p("a1/ablate.json")); err != nil || json.Unmarshal(b, &rep) != nil {
		t.Fatalf("ablate.json: %v", err)
	}
	if rep.Windows != 6 || len(rep.Heads) != 3 || rep.Heads[2].Head != "L2H1" {
		t.Errorf("ablate.json: %d windows, heads %+v; want the 6 windows before the 4 that label the heads and L1H1, L1H2, L2H1", rep.Windows, rep.Heads)
	}
	if code, stderr := stderrOf(t, append(common, "--out", p("a1"))...); code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("existing outputs: exit %d, %q; want 1 and a hint to --force", code, stderr)
	}
}
