package reproduce

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// TestSeedsGraph checks the stage graph with S = 2: one training and one
// evaluation stage per model and replicate, replicate 1's named "-s1" and
// depending on its own training stage, every replicate's evaluation an
// input of the figures; and that S = 1 (set or not) keeps the graph of
// today, hashes included, while replicate 0 keeps its hashes under S = 2.
func TestSeedsGraph(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Engine: testEngine, Version: "test", CodeKey: "test"}
	g1, err := Graph(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	one := cfg
	one.Seeds = 1
	g1b, err := Graph(one, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(g1) != len(g1b) {
		t.Fatalf("S=1 set: %d stages, unset %d", len(g1b), len(g1))
	}
	hash1 := map[string]string{}
	for i := range g1 {
		if g1[i].Name != g1b[i].Name || g1[i].Hash != g1b[i].Hash {
			t.Errorf("S=1 changes stage %s/%s: %s vs %s", g1[i].Name, g1b[i].Name, g1[i].Hash, g1b[i].Hash)
		}
		hash1[g1[i].Name] = g1[i].Hash
	}
	if one.JSON() != cfg.JSON() {
		t.Error("S=1 changes config.json")
	}
	two := cfg
	two.Seeds = 2
	g2, err := Graph(two, opts)
	if err != nil {
		t.Fatal(err)
	}
	nm, ns := len(cfg.Models()), len(cfg.SynthVariants)
	if len(g2) != len(g1)+2*nm+ns {
		t.Errorf("S=2: %d stages, want %d (a training and an evaluation replicate per transformer, a training replicate per TF 2-0 variant)", len(g2), len(g1)+2*nm+ns)
	}
	// synth_seeds decouples the TF 2-0 replicates from the transformers'.
	syn := cfg
	syn.SynthSeeds = 3
	g3, err := Graph(syn, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(g3) != len(g1)+2*ns {
		t.Errorf("synth_seeds=3: %d stages, want %d", len(g3), len(g1)+2*ns)
	}
	by := map[string]pipeline.StageInfo{}
	for _, s := range g2 {
		by[s.Name] = s
	}
	for _, m := range cfg.Models() {
		tr, ev := by["train-tf-"+m.Slug()+"-s1"], by["eval-tf-"+m.Slug()+"-s1"]
		if tr.Name == "" || ev.Name == "" {
			t.Fatalf("S=2 lacks replicate 1 of %s", m.Spec)
		}
		if tr.Kind != pipeline.KindTrain || !tr.Resumable || !slices.Equal(tr.Deps, []string{results.StageTrainData}) {
			t.Errorf("%s: kind %s deps %v", tr.Name, tr.Kind, tr.Deps)
		}
		if !slices.Equal(ev.Deps, []string{results.StageTestData, tr.Name, results.StageTrainData}) {
			t.Errorf("%s deps %v", ev.Name, ev.Deps)
		}
		if !slices.Contains(by[results.StageFigures].Deps, ev.Name) || !slices.Contains(by[results.StageReport].Deps, tr.Name) {
			t.Errorf("figures/report do not depend on %s", ev.Name)
		}
		r0 := "train-tf-" + m.Slug()
		if by[r0].Hash != hash1[r0] {
			t.Errorf("replicate 0 of %s changed hash under S=2", m.Spec)
		}
		if tr.Hash == by[r0].Hash {
			t.Errorf("replicates 0 and 1 of %s share a hash", m.Spec)
		}
	}
	if by[results.StageFigures].Hash == hash1[results.StageFigures] {
		t.Error("figures stage hash does not depend on S")
	}
	if two.ReplicateSeed(0) != two.Seed || two.ReplicateSeed(1) == two.ReplicateSeed(2) || two.ReplicateSeed(1) == two.Seed {
		t.Error("replicate seeds not distinct")
	}
}

// TestTinySeedsEndToEnd runs a cut-down tiny preset with S = 2 (short
// training) and checks the across-seed outputs: seeds.json, the replicate
// curves in results.json, the report's seed columns.
func TestTinySeedsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a study with two seeds is run in the full suite (without -short); TestSeedsGraph runs here")
	}
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = 2
	cfg.Fig3Models = []string{"2", "2,2"}
	cfg.Fig4Models = nil
	cfg.SynthVariants = nil
	cfg.HeatmapModel = ""
	cfg.MaxSteps, cfg.Warmup, cfg.CheckpointEvery = 30, 5, 30
	cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 30, 40, 4
	out := t.TempDir()
	res, err := Run(context.Background(), cfg, Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	var st []results.SeedStats
	b, err := os.ReadFile(filepath.Join(out, results.SeedsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || len(st[0].Replicates) != 2 || math.IsNaN(float64(st[0].AcrossSecondHalf.Lo)) {
		t.Fatalf("seeds.json: %s", b)
	}
	if st[0].SecondHalf[0] == st[0].SecondHalf[1] {
		t.Errorf("replicates of %s have equal losses %v: same seed?", st[0].Model, st[0].SecondHalf)
	}
	merged, err := eval.LoadJSONFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if merged.Method("TF(2,2) [seed 1]") == nil || merged.Method("TF(2,2)") == nil {
		t.Error("results.json lacks a replicate")
	}
	html, err := os.ReadFile(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"across seeds", "(2 seeds)", "every transformer 2 times"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(html), "<td class=\"l\">TF(2,2) [seed 1]</td>") {
		t.Error("replicate has its own summary row")
	}
}
