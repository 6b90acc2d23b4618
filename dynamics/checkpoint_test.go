package dynamics

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// TestMeasureCheckpoint: a measurement interrupted after two of four
// snapshots and started again with the checkpoint measures only the other
// two and gives the points of one uninterrupted run; a torn last line is
// dropped; another snapshot file under the same step, or other options,
// is measured afresh.
func TestMeasureCheckpoint(t *testing.T) {
	dir := t.TempDir()
	u := fixed{"uniform", []float64{1. / 3, 1. / 3, 1. / 3}}
	q := fixed{"skewed", []float64{0.5, 0.3, 0.2}}
	c := fixed{"CTW-like", []float64{0.2, 0.2, 0.6}}
	models := map[int]Model{1: u, 2: q, 4: c, 8: q}
	var snaps []Snapshot
	for _, s := range []int{1, 2, 4, 8} {
		p := filepath.Join(dir, "snap"+string(rune('0'+s)))
		if err := os.WriteFile(p, []byte{byte(s)}, 0o644); err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, Snapshot{Step: s, Path: p})
	}
	opts := Options{Windows: windows(12, 16, 3, 2), References: []Reference{{"uniform", u}, {"skewed", q}, {"CTW-like", c}}, HeadWindows: -1}
	var loaded []int
	load := func(s Snapshot) (Model, error) { loaded = append(loaded, s.Step); return models[s.Step], nil }
	want, err := Measure(context.Background(), snaps, load, opts)
	if err != nil {
		t.Fatal(err)
	}

	ck := filepath.Join(dir, "checkpoint.jsonl")
	opts.Checkpoint = ck
	ctx, cancel := context.WithCancel(context.Background())
	o := opts
	o.Events = onProgress(func(done int) {
		if done == 2 {
			cancel()
		}
	})
	if _, err := Measure(ctx, snaps, load, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v", err)
	}
	// the process killed while writing a third line
	f, err := os.OpenFile(ck, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"step":4,"sha256":"ab`)
	f.Close()
	loaded = nil
	got, err := Measure(context.Background(), snaps, load, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, []int{4, 8}) {
		t.Errorf("resumed: loaded snapshots %v, want [4 8]", loaded)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed points differ from an uninterrupted run:\n%+v\n%+v", got, want)
	}
	b, _ := os.ReadFile(ck)
	if n := bytes.Count(b, []byte{'\n'}); n != 5 || !bytes.HasSuffix(b, []byte{'\n'}) {
		t.Errorf("checkpoint has %d lines (want a header and 4 points, the torn line dropped):\n%s", n, b)
	}

	// all kept: nothing is loaded
	loaded = nil
	if _, err := Measure(context.Background(), snaps, load, opts); err != nil || len(loaded) != 0 {
		t.Errorf("complete checkpoint: loaded %v, err %v", loaded, err)
	}
	// a retrained snapshot under step 2: measured again
	if err := os.WriteFile(snaps[1].Path, []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	loaded = nil
	if _, err := Measure(context.Background(), snaps, load, opts); err != nil || !reflect.DeepEqual(loaded, []int{2}) {
		t.Errorf("changed snapshot file: loaded %v, err %v; want [2]", loaded, err)
	}
	// other options: measured afresh (and the file started again)
	other := fixed{"skewed", []float64{0.45, 0.35, 0.2}} // same name, another distribution
	for _, tc := range []struct {
		name   string
		change func(*Options)
	}{
		{"windows", func(o *Options) { o.Windows = windows(12, 16, 3, 3) }},
		{"reference distribution", func(o *Options) { o.References = []Reference{{"uniform", u}, {"skewed", other}, {"CTW-like", c}} }},
		{"references", func(o *Options) { o.References = o.References[:2] }},
		{"excess", func(o *Options) { o.Excess = "skewed" }},
		{"null test", func(o *Options) { o.Null.Seed = 9 }},
		{"head windows", func(o *Options) { o.HeadWindows = 5 }},
		{"max k", func(o *Options) { o.MaxK = 2 }},
		{"identity", func(o *Options) { o.Identity = "another build" }},
	} {
		// a complete checkpoint of the base options first
		if _, err := Measure(context.Background(), snaps, load, opts); err != nil {
			t.Fatal(err)
		}
		o := opts
		tc.change(&o)
		loaded = nil
		if _, err := Measure(context.Background(), snaps, load, o); err != nil || len(loaded) != 4 {
			t.Errorf("other %s: loaded %v, err %v; want all four measured", tc.name, loaded, err)
		}
	}
	// a second measurement into the same file while one is open: refused
	held, err := openCheckpoint(ck, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Measure(context.Background(), snaps, load, opts); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("checkpoint held by another measurement: %v", err)
	}
	held.close()
	if err := RemoveCheckpoint(ck); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ck); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("RemoveCheckpoint left %s", ck)
	}
	if err := RemoveCheckpoint(ck); err != nil {
		t.Errorf("removing a missing checkpoint: %v", err)
	}
}

// TestRunCheckpoint: Run on real snapshots with head labels, interrupted
// after the first snapshot and resumed, writes the same dynamics.json as
// one uninterrupted run.
func TestRunCheckpoint(t *testing.T) {
	dir := t.TempDir()
	data, run := testRun(t, dir, 6, transformer.DefaultConfig(2, 2, 8, 16, 3), 1, 3, 9)
	cfg := RunConfig{Backend: cpu.NewDefault(), Run: run, Data: data, Windows: 6, HeadWindows: 4}
	full, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Checkpoint = filepath.Join(dir, "ck.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	c := cfg
	c.Events = onProgress(func(done int) {
		if done == 1 {
			cancel()
		}
	})
	if _, err := Run(ctx, c); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted: %v", err)
	}
	b, _ := os.ReadFile(cfg.Checkpoint)
	if n := strings.Count(string(b), "\n"); n != 2 {
		t.Fatalf("checkpoint after one snapshot: %d lines, want 2", n)
	}
	resumed, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resumed, full) {
		t.Errorf("resumed result differs:\n%+v\n%+v", resumed, full)
	}
	// the kept point is the one used: marked in the file, it comes back
	b, _ = os.ReadFile(cfg.Checkpoint)
	marked := bytes.Replace(b, []byte(`"closest":"`), []byte(`"closest":"MARK `), 1)
	if bytes.Equal(marked, b) {
		t.Fatal("no closest reference in the checkpoint")
	}
	os.WriteFile(cfg.Checkpoint, marked, 0o644)
	again, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(again.Points[0].Closest, "MARK ") || strings.HasPrefix(again.Points[1].Closest, "MARK ") {
		t.Errorf("closest after marking the first kept point: %q, %q", again.Points[0].Closest, again.Points[1].Closest)
	}
	// another backend (identity): measured afresh
	portable, err := kernels.Lookup("portable")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Backend = cpu.New(portable)
	fresh, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(fresh.Points[0].Closest, "MARK ") {
		t.Error("a point kept under another backend was reused")
	}
	if len(full.Points) != 3 || len(full.Points[0].Heads) == 0 {
		t.Errorf("%d points, %d heads at the first: the test measures nothing", len(full.Points), len(full.Points[0].Heads))
	}
}

// onProgress is an events.Sink that hands the snapshots done to f.
type onProgress func(done int)

func (f onProgress) Progress(_ string, done, _ int) { f(done) }
func (onProgress) Warn(string)                      {}
func (onProgress) Log(string)                       {}
