package probe

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/source"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
	"github.com/vomc/vomc/transformer/backend/cpu"
)

// writeData writes a data set of K windows of N symbols from prior p.
func writeData(t *testing.T, p source.Prior, K, N int) string {
	t.Helper()
	ds, err := dataset.Build(dataset.Config{Prior: p, K: K, NK: N, N: N, Fresh: true, Seed: 5}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := ds.Write(dir, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// find returns the probe of (cond, stream, target).
func find(t *testing.T, res *Result, cond string, stream int, target string) Probe {
	t.Helper()
	for _, p := range res.Probes {
		if p.Condition == cond && p.Stream == stream && p.Target == target {
			return p
		}
	}
	t.Fatalf("no probe (%s, %d, %s)", cond, stream, target)
	return Probe{}
}

// TestSynthCounts is the check on a model whose features are known by
// construction: the stream entering the FF of the synthetic "TF 2-0 w/
// all counts" model holds the counts n_{s_k}(a) of every context length
// k (as c/Context under the Scale normalisation: exactly linear, R² ≥
// 0.999), while at the same stream the shuffled control is ≈ 0. Under the
// default Log1p normalisation the stream holds ln(1 + c), which a linear
// probe of the raw counts reads only in part (R² ≈ 0.75–0.8 here).
func TestSynthCounts(t *testing.T) {
	data := writeData(t, source.PaperPrior(2), 60, 64)
	for _, tc := range []struct {
		norm string
		min  float64
	}{{synth.Scale, 0.999}, {synth.Log1p, 0.7}} {
		m, err := synth.NewOn(cpu.NewDefault(), synth.Config{Variant: synth.WithAllCounts, A: 3, D: 2, Context: 64, CountNorm: tc.norm}, 1)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "model.safetensors")
		if err := m.Save(file); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), Options{Backend: cpu.NewDefault(), Model: file, Data: data, Train: 30, Val: 10, Test: 20, Positions: 32, Bootstrap: 50})
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= 2; k++ {
			p := find(t, res, Trained, 0, CountsTarget(k))
			if v := float64(p.Scores[0].Value); !(v >= tc.min) {
				t.Errorf("%s: counts_%d from the features: R² = %.4f, want ≥ %g", tc.norm, k, v, tc.min)
			}
			if v := float64(find(t, res, Shuffled, 0, CountsTarget(k)).Scores[0].Value); math.Abs(v) > 0.1 {
				t.Errorf("%s: counts_%d, shuffled targets: R² = %.4f, want ≈ 0", tc.norm, k, v)
			}
			if s := p.Scores[0]; !(s.Lo <= s.Value && s.Value <= s.Hi) {
				t.Errorf("%s: counts_%d: %g outside its interval [%g, %g]", tc.norm, k, s.Value, s.Lo, s.Hi)
			}
		}
	}
}

// TestRun runs the whole probe on a small transformer and checks the
// result's shape, the files, determinism and the refusals.
func TestRun(t *testing.T) {
	prior := source.PaperPrior(2)
	prior.Depths = []int{1, 2}
	data := writeData(t, prior, 40, 48)
	m, err := transformer.NewOn(cpu.NewDefault(), transformer.DefaultConfig(2, 2, 16, 32, 3), 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := m.SaveSafetensors(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	o := Options{Backend: cpu.NewDefault(), Model: dir, Data: data, Train: 20, Val: 8, Test: 10, Positions: 16, Bootstrap: 40, Out: out, Bands: []int{8}}
	res, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Length != 32 || len(res.Streams) != 3 || len(res.Bands) != 3 {
		t.Errorf("length %d, streams %v, bands %v: want 32, 3 streams, 3 bands", res.Length, res.Streams, res.Bands)
	}
	names := []string{OmegaTarget, CTWOmegaTarget, PosteriorTarget, CountsTarget(0), CountsTarget(1), CountsTarget(2), MAPTarget, CTWMAPTarget}
	if len(res.Targets) != len(names) {
		t.Fatalf("targets %v, want %v", res.Targets, names)
	}
	for i, tg := range res.Targets {
		if tg.Name != names[i] {
			t.Errorf("target %d is %s, want %s", i, tg.Name, names[i])
		}
	}
	if n := len(res.Probes); n != 3*3*len(names) {
		t.Errorf("%d probes, want %d", n, 3*3*len(names))
	}
	if !strings.Contains(res.Init, "Go engine's GPT-2-style initialisation") || !strings.Contains(res.Init, "torch") {
		t.Errorf("Init %q: want it to name the Go engine's initialisation and what it is for a torch model", res.Init)
	}
	if p := find(t, res, Init, 2, MAPTarget); p.Metric != "accuracy" || !(p.Scores[0].Chance > 0) {
		t.Errorf("MAP probe: metric %s, chance %g", p.Metric, p.Scores[0].Chance)
	}
	first, err := os.ReadFile(filepath.Join(out, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(first, &back); err != nil || len(back.Probes) != len(res.Probes) {
		t.Fatalf("probe.json does not read back: %v", err)
	}
	for _, f := range []string{CSVFile, FigureFile} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := Run(context.Background(), o); !errors.Is(err, fsutil.ErrExists) {
		t.Errorf("a second run over the outputs: %v, want ErrExists", err)
	}
	o.Force = true
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(out, JSONFile)); string(again) != string(first) {
		t.Error("the same seed gave different bytes")
	}
	be := cpu.NewDefault()
	for _, bad := range []struct {
		o    Options
		want string
	}{
		{Options{Model: dir, Data: data}, "backend"},
		{Options{Backend: be, Model: filepath.Join(dir, "nope"), Data: data}, "nope"},
		{Options{Backend: be, Model: dir, Data: data, Train: 30, Val: 8, Test: 10}, "windows asked for"},
		{Options{Backend: be, Model: dir, Data: data, Positions: -2}, "Positions -2"},
		{Options{Backend: be, Model: dir, Data: data, Bands: []int{8, 4}}, "Bands [8 4]"},
		{Options{Backend: be, Model: dir, Data: data, Penalties: []float64{0}}, "Penalties [0]"},
		{Options{Backend: be, Model: dir, Data: writeData(t, source.PaperPrior(1), 4, 8)}, "alphabet"},
	} {
		if bad.want == "alphabet" {
			p := source.PaperPrior(1)
			p.A = 2
			bad.o.Data = writeData(t, p, 40, 8)
		}
		if _, err := Run(context.Background(), bad.o); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: error %v, want one naming %q", bad.o, err, bad.want)
		}
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		bands []int
		err   string
	}{
		{[]string{"--out", "o"}, []int{16, 64, 256}, ""},
		{[]string{"--out", "o", "--bands", "8, 32"}, []int{8, 32}, ""},
		{[]string{"--bands", "8"}, nil, "--out"},
		{[]string{"--out", "o", "--bands", "8,x"}, nil, `"x" is not a position`},
	} {
		fs := flag.NewFlagSet("probe", flag.ContinueOnError)
		f := AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		o, err := f.Options()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one naming %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(o.Bands, tc.bands) || o.Train != 400 || o.Positions != 64 {
			t.Errorf("%v: %+v, %v; want bands %v and the defaults", tc.args, o, err, tc.bands)
		}
	}
}
