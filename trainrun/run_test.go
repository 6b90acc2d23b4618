package trainrun

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// testData writes a small data set and returns the meta of a run on it.
func testData(t *testing.T, valFrac, N string) map[string]string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "data")
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(3), K: 8, NK: 64, N: 32, Fresh: false, Seed: 3}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"data": dir, "val": "", "val_frac": valFrac, "N": N, "split_seed": "1"}
}

func newTrainer(t *testing.T, meta map[string]string) *transformer.Trainer {
	t.Helper()
	train, val, A, err := Data(meta)
	if err != nil {
		t.Fatal(err)
	}
	cfg := transformer.Config{Layers: 1, Heads: []int{1}, Embed: 8, Context: len(train.Window(0)), Alphabet: A,
		FeedForward: true, LayerNorm: true, Activation: transformer.GELU, Positional: transformer.Learned}
	m, err := transformer.NewOn(cpu.NewDefault(), cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	tc := transformer.DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.LogEvery, tc.WarmupSteps = 4, 2, 1, 2
	tr, err := transformer.NewTrainer(m, tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestData(t *testing.T) {
	meta := testData(t, "0.25", "8")
	train, val, A, err := Data(meta)
	if err != nil {
		t.Fatal(err)
	}
	if A != 3 || len(train.Window(0)) != 8 || val == nil || len(val.Window(0)) != 8 {
		t.Fatalf("A=%d, window %d, val %v", A, len(train.Window(0)), val)
	}
	if train.Windows()+val.Windows() != 8*64/32*4 {
		t.Errorf("%d + %d windows of 8, want all %d", train.Windows(), val.Windows(), 8*64/32*4)
	}
	if meta["data_checksum"] == "" {
		t.Error("no checksum recorded")
	}
	if DatasetOf(train) == nil {
		t.Error("DatasetOf found no data set")
	}
	meta["data_checksum"] = "0123456789abcdef"
	if _, _, _, err := Data(meta); err == nil {
		t.Error("a wrong checksum was accepted")
	}
	bad := testData(t, "0", "64")
	if _, _, _, err := Data(bad); !errors.Is(err, ErrWindowLength) {
		t.Errorf("N > the data set's: err = %v", err)
	}
	limited := testData(t, "0", "0")
	limited["max_windows"] = "5"
	if train, _, _, err := Data(limited); err != nil || train.Windows() != 5 {
		t.Errorf("max_windows 5: %v windows, err %v", train, err)
	}
}

func TestCheckDir(t *testing.T) {
	dir := t.TempDir()
	if err := CheckDir(dir, false); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, LogFile), nil, 0o644)
	var he *HeldError
	if err := CheckDir(dir, false); !errors.As(err, &he) || he.File != LogFile {
		t.Fatalf("err = %v", err)
	}
	if err := CheckDir(dir, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, LogFile)); err == nil {
		t.Error("--force left the log")
	}
}

func logLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); n++ {
	}
	return n
}

// An interrupted run, resumed, ends exactly as an uninterrupted one.
func TestRunInterruptResume(t *testing.T) {
	meta := testData(t, "0.25", "16")
	ref := newTrainer(t, meta)
	refDir := t.TempDir()
	r, err := Start(ref, Options{Dir: refDir, Meta: meta, CheckpointEvery: 3, Log: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CheckpointFile, LogFile, CurvePNG, CurveSVG} {
		if _, err := os.Stat(filepath.Join(refDir, f)); err != nil {
			t.Error(err)
		}
	}
	if n := logLines(t, filepath.Join(refDir, LogFile)); n != len(ref.History) {
		t.Errorf("%d log lines, history %d", n, len(ref.History))
	}

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	steps := []int{}
	r, err = Start(newTrainer(t, meta), Options{Dir: dir, Meta: meta, CheckpointEvery: 3, Log: true,
		OnStep: func(s int) {
			steps = append(steps, s)
			if s == 5 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(ctx)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.Step != 5 || !errors.Is(err, context.Canceled) || r.LastCheckpoint != 5 {
		t.Fatalf("err = %v, last checkpoint %d", err, r.LastCheckpoint)
	}
	if !reflect.DeepEqual(steps, []int{1, 2, 3, 4, 5}) {
		t.Errorf("OnStep saw %v", steps)
	}
	c, tw, vw, err := Load(dir, "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.ResumeOn(cpu.NewDefault(), tw, vw)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Step != 5 {
		t.Fatalf("resumed at step %d", tr.Step)
	}
	if r, err = Resume(tr, Options{Dir: dir, Meta: c.Meta, CheckpointEvery: 3, Log: true}); err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tr.Step != ref.Step || !reflect.DeepEqual(tr.Model.HostParams(), ref.Model.HostParams()) {
		t.Errorf("resumed run: step %d, parameters differ from the uninterrupted run's (step %d)", tr.Step, ref.Step)
	}
	if n := logLines(t, filepath.Join(dir, LogFile)); n != len(ref.History) {
		t.Errorf("resumed log has %d lines, want %d", n, len(ref.History))
	}
}

// Without Log nothing but the checkpoint is written; FinalCheckpoint
// saves the end state.
func TestRunNoLogFinalCheckpoint(t *testing.T) {
	meta := testData(t, "0", "0")
	dir := t.TempDir()
	tr := newTrainer(t, meta)
	r, err := Start(tr, Options{Dir: dir, Meta: map[string]string{"stage": "x"}, FinalCheckpoint: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != CheckpointFile {
		t.Errorf("files %v", ents)
	}
	c, err := transformer.LoadCheckpoint(filepath.Join(dir, CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta["stage"] != "x" || r.LastCheckpoint != tr.Step {
		t.Errorf("meta %v, last checkpoint %d of %s steps", c.Meta, r.LastCheckpoint, strconv.Itoa(tr.Step))
	}
}

// TestSnapshotName: ParseSnapshotName reads back every name SnapshotName
// writes, and nothing else.
func TestSnapshotName(t *testing.T) {
	for _, step := range []int{0, 1, 42, 999999999} {
		if got, ok := ParseSnapshotName(SnapshotName(step)); !ok || got != step {
			t.Errorf("step %d: %q read back as %d, %v", step, SnapshotName(step), got, ok)
		}
	}
	for _, name := range []string{"step-00000001.safetensors", "step-0000000001.safetensors", "step-00000000x.safetensors",
		"step-000000001.safetensors.tmp", "model.safetensors", "step--00000001.safetensors", "step-000000001.json"} {
		if step, ok := ParseSnapshotName(name); ok {
			t.Errorf("%q read as the snapshot of step %d", name, step)
		}
	}
}
