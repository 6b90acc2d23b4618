//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

// TestTorchProgressAgrees: the torch engine's bar counts epochs as the
// summary does (item 6; before: "step 200/200 epoch 2" then "trained 200
// steps, 1 epochs").
func TestTorchProgressAgrees(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	out := filepath.Join(dir, "run")
	code, errOut := stderrOf(t, append(common, "--out", out, "--engine", "torch", "--device", "cpu", "--max-steps", "5", "--log-every", "1")...)
	c, err := transformer.LoadCheckpoint(filepath.Join(out, trainrun.CheckpointFile))
	if code != 0 || err != nil {
		t.Fatalf("exit %d, %v:\n%s", code, err, errOut)
	}
	want := fmt.Sprintf("step 5/5 epoch %.2f loss", trainrun.EpochsOf(5, c.Train.BatchSize, c.TrainWindows))
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, fmt.Sprintf("best val %.4f", c.State.BestVal)) {
		t.Errorf("the torch bar does not end with %q… best val %.4f:\n%s", want, c.State.BestVal, errOut)
	}
}

// TestTorchExtend: the torch engine extends a run too (the Go side writes
// the extended settings into the checkpoint the engine reads).
func TestTorchExtend(t *testing.T) {
	needTorchFull(t)
	dir := t.TempDir()
	_, common := tinyData(t, dir)
	out := filepath.Join(dir, "run")
	runOK(t, append(common, "--out", out, "--engine", "torch", "--device", "cpu", "--epochs", "2")...)
	if err := runTrain([]string{"--out", out, "--resume", "--max-steps", "10"}); err != nil {
		t.Fatalf("extend on the torch engine: %v", err)
	}
	c, err := transformer.LoadCheckpoint(filepath.Join(out, trainrun.CheckpointFile))
	if err != nil || c.State.Step != 10 || c.Train.MaxSteps != 10 || c.Meta[trainrun.MetaExtensions] == "" {
		t.Fatalf("extended torch run: %v, step %d, max steps %d, extensions %q", err, c.State.Step, c.Train.MaxSteps, c.Meta[trainrun.MetaExtensions])
	}
	if b, err := os.ReadFile(filepath.Join(out, trainrun.LogFile)); err != nil || !strings.Contains(string(b), `{"extended":{"at_step":6,"max_steps":10,`) {
		t.Errorf("the torch engine's train.jsonl does not record the extension: %v\n%s", err, b)
	}
}
