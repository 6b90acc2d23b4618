package trainrun

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// BenchmarkSnapshotOverhead measures what snapshots cost a training run:
// each iteration trains the small preset's two-layer model (4 heads,
// E = 64, N = 256, batch 32) for benchSteps steps twice, interleaved so
// that both runs see the same machine load — once without snapshots and
// once with a snapshot after every step (fsynced model files, the worst
// case) — then saves the trained model benchSteps times on its own. It
// reports the time per step without snapshots (step-ms), the extra time
// per snapshot seen in training (snapshot-ms: a difference of two run
// times, so noisy on a loaded machine), the time of one save on its own
// (save-ms: the work a snapshot adds) and from save-ms the overhead of the
// study's schedule log:30 on a 4000-step run (log30-4000-overhead-%,
// = n × save-ms / (4000 × step-ms) × 100 with n ≤ 30 the schedule's
// distinct steps). A warm-up run comes first, and the two runs alternate
// their order between iterations.
//
//	go test ./trainrun -run '^$' -bench SnapshotOverhead -benchtime 3x
func BenchmarkSnapshotOverhead(b *testing.B) {
	const benchSteps = 20
	dir := filepath.Join(b.TempDir(), "data")
	ds, err := dataset.Build(dataset.Config{Prior: source.PaperPrior(3), K: 64, NK: 640, N: 256, Fresh: false, Seed: 3}, 2, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := ds.Write(dir, false); err != nil {
		b.Fatal(err)
	}
	meta := map[string]string{"data": dir, "val": "", "val_frac": "0", "N": "256", "split_seed": "1"}
	train, val, A, err := Data(meta)
	if err != nil {
		b.Fatal(err)
	}
	var last *transformer.Model
	run := func(snapshots []int) time.Duration {
		cfg := transformer.Config{Layers: 2, Heads: []int{4, 4}, Embed: 64, Context: 256, Alphabet: A,
			FeedForward: true, LayerNorm: true, Activation: transformer.GELU, Positional: transformer.Learned}
		m, err := transformer.NewOn(cpu.NewDefault(), cfg, 1)
		if err != nil {
			b.Fatal(err)
		}
		tc := transformer.DefaultTrainConfig()
		tc.BatchSize, tc.Epochs, tc.MaxSteps, tc.WarmupSteps = 32, 1, benchSteps, 2
		tr, err := transformer.NewTrainer(m, tc, train, val)
		if err != nil {
			b.Fatal(err)
		}
		r, err := Start(tr, Options{Dir: b.TempDir(), Meta: meta, Snapshots: snapshots})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := r.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
		last = m
		return time.Since(t0)
	}
	every := make([]int, benchSteps)
	for i := range every {
		every[i] = i + 1
	}
	run(nil) // warm-up: page in the data and the code before measuring
	var plain, snap, save time.Duration
	out := b.TempDir()
	if err := os.MkdirAll(filepath.Join(out, SnapshotDir), 0o755); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 { // alternate the order, so that neither run always goes first
			plain += run(nil)
			snap += run(every)
		} else {
			snap += run(every)
			plain += run(nil)
		}
		t0 := time.Now()
		for s := range benchSteps {
			if err := last.SaveSafetensors(SnapshotPath(out, s+1)); err != nil {
				b.Fatal(err)
			}
		}
		save += time.Since(t0)
	}
	n := float64(b.N * benchSteps)
	stepMS := plain.Seconds() * 1e3 / n
	saveMS := save.Seconds() * 1e3 / n
	b.ReportMetric(stepMS, "step-ms")
	b.ReportMetric((snap-plain).Seconds()*1e3/n, "snapshot-ms")
	b.ReportMetric(saveMS, "save-ms")
	log30, err := SnapshotSteps("log:30", 4000) // the distinct steps: fewer than 30
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(100*float64(len(log30))*saveMS/(4000*stepMS), "log30-4000-overhead-%")
}
