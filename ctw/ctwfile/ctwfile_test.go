package ctwfile

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/ctw"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/symbols"
	"github.com/vomc/vomc/internal/sysmem"
)

func TestAutoLambda(t *testing.T) {
	for _, c := range []struct {
		A    int
		want float64
	}{{2, 0.5}, {3, 0.75}, {16, 1 - math.Pow(2, -15)}, {17, 0.5}, {256, 0.5}} {
		if got := AutoLambda(c.A); got != c.want {
			t.Errorf("AutoLambda(%d) = %v, want %v", c.A, got, c.want)
		}
	}
}

// TestRun checks ln P(x) against ctw.LogMarginalLikelihood, the report,
// the outputs, and the refusals.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	x := []byte(strings.Repeat("0110100110010110", 8))
	os.WriteFile(p("x.txt"), x, 0o644)
	var log strings.Builder
	o := Options{File: p("x.txt"), Mode: symbols.Text, D: 3, AutoLambda: true, Alpha: 0.5, Init: ctw.Condition,
		Map: p("map.json"), Weights: p("w.csv"), Events: events.Writer(&log)}
	rep, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	sym := make([]byte, len(x))
	for i, c := range x {
		sym[i] = c - '0'
	}
	want, _ := ctw.LogMarginalLikelihood(rep.Config, sym)
	if math.Abs(rep.LogML-want) > 1e-9 || rep.Config.Lambda != 0.5 || rep.MAP == nil {
		t.Errorf("report %+v, want ln P %v", rep, want)
	}
	for _, s := range []string{"A=2\n", "CTW D=3 λ=0.5 α=0.5 init=condition", "over 125 predicted symbols", "MAP tree:", "wrote " + p("map.json"), "wrote " + p("w.csv")} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, log.String())
		}
	}
	if _, err := Run(o); err == nil {
		t.Error("existing outputs replaced without Force")
	}
	o.Force, o.Init, o.Map, o.Weights = true, ctw.Shorter, "", ""
	if rep, err := Run(o); err != nil || rep.MAP != nil {
		t.Errorf("shorter: %v, MAP %v", err, rep.MAP)
	}
	for name, bad := range map[string]Options{
		"lambda":  {File: p("x.txt"), D: 3, Lambda: 1.5, Alpha: 0.5},
		"format":  {File: p("x.txt"), D: 3, Lambda: 0.5, Alpha: 0.5, Map: p("m.txt")},
		"missing": {File: p("none"), D: 3, Lambda: 0.5, Alpha: 0.5},
		"memory":  {File: p("x.txt"), D: 3, Lambda: 0.5, Alpha: 0.5, MemoryLimit: 1},
	} {
		if _, err := Run(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMemoryEstimate(t *testing.T) {
	cfg := ctw.Config{A: 256, D: 2, Lambda: 0.5, Alpha: 0.5}
	x := make([]byte, 1000)
	if d := MemoryEstimate(cfg, x, 10) - MemoryEstimate(cfg, x, 0); d != 10*(64+8*256) {
		t.Errorf("MAP tree: %d", d)
	}
	if est := MemoryEstimate(cfg, x, 0); est != sysmem.Base+ctw.SequenceMemoryEstimate(cfg, x) {
		t.Errorf("estimate %d without a MAP tree", est)
	}
}
