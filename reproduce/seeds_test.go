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
)

// TestAcrossSeeds checks the Student-t interval over replicate means on
// numbers worked by hand: 1, 2, 3 have mean 2, sd 1 and, with
// t_{0.975,2} = 4.302653, half-width 4.302653/√3.
func TestAcrossSeeds(t *testing.T) {
	iv := AcrossSeeds([]float64{1, 2, 3})
	if iv.Mean != 2 || math.Abs(iv.SD-1) > 1e-12 {
		t.Errorf("mean %v sd %v, want 2 and 1", iv.Mean, iv.SD)
	}
	if want := 4.302653 / math.Sqrt(3); math.Abs(iv.HalfWidth()-want) > 1e-5 {
		t.Errorf("half-width %v, want %v", iv.HalfWidth(), want)
	}
	// Two values 0.5, 0.7: sd = 0.1·√2, t_{0.975,1} = 12.7062.
	iv = AcrossSeeds([]float64{0.5, 0.7})
	if want := 12.706205 * 0.1 * math.Sqrt2 / math.Sqrt2; math.Abs(iv.HalfWidth()-want) > 1e-5 || math.Abs(iv.Mean-0.6) > 1e-12 {
		t.Errorf("got %+v, want mean 0.6 half-width %v", iv, want)
	}
	if iv := AcrossSeeds([]float64{4}); iv.Mean != 4 || !math.IsNaN(iv.Lo) {
		t.Errorf("one value: %+v", iv)
	}
}

// TestSeedStats checks that the across-seed statistics gather each
// model's replicates from a result by name.
func TestSeedStats(t *testing.T) {
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seeds = 2
	m := cfg.Models()[0]
	res := &eval.Result{Methods: []eval.MethodResult{
		{Name: "CTW"},
		{Name: RepLabel(m, 0), Window: eval.Interval{Mean: 1.0}, SecondHalf: eval.Interval{Mean: 0.9}, ExcessSecondHalf: eval.Interval{Mean: 0.1}},
		{Name: RepLabel(m, 1), Window: eval.Interval{Mean: 1.2}, SecondHalf: eval.Interval{Mean: 0.7}, ExcessSecondHalf: eval.Interval{Mean: 0.3}},
	}}
	st := seedStats(cfg, res)
	if len(st) != 1 || st[0].Model != m.Label() {
		t.Fatalf("stats %+v, want one for %s", st, m.Label())
	}
	if !slices.Equal(st[0].SecondHalf, []float64{0.9, 0.7}) || math.Abs(*st[0].AcrossSecondHalf.Mean-0.8) > 1e-12 {
		t.Errorf("second half %v, across %v", st[0].SecondHalf, *st[0].AcrossSecondHalf.Mean)
	}
	if !isReplicate(cfg, RepLabel(m, 1)) || isReplicate(cfg, RepLabel(m, 0)) {
		t.Error("isReplicate wrong")
	}
	cfg.Seeds = 1
	if seedStats(cfg, res) != nil {
		t.Error("S=1 gives seed stats")
	}
}

// TestSeedsGraph checks the stage graph with S = 2: one training and one
// evaluation stage per model and replicate, replicate 1's named "-s1" and
// depending on its own training stage, every replicate's evaluation an
// input of the figures; and that S = 1 (set or not) keeps the graph of
// today, hashes included, while replicate 0 keeps its hashes under S = 2.
func TestSeedsGraph(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Version: "test", CodeKey: "test"}
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
		if tr.Kind != pipeline.KindTrain || !tr.Resumable || !slices.Equal(tr.Deps, []string{StageTrainData}) {
			t.Errorf("%s: kind %s deps %v", tr.Name, tr.Kind, tr.Deps)
		}
		if !slices.Equal(ev.Deps, []string{StageTestData, tr.Name, StageTrainData}) {
			t.Errorf("%s deps %v", ev.Name, ev.Deps)
		}
		if !slices.Contains(by[StageFigures].Deps, ev.Name) || !slices.Contains(by[StageReport].Deps, tr.Name) {
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
	if by[StageFigures].Hash == hash1[StageFigures] {
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
	t.Parallel()
	cfg, err := Preset("tiny")
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
	res, err := Run(context.Background(), cfg, Options{Out: out, Version: "test", CodeKey: "test", Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	var st []SeedStats
	b, err := os.ReadFile(filepath.Join(out, SeedsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || len(st[0].Replicates) != 2 || st[0].AcrossSecondHalf.Lo == nil {
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
