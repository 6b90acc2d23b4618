package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestAblateUnusedHead: a head whose output projection columns are zero
// costs exactly 0 when ablated (interval [0, 0], p = 1, not necessary),
// and the report holds every head, the groups and their random groups.
func TestAblateUnusedHead(t *testing.T) {
	cfg := transformer.DefaultConfig(2, 2, 16, 24, 3)
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	flat := m.HostParams()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range flat {
		flat[i] += float32(0.2 * r.NormFloat64())
	}
	for _, ti := range cfg.Layout() {
		if ti.Name == "h.1.attn.proj.weight" { // L2H2's columns
			for o := range cfg.Embed {
				clear(flat[ti.Offset+o*cfg.Embed+8:][:8])
			}
		}
	}
	if err := m.SetParams(flat); err != nil {
		t.Fatal(err)
	}
	prior := source.PaperPrior(2)
	ws, err := methods.ReferenceWindows(prior, 12, 25, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []transformer.Ablation{transformer.AblateZero, transformer.AblateMean} {
		rep, err := Ablate(context.Background(), AblateOptions{Model: m, Windows: ws, Defaults: methods.DefaultsFor(prior), Mode: mode, Refs: 4, Groups: 3, LabelWindows: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Heads) != 4 || rep.Windows != 12 || rep.Mode != mode.String() {
			t.Fatalf("report of %d heads, %d windows, mode %s", len(rep.Heads), rep.Windows, rep.Mode)
		}
		h := rep.Heads[3]
		if h.Head != "L2H2" || h.Cost.Mean != 0 || h.Cost.Lo != 0 || h.Cost.Hi != 0 || h.P != 1 || h.Necessary {
			t.Errorf("%v: unused head %+v", mode, h)
		}
		if c := rep.Heads[0].Cost; c.Mean == 0 {
			t.Errorf("%v: ablating L1H1 of a random model costs exactly 0", mode)
		}
		for _, g := range rep.Groups {
			if len(g.Random) != len(g.RandomCost) || len(g.Random) == 0 || slices.ContainsFunc(g.Random, func(r []string) bool { return slices.Equal(r, g.Heads) }) {
				t.Errorf("group %s: random groups %v", g.Name, g.Random)
			}
		}
	}
}

// TestAblateShipped: on the shipped small-preset TF(4,4), every labelled
// layer-1 previous-symbol head is necessary (Holm), that group costs more
// than the random groups of as many heads do on average (paired interval
// above 0), and the previous-token head (d = 1) replaced by offset:1 stays
// within the margin: it does what its label says.
func TestAblateShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("evaluates the shipped model ≈ 60 times (≈ 20 s); skipped with -short")
	}
	ds, prior := shippedTest(t, "d3-tf44")
	m, err := transformer.LoadSafetensorsOn(cpu.NewDefault(), filepath.Join("..", "models", "d3-tf44", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	rep, err := Ablate(context.Background(), AblateOptions{Model: m, Windows: Windows(ds)[:48], Defaults: methods.DefaultsFor(prior), Groups: 19})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range rep.Heads {
		t.Logf("%s %-60s cost %+.4f [%.4f, %.4f] p_holm %.2g pattern %s %v", h.Head, h.Label, h.Cost.Mean, h.Cost.Lo, h.Cost.Hi, h.PHolm, h.Pattern, h.PatternCost)
		if h.Pattern == "offset:1" && !h.PatternWithin {
			t.Errorf("%s: its pattern %s costs %+v, outside ±%g", h.Head, h.Pattern, *h.PatternCost, rep.Margin)
		}
	}
	found := false
	for _, g := range rep.Groups {
		t.Logf("%s %v: cost %+.4f, p %.3f, vs random %+.4f [%.4f, %.4f]", g.Name, g.Heads, g.Cost.Mean, g.P, g.VsRandom.Mean, g.VsRandom.Lo, g.VsRandom.Hi)
		if g.Name != "layer-1 previous-symbol heads" {
			continue
		}
		found = true
		for _, hn := range g.Heads {
			i := slices.IndexFunc(rep.Heads, func(h HeadReport) bool { return h.Head == hn })
			if !rep.Heads[i].Necessary {
				t.Errorf("%s is not necessary: %+v", hn, rep.Heads[i])
			}
		}
		if !(g.VsRandom.Lo > 0) {
			t.Errorf("%s: vs random %+v", g.Name, g.VsRandom)
		}
	}
	if !found {
		t.Error("no layer-1 previous-symbol group")
	}
}

// TestRunAblate: RunAblate writes ablate.json and ablate.txt, labels the
// heads on the windows after the evaluated ones (hypotheses up to the
// prior's depth + 1), refuses a data set too small for both, and refuses
// to overwrite its outputs without Force, before any work.
func TestRunAblate(t *testing.T) {
	dir := t.TempDir()
	cfg := transformer.DefaultConfig(1, 2, 8, 16, 3)
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	if err := m.SaveSafetensors(filepath.Join(run, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(2), K: 9, NK: 17, N: 17, Fresh: true, Seed: 3}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "test")
	if err := ds.Write(data, false); err != nil {
		t.Fatal(err)
	}
	o := AblateRunOptions{Backend: cpu.NewDefault(), Model: run, Data: data, Out: filepath.Join(dir, "abl"), AblateOptions: AblateOptions{Groups: 2, LabelWindows: 3}}
	r, err := RunAblate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var back AblateReport
	b, err := os.ReadFile(filepath.Join(o.Out, "ablate.json"))
	if err != nil || json.Unmarshal(b, &back) != nil || len(back.Heads) != 2 || back.Windows != 6 {
		t.Fatalf("ablate.json: %v, %d heads, %d windows; want 2 heads, the 6 windows before the 3 that label them", err, len(back.Heads), back.Windows)
	}
	if back.LabelWindows != 3 || !back.LabelDisjoint || back.MaxK != 3 {
		t.Errorf("labelled on %d windows (disjoint %v), hypotheses up to %d; want 3 other windows, up to the prior's depth 2 + 1", back.LabelWindows, back.LabelDisjoint, back.MaxK)
	}
	o2 := o
	o2.Out, o2.Windows = filepath.Join(dir, "abl2"), 7
	if _, err := RunAblate(context.Background(), o2); err == nil || !strings.Contains(err.Error(), "label") {
		t.Errorf("7 evaluated and 3 label windows of 9: %v; want an error naming the label windows", err)
	}
	txt, err := os.ReadFile(filepath.Join(o.Out, "ablate.txt"))
	if err != nil || !strings.Contains(string(txt), "L1H2") || !strings.Contains(string(txt), r.Model) {
		t.Errorf("ablate.txt: %v\n%s", err, txt)
	}
	if _, err := RunAblate(context.Background(), o); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("a second run without Force: %v", err)
	}
}

// TestAblateRedraw rewrites the text and the figure of a saved report
// (VOMC_ABLATE_REPORT=DIR/ablate.json: DIR/ablate.txt and ablate.png),
// e.g. after a change to how they are drawn.
func TestAblateRedraw(t *testing.T) {
	path := os.Getenv("VOMC_ABLATE_REPORT")
	if path == "" {
		t.Skip("set VOMC_ABLATE_REPORT=DIR/ablate.json to redraw its text and figure")
	}
	var r AblateReport
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatal(err)
	}
	var txt strings.Builder
	r.WriteText(&txt)
	dir := filepath.Dir(path)
	if err := os.WriteFile(filepath.Join(dir, "ablate.txt"), []byte(txt.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Figure(filepath.Join(dir, "ablate.png"), true); err != nil {
		t.Fatal(err)
	}
}
