package reproduce

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/vomc/vomc/transformer"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/eval"
)

// TestSetAndLoad checks the override parsing: scalars, lists, model lists,
// JSON values, a config file, unknown keys and bad values.
func TestSetAndLoad(t *testing.T) {
	t.Parallel()
	c, err := Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"N", "128"}, {"lr", "2e-3"}, {"depths", "1,2,3"}, {"seed", "7"},
		{"sum-loss", "true"}, {"fig3_models", "2;2,2;1,1,1-ff"}, {"fig4_models", `["4,4-ff-ln"]`}, {"heatmap_model", "2,2"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("Set(%s, %s): %v", kv[0], kv[1], err)
		}
	}
	if c.N != 128 || c.LR != 2e-3 || !slices.Equal(c.Depths, []int{1, 2, 3}) || c.Seed != 7 || !c.SumLoss ||
		!slices.Equal(c.Fig3Models, []string{"2", "2,2", "1,1,1-ff"}) || !slices.Equal(c.Fig4Models, []string{"4,4-ff-ln"}) {
		t.Fatalf("after Set: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("nope", "1"); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Errorf("unknown key: %v", err)
	}
	if err := c.Set("N", "abc"); err == nil {
		t.Error("N=abc accepted")
	}
	if err := c.Load(strings.NewReader(`{"E": 48, "batch": 8}`)); err != nil || c.Embed != 48 || c.Batch != 8 || c.N != 128 {
		t.Errorf("Load: %v %+v", err, c)
	}
	if err := c.Load(strings.NewReader(`{"bogus": 1}`)); err == nil {
		t.Error("unknown JSON key accepted")
	}
	m, err := ParseModel("1,1,1-ff")
	if err != nil || m.Label() != "TF(1,1,1) w/o FF" || m.FF || !m.LN || len(m.Heads) != 3 {
		t.Errorf("ParseModel: %+v %v", m, err)
	}
	if m, _ := ParseModel("4,4-ff-ln"); m.Label() != "TF(4,4) attn-only" {
		t.Errorf("label %q", m.Label())
	}
	if _, err := ParseModel("4,x"); err == nil {
		t.Error("bad model accepted")
	}
	sm, err := ParseModel("4,4-sin")
	if err != nil || !sm.Sin || sm.Label() != "TF(4,4) sin" || sm.Slug() != "h4-4-sin" || sm.TransformerConfig(c).Positional != transformer.Sinusoidal {
		t.Errorf("ParseModel(4,4-sin): %+v %v, label %q slug %q", sm, err, sm.Label(), sm.Slug())
	}
	if m, _ := ParseModel("4,4"); m.TransformerConfig(c).Positional != transformer.Learned {
		t.Error("default positions should be learned")
	}
	c.Fig3Models = []string{"3"} // E=48 is not divisible by... 3 is fine; 5 is not
	c.Fig3Models = []string{"5"}
	if err := c.Validate(); err == nil {
		t.Error("E=48 with 5 heads accepted")
	}
	for _, p := range Presets {
		c, err := Preset(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("preset %s: %v", p, err)
		}
		if h := c.EstimateHours(); !(h > 0) {
			t.Errorf("preset %s: estimate %g h", p, h)
		}
	}
}

func testLog(t *testing.T) io.Writer {
	if testing.Verbose() {
		return os.Stderr
	}
	return io.Discard
}

// TestTinyEndToEnd runs the tiny preset, checks every figure and the
// report, runs it again (every stage cached), then changes one parameter
// of the Fig. 5 stage (only that stage and the figures/report rerun).
// With -short it runs every stage of the tiny preset with less data and
// fewer training steps.
func TestTinyEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		cfg.MaxSteps, cfg.SynthSteps, cfg.Warmup, cfg.CheckpointEvery = 60, 60, 10, 30
		cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 50, 80, 6
	}
	cfg.SynthEncodings = []string{"paper", "linear"}
	out := t.TempDir()
	opts := Options{Out: out, Version: "test", CodeKey: "test", Log: testLog(t)}
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 {
		t.Errorf("fresh run skipped %v", res.Skipped)
	}
	for _, f := range []string{Fig3File, Fig4File, Fig10File, ConstructFile, Fig8File, fig8File("linear"), Fig5HeatmapFile} {
		if st, err := os.Stat(filepath.Join(out, "figures", f)); err != nil || st.Size() < 1000 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	html, err := os.ReadFile(res.Report)
	if err != nil {
		t.Fatal(err)
	}
	checkHTML(t, html)
	for _, want := range []string{"Fig. 3", "Fig. 4", "Fig. 5", "Fig. 8", "Fig. 10", "construct", "TF(1,1)", "TF(2,2) attn-only",
		"TF 2-0 w/ all counts", "TF 2-0 w/ all counts [linear]", "linear encoding: ", "paper encoding: ", "By query position (", "KN(D=2", "PPM(D=2,A)", "PPM(D=2,A,norm)", "PPM(D=2,A,excl)", "Which statements depend on the PPM variant", "null test per head and hypothesis", "excess over CTW", "&#34;preset&#34;: &#34;tiny&#34;", "They coincide"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := bytes.Count(html, []byte(`src="data:image/png;base64,`)); n < 8 {
		t.Errorf("report embeds %d images, want ≥ 8", n)
	}

	// Second run: every stage cached.
	res2, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Ran) != 0 {
		t.Errorf("second run ran %v", res2.Ran)
	}
	// One parameter of Fig. 5: only fig5, figures-independent report rerun.
	cfg.HeatmapSuffix = 1
	res3, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{StageFig5, StageReport}; !slices.Equal(res3.Ran, want) {
		t.Errorf("after changing heatmap_suffix ran %v, want %v", res3.Ran, want)
	}
	// A training parameter: that model's training and evaluation, the
	// figures and the report (and Fig. 5, whose model it is).
	cfg.Warmup += 5
	cfg.Fig3Models = []string{"2,2"}
	cfg.Fig4Models = nil
	cfg.SynthVariants = nil
	res4, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{StageTrainData, StageTestData, StageBaselines, StageConstruct} {
		if slices.Contains(res4.Ran, s) {
			t.Errorf("changing the training warm-up reran %s", s)
		}
	}
	for _, s := range []string{"train-tf-h2-2", "eval-tf-h2-2", StageFig5, StageFigures, StageReport} {
		if !slices.Contains(res4.Ran, s) {
			t.Errorf("changing the training warm-up did not rerun %s (ran %v)", s, res4.Ran)
		}
	}
	checkChromium(t, res.Report)
}

// checkHTML checks that the report is well-formed (it parses as XML) and
// self-contained (no external URL in any attribute or CSS).
func checkHTML(t *testing.T, html []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(html))
	d.Strict = true
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if (a.Name.Local == "src" || a.Name.Local == "href") && !strings.HasPrefix(a.Value, "data:") && !strings.HasPrefix(a.Value, "#") {
					t.Errorf("<%s %s=%q> refers outside the file", se.Name.Local, a.Name.Local, a.Value[:min(60, len(a.Value))])
				}
			}
			if se.Name.Local == "script" || se.Name.Local == "link" || se.Name.Local == "iframe" {
				t.Errorf("report has a <%s> element", se.Name.Local)
			}
		}
	}
	if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/|url\(`).Find(html); m != nil {
		t.Errorf("report holds an external reference %q", m)
	}
}

// checkChromium renders the report in headless Chromium when it is on PATH.
func checkChromium(t *testing.T, report string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("chromium not on PATH: skipping the rendering check (scripts/check_report.sh installs it)")
		return
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	abs, _ := filepath.Abs(report)
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--screenshot="+shot, "--window-size=1400,4000", "file://"+abs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("chromium: %v\n%s", err, out)
	}
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 50000 {
		t.Errorf("chromium screenshot of the report: %v (size %d)", err, func() int64 {
			if st != nil {
				return st.Size()
			}
			return 0
		}())
	}
}

// TestResumeAfterCancel cancels a run in the middle of training and checks
// that the next run resumes that model from its checkpoint (and skips the
// stages done before) and gives the same model as an uninterrupted run.
func TestResumeAfterCancel(t *testing.T) {
	t.Parallel()
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants = []string{"2,2"}, nil, nil
	cfg.MaxSteps, cfg.CheckpointEvery = 200, 40
	stop := 130
	if testing.Short() {
		cfg.MaxSteps, cfg.CheckpointEvery, cfg.Warmup, stop = 80, 20, 10, 50
		cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 50, 40, 4
	}
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	opts := Options{Out: out, Version: "test", CodeKey: "test", Log: &log, OnStep: func(stage string, step int) {
		if step == stop {
			cancel()
		}
	}}
	if _, err := Run(ctx, cfg, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
	if !strings.Contains(log.String(), "interrupted") && !strings.Contains(log.String(), "train-tf-h2-2") {
		t.Logf("log: %s", log.String())
	}
	var steps []int
	log.Reset()
	opts.OnStep = func(stage string, step int) { steps = append(steps, step) }
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("resuming from checkpoint at step %d", stop)) {
		t.Errorf("no resume in log:\n%s", log.String())
	}
	if len(steps) == 0 || steps[0] != stop+1 || steps[len(steps)-1] != cfg.MaxSteps {
		t.Errorf("resumed steps %v..., want %d..%d", steps[:min(3, len(steps))], stop+1, cfg.MaxSteps)
	}
	for _, s := range []string{StageTrainData, StageTestData, StageBaselines, StageConstruct} {
		if !slices.Contains(res.Skipped, s) {
			t.Errorf("resumed run did not skip %s", s)
		}
	}
	// The resumed model equals an uninterrupted run's.
	out2 := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Out: out2, Version: "test", CodeKey: "test"}); err != nil {
		t.Fatal(err)
	}
	a, _ := filepath.Glob(filepath.Join(out, "stages", "train-tf-h2-2-*", modelFile))
	b, _ := filepath.Glob(filepath.Join(out2, "stages", "train-tf-h2-2-*", modelFile))
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("model files %v %v", a, b)
	}
	ba, _ := os.ReadFile(a[0])
	bb, _ := os.ReadFile(b[0])
	if !bytes.Equal(ba, bb) {
		t.Error("resumed model differs from the uninterrupted one")
	}
}

// TestSpikes: one outlying window gives a spike carried by ≈ 1 window; a
// shift of many windows gives many; a flat curve none.
func TestSpikes(t *testing.T) {
	t.Parallel()
	const n, N = 1000, 60
	mk := func(spikeMean, spikeSD float64) *eval.MethodResult {
		m := &eval.MethodResult{Excess: make([]eval.Interval, N)}
		for i := range m.Excess {
			mean, sd := 0.02, 0.1
			if i == 30 {
				mean, sd = spikeMean, spikeSD
			}
			h := 1.96 * sd / math.Sqrt(n)
			m.Excess[i] = eval.Interval{Mean: mean, SD: sd, Lo: mean - h, Hi: mean + h}
		}
		return m
	}
	if s := spikes(mk(0.02, 0.1), n, 0.03); len(s) != 0 {
		t.Errorf("flat curve: %+v", s)
	}
	// one window with excess 100 nats: mean +0.1, SD ≈ 100/√n = 3.16 — the
	// interval is too wide to count as a spike at all
	if s := spikes(mk(0.12, 3.16), n, 0.03); len(s) != 0 {
		t.Errorf("one outlier flagged: %+v", s)
	}
	// 100 windows with excess 1.3: mean +0.13, SD ≈ 0.39
	s := spikes(mk(0.15, 0.39), n, 0.03)
	if len(s) != 1 || s[0].Pos != 31 || s[0].Windows < 50 || s[0].Windows > 150 {
		t.Errorf("systematic spike: %+v", s)
	}
}
