package transformer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/backend/cpu"
)

// detEntry is a LogEntry without its two machine-dependent fields.
func detEntry(e LogEntry) LogEntry {
	e.TokensPerSecond, e.Elapsed = 0, 0
	return e
}

func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

func sameEntry(a, b LogEntry) bool {
	a, b = detEntry(a), detEntry(b)
	return a.Step == b.Step && a.Epoch == b.Epoch && a.TrainLoss == b.TrainLoss && a.EpochEnd == b.EpochEnd &&
		sameFloat(a.EpochTrainLoss, b.EpochTrainLoss) && sameFloat(a.ValLoss, b.ValLoss) &&
		sameFloat(a.BestValLoss, b.BestValLoss) && a.LR == b.LR && a.GradNorm == b.GradNorm
}

func compareRuns(t *testing.T, what string, got, want *Trainer) {
	t.Helper()
	for i := range liveParams(want.Model) {
		if liveParams(got.Model)[i] != liveParams(want.Model)[i] {
			t.Fatalf("%s: param %d is %v, uninterrupted %v", what, i, liveParams(got.Model)[i], liveParams(want.Model)[i])
		}
	}
	if len(got.History) != len(want.History) {
		t.Fatalf("%s: %d log entries, uninterrupted %d", what, len(got.History), len(want.History))
	}
	for i := range want.History {
		if !sameEntry(got.History[i], want.History[i]) {
			t.Fatalf("%s: log entry %d is %+v, uninterrupted %+v", what, i, detEntry(got.History[i]), detEntry(want.History[i]))
		}
	}
	if got.Step != want.Step || got.Epoch != want.Epoch || got.BestVal != want.BestVal || got.Stopped != want.Stopped {
		t.Fatalf("%s: ended at step %d epoch %d best %v stopped %v, uninterrupted %d %d %v %v", what,
			got.Step, got.Epoch, got.BestVal, got.Stopped, want.Step, want.Epoch, want.BestVal, want.Stopped)
	}
}

// TestResumeEveryStep trains a tiny model while taking a checkpoint (in
// memory) after every step, then resumes from each of them and requires
// the final parameters, counters and log to be bit-identical to the
// uninterrupted run's; also a chain of two interruptions.
func TestResumeEveryStep(t *testing.T) {
	train, _, _ := markovWindows(testChain, 44, 12, 11)
	val, _, _ := markovWindows(testChain, 8, 12, 12)
	cases := []struct {
		name string
		mod  func(*TrainConfig)
		val  Windows
	}{
		// 44 windows, batch 8: five full batches and one of 4 per epoch;
		// the patience ends the run early or the epochs do.
		{"val+patience", func(c *TrainConfig) { c.Epochs, c.Patience, c.LogEvery, c.LR = 12, 1, 4, 0.05 }, val},
		// MaxSteps ends the run in the middle of an epoch; no validation.
		{"maxsteps", func(c *TrainConfig) { c.Epochs, c.MaxSteps, c.LogEvery, c.SumOverWindow = 3, 15, 3, true }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(1, 2, 8, 12, 3)
			tcfg := DefaultTrainConfig()
			tcfg.BatchSize, tcfg.LR, tcfg.WarmupSteps, tcfg.Seed = 8, 3e-3, 3, 5
			tc.mod(&tcfg)
			newTrainer := func() *Trainer {
				m, err := NewOn(cpu.NewDefault(), cfg, 2)
				if err != nil {
					t.Fatal(err)
				}
				tr, err := NewTrainer(m, tcfg, train, tc.val)
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}
			ref := newTrainer()
			var ckpts [][]byte
			snap := func(tr *Trainer) error {
				var b bytes.Buffer
				if err := tr.WriteCheckpoint(&b, map[string]string{"k": "v"}); err != nil {
					return err
				}
				ckpts = append(ckpts, b.Bytes())
				return nil
			}
			if err := snap(ref); err != nil {
				t.Fatal(err)
			}
			ref.CheckpointEvery = 1
			ref.OnCheckpoint = func() error { return snap(ref) }
			if _, err := ref.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(ckpts) != ref.Step+1 {
				t.Fatalf("%d checkpoints for %d steps", len(ckpts), ref.Step)
			}
			t.Logf("%d steps, %d epochs, %d log entries, stopped %v", ref.Step, ref.Epoch, len(ref.History), ref.Stopped)
			resume := func(b []byte) *Trainer {
				c, err := ReadCheckpoint(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if c.Meta["k"] != "v" {
					t.Fatalf("meta %v", c.Meta)
				}
				tr, err := c.ResumeOn(cpu.NewDefault(), train, tc.val)
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}
			for k, b := range ckpts {
				tr := resume(b)
				if tr.Step != k {
					t.Fatalf("checkpoint %d is at step %d", k, tr.Step)
				}
				if _, err := tr.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				compareRuns(t, fmt.Sprintf("resumed at step %d", k), tr, ref)
			}
			// Two interruptions: resume at step 3, stop after 4 more steps,
			// checkpoint, resume again.
			tr := resume(ckpts[3])
			ctx, cancel := context.WithCancel(context.Background())
			tr.OnStep = func(step int, _ float64) {
				if step == 7 {
					cancel()
				}
			}
			if _, err := tr.Run(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Run after cancel: %v", err)
			}
			var b bytes.Buffer
			if err := tr.WriteCheckpoint(&b, nil); err != nil {
				t.Fatal(err)
			}
			tr2 := resume2(t, b.Bytes(), train, tc.val)
			if tr2.Step != 7 {
				t.Fatalf("second checkpoint at step %d", tr2.Step)
			}
			if _, err := tr2.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			compareRuns(t, "resumed twice", tr2, ref)
		})
	}
}

func resume2(t *testing.T, b []byte, train, val Windows) *Trainer {
	c, err := ReadCheckpoint(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := c.ResumeOn(cpu.NewDefault(), train, val)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestCheckpointFile checks the atomic file round trip, the exact float
// encoding (±Inf, NaN), the stale temporary files, and the errors.
func TestCheckpointFile(t *testing.T) {
	train, _, _ := markovWindows(testChain, 16, 8, 1)
	m, _ := NewOn(cpu.NewDefault(), DefaultConfig(1, 1, 4, 8, 3), 1)
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs = 8, 1
	tr, err := NewTrainer(m, tc, train, train[:4])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "checkpoint.safetensors")
	if err := tr.SaveCheckpoint(path, nil); err != nil { // BestVal = +Inf
		t.Fatal(err)
	}
	c, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(c.State.BestVal, 1) || c.BestParams != nil || c.TrainWindows != 16 || c.ValWindows != 4 || c.WindowLen != 8 {
		t.Fatalf("fresh checkpoint: %+v", c.State)
	}
	if _, err := tr.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lr := tr.LR
	tr.LR = math.NaN() // encoded, but refused on reading
	if err := tr.SaveCheckpoint(path, map[string]string{"data": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "lr NaN") {
		t.Fatalf("a NaN learning rate: error %v", err)
	}
	tr.LR = lr
	if err := tr.SaveCheckpoint(path, map[string]string{"data": "x"}); err != nil {
		t.Fatal(err)
	}
	c, err = LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.State.LR != lr || c.State.BestVal != tr.BestVal || len(c.BestParams) != len(liveParams(m)) || c.Meta["data"] != "x" || c.AdamT != 2 {
		t.Fatalf("trained checkpoint: %+v %v", c.State, c.Meta)
	}
	if _, err := c.ResumeOn(cpu.NewDefault(), train[:8], train[:4]); err == nil {
		t.Error("resume on other windows accepted")
	}
	os.WriteFile(filepath.Join(dir, ".checkpoint.safetensors.tmp123"), []byte("partial"), 0o644)
	if err := RemoveStaleTemp(path); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("directory holds %d files after RemoveStaleTemp", len(ents))
	}
	b, _ := os.ReadFile(path)
	for _, bad := range [][]byte{b[:len(b)-3], b[:20], []byte("garbage!garbage!")} {
		if _, err := ReadCheckpoint(bytes.NewReader(bad)); err == nil {
			t.Errorf("corrupt checkpoint of %d bytes accepted", len(bad))
		}
	}
	var mb bytes.Buffer
	m.WriteSafetensors(&mb)
	if _, err := ReadCheckpoint(&mb); err == nil {
		t.Error("a model file read as a checkpoint")
	}
}
