package treefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/source"
)

func TestSampleShowGenerate(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	var log strings.Builder
	pr := source.PaperPrior(3)
	tr, err := Sample(pr, 4, Options{Outs: []string{p("t.json"), p("t.dot")}, Events: events.Writer(&log)})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := pr.Sample(source.RNG(4, 0))
	if tr.NumLeaves() != want.NumLeaves() || !strings.Contains(log.String(), "wrote "+p("t.dot")) {
		t.Errorf("%d leaves (want %d), log %q", tr.NumLeaves(), want.NumLeaves(), log.String())
	}
	if _, err := Sample(pr, 4, Options{Outs: []string{p("t.json")}}); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing output: %v", err)
	}
	bad := pr
	bad.Lambda = 0
	if _, err := Sample(bad, 4, Options{}); err == nil {
		t.Error("λ = 0 accepted")
	}
	log.Reset()
	back, err := Show(p("t.json"), Options{Events: events.Writer(&log)})
	if err != nil || back.NumLeaves() != tr.NumLeaves() || strings.Count(log.String(), "  leaf ") != tr.NumLeaves() {
		t.Errorf("show: %v\n%s", err, log.String())
	}
	var out strings.Builder
	if err := Generate(Generation{Tree: p("t.json"), N: 100, Seed: 1, Stdout: &out}); err != nil || len(out.String()) < 100 {
		t.Errorf("generate: %v, %q", err, out.String())
	}
	if err := Generate(Generation{Tree: p("t.json"), N: 50, Seed: 1, Raw: true, Out: p("x.bin")}); err != nil {
		t.Error(err)
	} else if b, _ := os.ReadFile(p("x.bin")); len(b) != 50 {
		t.Errorf("%d raw symbols, want 50", len(b))
	}
	for name, g := range map[string]Generation{
		"negative": {Tree: p("t.json"), N: -1},
		"missing":  {Tree: p("none.json"), N: 1},
		"exists":   {Tree: p("t.json"), N: 1, Out: p("x.bin")},
	} {
		if err := Generate(g); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if ProbString([]float64{0.5, 0.25, 0.25}) != "[0.500 0.250 0.250]" {
		t.Error(ProbString([]float64{0.5, 0.25, 0.25}))
	}
}

// TestMemoryEstimates pins the estimates. Sample: 24 MiB + 2·E[nodes]·
// (NodeBytes + 20A + 60) with E[nodes] = Σ_{d≤3} (3·0.85)^d = 26.63 and
// 120 + 120 bytes a node (generate: the value of the former package memest).
func TestMemoryEstimates(t *testing.T) {
	pr := source.Prior{A: 3, Depths: []int{3}, Lambda: 0.15, Alpha: []float64{0.5}}
	if est := SampleMemoryEstimate(pr); est != 25178608 {
		t.Errorf("sample: %d, want 25178608", est)
	}
	tr, err := pr.Sample(source.RNG(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if est := GenerateMemoryEstimate(tr); est != 32514736 {
		t.Errorf("generate: %d, was 32514736", est)
	}
}
