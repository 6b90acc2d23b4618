package reproduce

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vomc/vomc/dynamics"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/report"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// TestDynamicsPlan: with Config.Dynamics set, every transformer replicate
// gets a dynamics stage after its training, and the training stages'
// inputs record the snapshots; without it the plan has no such stage and
// the training stages' inputs are as before; a bad specification is
// refused.
func TestDynamicsPlan(t *testing.T) {
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	count := func(c study.Config) (dyn int, snapInputs int) {
		t.Helper()
		stages, err := Plan(c, Options{Engine: testEngine})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stages {
			if strings.HasPrefix(s.Name, "dynamics-tf-") {
				dyn++
				if !s.Resumable {
					t.Errorf("%s: not resumable (it keeps a checkpoint of the snapshots measured)", s.Name)
				}
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
	// snapshot_seeds: replicate 1 keeps its snapshots without a dynamics
	// stage, and replicate 0's stages keep their hashes.
	c := cfg
	c.SnapshotSeeds = 2
	if d, s := count(c); d != len(cfg.Models()) || s != 2*len(cfg.Models()) {
		t.Fatalf("snapshot_seeds 2: %d dynamics stages and %d training stages with snapshots, want %d and %d", d, s, len(cfg.Models()), 2*len(cfg.Models()))
	}
	hashes := func(c study.Config) map[string]string {
		stages, err := Graph(c, Options{Engine: testEngine, CodeKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		h := map[string]string{}
		for _, s := range stages {
			h[s.Name] = s.Hash
		}
		return h
	}
	with, without := hashes(c), hashes(cfg)
	for _, m := range cfg.Models() {
		if n := results.TrainStageName(m, 0); with[n] != without[n] {
			t.Errorf("%s: hash changed by snapshot_seeds", n)
		}
		if n := results.TrainStageName(m, 1); with[n] == without[n] {
			t.Errorf("%s: hash unchanged though it now keeps snapshots", n)
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

// TestDynamicsEndToEnd runs a small study with dynamics: the figures stage
// draws the grid of panels and the report's "Training dynamics" section
// embeds it, with a phases table whose rows name each model and a closest
// reference, and the heads table.
func TestDynamicsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a study with its dynamics stages is run in the full suite (without -short); TestDynamicsPlan runs here")
	}
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxSteps, cfg.Warmup, cfg.CheckpointEvery = 40, 10, 20
	cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 50, 40, 4
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants = []string{"1", "2,2"}, nil, nil
	cfg.Dynamics, cfg.DynamicsWindows, cfg.DynamicsHeadWindows = "log:4", 10, 4
	out := t.TempDir()
	res, err := Run(context.Background(), cfg, Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(out, "figures", figures.DynamicsFile)); err != nil || st.Size() < 1000 {
		t.Fatalf("%s: %v", figures.DynamicsFile, err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, "stages", "dynamics-tf-*", dynamics.CheckpointFile)); len(left) != 0 {
		t.Errorf("checkpoints left in completed dynamics stages: %v", left)
	}
	if done, _ := filepath.Glob(filepath.Join(out, "stages", "dynamics-tf-*", "dynamics.json")); len(done) != 2 {
		t.Errorf("%d dynamics stages with dynamics.json, want 2", len(done))
	}
	html, err := os.ReadFile(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	checkHTML(t, html)
	i := bytes.Index(html, []byte(`id="dynamics"`))
	if i < 0 {
		t.Fatal("report has no dynamics section")
	}
	sec := string(html[i:])
	sec = sec[:strings.Index(sec, "<h2")]
	for _, want := range []string{"Closest algorithm by training step", "<td class=\"l\">TF(1)</td>", "<td class=\"l\">TF(2,2)</td>", "Unigram", "Heads: the step from which", "phases of the closest algorithm — TF(1): ", `<p class="note"><b>This run:</b> phases`} {
		if !strings.Contains(sec, want) {
			t.Errorf("dynamics section lacks %q", want)
		}
	}
	if n := strings.Count(sec, `src="data:image/png;base64,`); n != 1 {
		t.Errorf("dynamics section embeds %d images, want the one grid", n)
	}
	// The text report has the same section, its tables as rows of cells.
	txt, err := os.ReadFile(filepath.Join(out, report.ReportTextFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== Training dynamics", "Closest algorithm by training step", "\nmodel | steps | closest algorithm |", "\nTF(2,2) | 1–40 | ", "\n== Fig. 3", "\nCTW(D=2,", "\n== Cost"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("report.txt lacks %q", want)
		}
	}
	if m := regexp.MustCompile(`<[a-z/][a-z0-9]*[ >]|&#?[a-z0-9]+;`).Find(txt); m != nil {
		t.Errorf("report.txt has markup %q", m)
	}
	// The references' KN is named with its δ and its tuning; on a training
	// set of at most KNTuneWindows windows both KNs are tuned on all of
	// them, so they have the same δ.
	kn := regexp.MustCompile(`KN among the references is (KN\([^)]*\)), its discount δ tuned on all (\d+) windows of the training set, as the summary table's (KN\([^)]*\))\.`).FindSubmatch(txt)
	if kn == nil || string(kn[1]) != string(kn[3]) || string(kn[2]) != fmt.Sprint(cfg.TrainTrees*(cfg.TrainNK/cfg.N)) {
		t.Errorf("the dynamics section's KN: %q", kn)
	}
}
