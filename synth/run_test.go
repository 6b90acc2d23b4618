package synth

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestTrainDirResume trains a synth model in a run directory (TrainDir),
// and the same run interrupted twice and resumed from its checkpoint: the
// resumed run ends with the parameters (bit for bit) and losses of the
// uninterrupted one. The checkpoint carries the data's metadata as
// trainrun.DataSpec describes it (as 'vomc train' writes it), and the
// errors name no command-line flag.
func TestTrainDirResume(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(3), K: 12, NK: 96, N: 24, Fresh: false, Seed: 4}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ds.Write(data, false); err != nil {
		t.Fatal(err)
	}
	tc := DefaultTrainConfig()
	tc.BatchSize, tc.Epochs, tc.WarmupSteps, tc.LR, tc.LogEvery = 8, 3, 3, 0.01, 2
	spec := trainrun.DataSpec{Data: data, ValFrac: 0.25, SplitSeed: tc.Seed}
	o := DirOptions{Data: spec, Model: Config{Variant: TF20, Embed: 6, Hidden: 12}, Train: tc, CheckpointEvery: 3}
	root := t.TempDir()
	o.Dir = filepath.Join(root, "ref")
	ref, err := TrainDir(context.Background(), trainrun.GoEngine(cpu.NewDefault()), o)
	if err != nil {
		t.Fatal(err)
	}

	o.Dir = filepath.Join(root, "run")
	for i, stop := range []int{4, 10, 0} {
		ctx, cancel := context.WithCancel(context.Background())
		o.OnStep = func(step int) {
			if step == stop {
				cancel()
			}
		}
		res, err := TrainDir(ctx, trainrun.GoEngine(cpu.NewDefault()), o)
		cancel()
		var ie *trainrun.InterruptedError
		if stop == 0 && err != nil || stop > 0 && (!errors.As(err, &ie) || ie.Step != stop || res.Run.LastCheckpoint != stop) {
			t.Fatalf("run %d, interrupted at step %d: %v", i, stop, err)
		}
		if stop == 0 {
			compareRuns(t, res, ref)
		}
		o = DirOptions{Dir: o.Dir, Resume: true, CheckpointEvery: 3}
	}

	c, err := transformer.LoadCheckpoint(filepath.Join(ref.Run.Dir, trainrun.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	want, err := spec.Meta()
	if err != nil {
		t.Fatal(err)
	}
	want["data_checksum"] = ds.Checksum()
	if !maps.Equal(c.Meta, want) {
		t.Errorf("checkpoint metadata %v, want %v", c.Meta, want)
	}
	for _, bad := range []DirOptions{
		{Dir: ref.Run.Dir, Data: spec, Train: tc},                                   // holds a run
		{Dir: filepath.Join(root, "x"), Data: spec, Train: tc, CheckpointEvery: -1}, // negative interval
		{Dir: filepath.Join(root, "none"), Resume: true},                            // nothing to resume
	} {
		_, err := TrainDir(context.Background(), trainrun.GoEngine(cpu.NewDefault()), bad)
		if err == nil || strings.Contains(err.Error(), "--") {
			t.Errorf("%+v: error %v", bad, err)
		}
	}
}

// compareRuns fails unless the run res ended as ref did: the same
// parameters, steps, losses and files.
func compareRuns(t *testing.T, res, ref *DirResult) {
	t.Helper()
	if !slices.Equal(res.Model.HostParams(), ref.Model.HostParams()) {
		t.Fatal("the resumed run's parameters differ from the uninterrupted run's")
	}
	a, b := res.Model.Info, ref.Model.Info
	if a.Steps != b.Steps || a.BestStep != b.BestStep || a.BestVal != b.BestVal || len(a.History) != len(b.History) {
		t.Fatalf("resumed %+v\nuninterrupted %+v", a, b)
	}
	for i, e := range a.History {
		r := b.History[i]
		if e.Step != r.Step || e.TrainLoss != r.TrainLoss || !(e.ValLoss == r.ValLoss || math.IsNaN(e.ValLoss) && math.IsNaN(r.ValLoss)) {
			t.Fatalf("log entry %d: resumed %+v, uninterrupted %+v", i, e, r)
		}
	}
	for _, f := range res.Files {
		if _, err := os.Stat(filepath.Join(res.Run.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d steps, best validation loss %.4f at step %d", a.Steps, a.BestVal, a.BestStep)
}
