package reproduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestSynthEncodingsGraph checks the Fig. 8 stages under several
// encodings: a model is trained once per distinct feature set (TF 2-0 under
// every encoding, the count variants under paper and linear, "w/o counts"
// once), the paper's stages keep the hashes they have without encodings,
// and bad encoding lists are refused.
func TestSynthEncodingsGraph(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Engine: testEngine, Version: "test", CodeKey: "test"}
	g0, err := Graph(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	enc := cfg
	enc.SynthEncodings = []string{synth.Paper, synth.Log, synth.Linear}
	g1, err := Graph(enc, opts)
	if err != nil {
		t.Fatal(err)
	}
	h0 := map[string]string{}
	for _, s := range g0 {
		h0[s.Name] = s.Hash
	}
	var synthStages []string
	for _, s := range g1 {
		if strings.HasPrefix(s.Name, "synth-") {
			synthStages = append(synthStages, s.Name)
			if h, ok := h0[s.Name]; ok && h != s.Hash {
				t.Errorf("%s changed hash when encodings were added", s.Name)
			}
		}
	}
	want := []string{"synth-tf20", "synth-nocounts", "synth-totalcounts", "synth-allcounts",
		"synth-tf20-log", "synth-tf20-linear", "synth-totalcounts-linear", "synth-allcounts-linear"}
	if !slices.Equal(synthStages, want) {
		t.Errorf("synth stages %v, want %v", synthStages, want)
	}
	// ["paper"] is the default spelled out: the same stages and hashes.
	paper := cfg
	paper.SynthEncodings = []string{synth.Paper}
	gp, err := Graph(paper, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range gp {
		if gp[i].Name != g0[i].Name || gp[i].Hash != g0[i].Hash {
			t.Errorf("synth_encodings [paper] changes stage %s (%s vs %s)", gp[i].Name, gp[i].Hash, g0[i].Hash)
		}
	}
	for _, bad := range [][]string{{"paper", "paper"}, {"cubic"}, {""}} {
		c := cfg
		c.SynthEncodings = bad
		if err := c.Validate(); err == nil {
			t.Errorf("synth_encodings %q accepted", bad)
		}
	}
	if err := enc.Validate(); err != nil {
		t.Error(err)
	}
}

// TestSynthStageResume kills a Fig. 8 training stage (cancelled at step
// 45, its checkpoint then put back to the one of step 40, as a process
// killed after that checkpoint leaves it): the next run of the stage
// resumes from that checkpoint and trains exactly the model of an
// uninterrupted run (the same parameters bit for bit, the same losses).
func TestSynthStageResume(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.SynthSteps, cfg.CheckpointEvery = 80, 20
	const stage, saved, stop = "synth-tf20", 40, 45
	run := func(ctx context.Context, out string, log *bytes.Buffer, onStep func(string, int)) error {
		opts := Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: events.Writer(log), OnStep: onStep}
		if _, err := RunStage(ctx, cfg, opts, results.StageTrainData); err != nil {
			t.Fatal(err)
		}
		_, err := RunStage(ctx, cfg, opts, stage)
		return err
	}
	ref := t.TempDir()
	if err := run(context.Background(), ref, new(bytes.Buffer), nil); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	ckpt := func() string {
		paths, _ := filepath.Glob(filepath.Join(out, "stages", stage+"-*", trainrun.CheckpointFile))
		if len(paths) != 1 {
			t.Fatalf("checkpoints %v", paths)
		}
		return paths[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	var backup []byte
	err = run(ctx, out, new(bytes.Buffer), func(name string, step int) {
		switch {
		case name != stage:
		case step == saved+1:
			backup, err = os.ReadFile(ckpt())
			if err != nil {
				t.Error(err)
			}
		case step == stop:
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), fmt.Sprintf("interrupted at step %d", stop)) {
		t.Fatalf("cancelled stage: %v", err)
	}
	if backup == nil {
		t.Fatal("no checkpoint at step", saved)
	}
	if err := os.WriteFile(ckpt(), backup, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	var steps []int
	if err := run(context.Background(), out, &log, func(name string, step int) { steps = append(steps, step) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("resuming from checkpoint at step %d", saved)) {
		t.Errorf("no resume in the log:\n%s", log.String())
	}
	if len(steps) == 0 || steps[0] != saved+1 || steps[len(steps)-1] != cfg.SynthSteps {
		t.Errorf("resumed steps %v, want %d..%d", steps, saved+1, cfg.SynthSteps)
	}
	model := func(dir string) *synth.Model {
		paths, _ := filepath.Glob(filepath.Join(dir, "stages", stage+"-*", results.ModelFile))
		if len(paths) != 1 {
			t.Fatalf("models %v", paths)
		}
		m, err := synth.LoadOn(cpu.NewDefault(), paths[0])
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := model(ref), model(out)
	if !slices.Equal(a.HostParams(), b.HostParams()) {
		t.Error("the resumed stage's parameters differ from the uninterrupted one's")
	}
	ha, hb := a.Info.History, b.Info.History
	if len(ha) != len(hb) || a.Info.Steps != b.Info.Steps || a.Info.BestVal != b.Info.BestVal || a.Info.BestStep != b.Info.BestStep {
		t.Fatalf("resumed %+v\nuninterrupted %+v", b.Info, a.Info)
	}
	for i := range ha {
		if ha[i].Step != hb[i].Step || ha[i].TrainLoss != hb[i].TrainLoss || !sameFloat(ha[i].ValLoss, hb[i].ValLoss) {
			t.Errorf("history %d: resumed %+v, uninterrupted %+v", i, hb[i], ha[i])
		}
	}
	// The resumed stage records the training time of its first
	// invocation (the report's stage time adds it), the uninterrupted one
	// nothing more than before.
	for _, tc := range []struct {
		dir     string
		resumed bool
	}{{out, true}, {ref, false}} {
		paths, _ := filepath.Glob(filepath.Join(tc.dir, "stages", stage+"-*", "synth.json"))
		if len(paths) != 1 {
			t.Fatalf("records %v", paths)
		}
		var r results.SynthRecord
		if err := results.ReadJSON(filepath.Dir(paths[0]), "synth.json", &r); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(paths[0])
		if tc.resumed != (r.EarlierSeconds > 0) || tc.resumed != strings.Contains(string(raw), "EarlierSeconds") || r.EarlierSeconds > r.Seconds {
			t.Errorf("resumed %v: synth.json %s", tc.resumed, raw)
		}
	}
	t.Logf("%d steps, best validation loss %.4f at step %d", a.Info.Steps, a.Info.BestVal, a.Info.BestStep)
}

// sameFloat reports whether a and b are equal or both NaN.
func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }
