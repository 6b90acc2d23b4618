package perf

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// TestOpProfileAddsUp runs a profiled benchmark at 1 and 2 threads and
// checks that the per-op rows cover the measured step: their sum is
// within 10% of the mean step (the rest is the trainer's own code between
// ops and the timing itself, microseconds against a step of
// milliseconds), every op of a full transformer has its row, and the
// table prints them with their speed-ups and shares.
func TestOpProfileAddsUp(t *testing.T) {
	const cfg = "L=2:H=2:E=32:N=64:B=8"
	bs, err := ParseTrainBenches(cfg, trainrun.GoEngine(cpu.NewDefault()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := BenchEngine(context.Background(), trainrun.GoEngine(cpu.NewDefault()), bs, EngineBenchOptions{Steps: 6, Warmup: 1, Threads: 2, Seed: 1, Profile: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Go) != 2 || r.Go[0].Threads != 1 || r.Go[1].Threads != 2 {
		t.Fatalf("want one profiled run at 1 thread and one at 2: %+v", r.Go)
	}
	for _, rep := range r.Go {
		p := rep.Profile
		if p == nil {
			t.Fatalf("%d threads: no profile", rep.Threads)
		}
		if p.Step != rep.MeanStep || p.Outside != p.Step-p.Sum {
			t.Errorf("%d threads: step %v (mean %v), sum %v, outside %v", rep.Threads, p.Step, rep.MeanStep, p.Sum, p.Outside)
		}
		var sum time.Duration
		for _, o := range p.Ops {
			if o.Time < 0 || o.Calls <= 0 {
				t.Errorf("%d threads: row %+v", rep.Threads, o)
			}
			sum += o.Time
		}
		if sum != p.Sum {
			t.Errorf("%d threads: rows add up to %v, Sum %v", rep.Threads, sum, p.Sum)
		}
		if d := p.Step - p.Sum; d < -p.Step/1000 || d > p.Step/10 {
			t.Errorf("%d threads: ops %v of a step of %v (outside ops %v, want within 10%%)", rep.Threads, p.Sum, p.Step, d)
		}
		for row := OpRow(0); row < RowOtherOps; row++ {
			o := p.OpTime(row.String())
			if o.Calls == 0 {
				t.Errorf("%d threads: no %q", rep.Threads, row)
			}
		}
		// per step: 2 layers' QKV products, 5 LayerNorms (2 per layer, the final one)
		if c := p.OpTime(RowQKVFwd.String()).Calls; c != 2 {
			t.Errorf("QKV forward %v calls per step, want 2", c)
		}
		if c := p.OpTime(RowLayerNormFwd.String()).Calls; c != 5 {
			t.Errorf("layernorm forward %v calls per step, want 5", c)
		}
	}
	var table bytes.Buffer
	if err := r.Write(&table, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{cfg + ": per-op time per step (ms)", "attention bwd", "zero activation grads", "AdamW step", "×2 thr", "%@2", "step (measured)"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
}

// TestOpProfileOffByDefault: without Profile, BenchEngine makes one
// unprofiled run per configuration (the model on the engine's backend
// itself), and the table has no per-op section.
func TestOpProfileOffByDefault(t *testing.T) {
	bs, err := ParseTrainBenches("L=1:H=2:E=8:N=16:B=4", trainrun.GoEngine(cpu.NewDefault()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := BenchEngine(context.Background(), trainrun.GoEngine(cpu.NewDefault()), bs, EngineBenchOptions{Steps: 2, Warmup: 1, Threads: 2, Seed: 1})
	if err != nil || len(r.Go) != 1 || r.Go[0].Profile != nil || r.Go[0].Threads != 2 {
		t.Fatalf("%+v, %v", r.Go, err)
	}
	var table bytes.Buffer
	if err := r.Write(&table, false); err != nil || strings.Contains(table.String(), "per-op") {
		t.Errorf("table (%v):\n%s", err, table.String())
	}
	if rep, err := BenchTrain(cpu.NewDefault(), bs[0], 1, 0, 1); err != nil || rep.Profile != nil {
		t.Errorf("BenchTrain: %+v, %v", rep, err)
	}
}
