package plot_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/plot"
)

// TestSaveLossFiles draws a saved result to two files, reports them, and
// refuses existing outputs (before drawing anything) and a missing result.
func TestSaveLossFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	res := sampleResult(t, 20, 64)
	if err := fsutil.WriteFile(p("r.json"), false, res.WriteJSON); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	f := plot.LossFiles{Width: 3, Height: 2, Events: events.Writer(&log)}
	if err := plot.SaveLossFiles(p("r.json"), []string{p("a.png"), p("a.svg")}, f); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, p("a.png"), 450, 300)
	checkSVG(t, p("a.svg"))
	if log.String() != "wrote "+p("a.png")+"\nwrote "+p("a.svg")+"\n" {
		t.Errorf("log %q", log.String())
	}
	err := plot.SaveLossFiles(p("missing.json"), []string{p("b.png"), p("a.png")}, f)
	if !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("existing output: %v", err)
	}
	if err := plot.SaveLossFiles(p("missing.json"), []string{p("b.png")}, f); err == nil {
		t.Error("a missing result was drawn")
	}
	if _, err := os.Stat(p("b.png")); err == nil {
		t.Error("b.png written")
	}
	f.Force = true
	if err := plot.SaveLossFiles(p("r.json"), []string{p("a.png")}, f); err != nil {
		t.Errorf("with force: %v", err)
	}
}
