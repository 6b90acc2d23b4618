package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/report"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
	"github.com/vomc/vomc/transformer"
)

func testLog(t *testing.T) events.Sink {
	if testing.Verbose() {
		return events.Writer(os.Stderr)
	}
	return nil
}

// TestTinyEndToEnd runs the tiny preset, checks every figure and the
// report, runs it again (every stage cached), then changes one parameter
// of the Fig. 5 stage (only that stage and the figures/report rerun).
// It trains each model for 100 steps instead of the preset's 600
// (checkpoints every 50): its data, models, batches and windows are the
// preset's, and nothing it checks depends on how far the models get.
// With -short it runs every stage of the tiny preset with less data,
// 20 training steps and batches of 8 windows, and does not render the
// report in Chromium.
func TestTinyEndToEnd(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxSteps, cfg.SynthSteps, cfg.CheckpointEvery = 100, 100, 50
	if testing.Short() {
		cfg.MaxSteps, cfg.SynthSteps, cfg.Warmup, cfg.CheckpointEvery, cfg.Batch = 20, 20, 5, 10, 8
		cfg.TrainTrees, cfg.TestTrees, cfg.ConstructWindows = 50, 80, 6
	}
	cfg.SynthEncodings = []string{"paper", "linear"}
	out := t.TempDir()
	opts := Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: testLog(t)}
	res, err := Run(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 {
		t.Errorf("fresh run skipped %v", res.Skipped)
	}
	for _, f := range []string{figures.Fig3File, figures.Fig4File, figures.Fig10File, figures.ConstructFile, figures.Fig8File, figures.Fig8FileFor("linear"), results.Fig5HeatmapFile} {
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
	if want := []string{results.StageFig5, results.StageReport}; !slices.Equal(res3.Ran, want) {
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
	for _, s := range []string{results.StageTrainData, results.StageTestData, results.StageBaselines, results.StageConstruct} {
		if slices.Contains(res4.Ran, s) {
			t.Errorf("changing the training warm-up reran %s", s)
		}
	}
	for _, s := range []string{"train-tf-h2-2", "eval-tf-h2-2", results.StageFig5, results.StageFigures, results.StageReport} {
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

// checkChromium renders the report in headless Chromium when it is on PATH
// (not under -short: seconds of CPU; the full suite renders it).
func checkChromium(t *testing.T, report string) {
	t.Helper()
	if testing.Short() {
		t.Log("-short: the report's rendering in Chromium is checked in the full suite (without -short)")
		return
	}
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
	if testing.Short() {
		t.Skip("-short: a study cancelled and resumed is checked in the full suite (without -short); trainrun's and TestSynthStageResume's resumes run here")
	}
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants = []string{"2,2"}, nil, nil
	cfg.MaxSteps, cfg.CheckpointEvery = 200, 40
	stop := 130
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	opts := Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: events.Writer(&log), OnStep: func(stage string, step int) {
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
	for _, s := range []string{results.StageTrainData, results.StageTestData, results.StageBaselines, results.StageConstruct} {
		if !slices.Contains(res.Skipped, s) {
			t.Errorf("resumed run did not skip %s", s)
		}
	}
	// The resumed model equals an uninterrupted run's.
	out2 := t.TempDir()
	if _, err := Run(context.Background(), cfg, Options{Engine: testEngine, Out: out2, Version: "test", CodeKey: "test"}); err != nil {
		t.Fatal(err)
	}
	a, _ := filepath.Glob(filepath.Join(out, "stages", "train-tf-h2-2-*", results.ModelFile))
	b, _ := filepath.Glob(filepath.Join(out2, "stages", "train-tf-h2-2-*", results.ModelFile))
	if len(a) != 1 || len(b) != 1 {
		t.Fatalf("model files %v %v", a, b)
	}
	ba, _ := os.ReadFile(a[0])
	bb, _ := os.ReadFile(b[0])
	if !bytes.Equal(ba, bb) {
		t.Error("resumed model differs from the uninterrupted one")
	}
	// The report counts the resumed stage with both its invocations: its
	// row and the total have the first one's training time besides the
	// seconds the second recorded; the uninterrupted stage's record and
	// row are as before.
	for _, tc := range []struct {
		out     string
		resumed bool
	}{{out, true}, {out2, false}} {
		dir := filepath.Dir(map[bool]string{true: a[0], false: b[0]}[tc.resumed])
		var done pipeline.Done
		var ti results.TrainInfo
		if err := results.ReadJSON(dir, pipeline.DoneFile, &done); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, results.InfoFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := results.ReadJSON(dir, results.InfoFile, &ti); err != nil {
			t.Fatal(err)
		}
		if tc.resumed != (ti.EarlierSeconds > 0) || tc.resumed != bytes.Contains(raw, []byte("EarlierSeconds")) {
			t.Errorf("resumed %v: %s records %s", tc.resumed, results.InfoFile, raw)
		}
		txt, err := os.ReadFile(filepath.Join(tc.out, report.ReportTextFile))
		if err != nil {
			t.Fatal(err)
		}
		row := regexp.MustCompile(`\ntrain-tf-h2-2 \| [0-9a-f]+ \| ([0-9.]+) \| ([^\n]*)`).FindSubmatch(txt)
		if row == nil {
			t.Fatalf("no stage row of train-tf-h2-2 in the report:\n%s", txt)
		}
		want := fmt.Sprintf("%.1f", done.Seconds+ti.EarlierSeconds)
		if string(row[1]) != want || tc.resumed != bytes.Contains(row[2], []byte("resumed: ")) || tc.resumed != bytes.Contains(txt, []byte("the 1 resumed training stage with")) {
			t.Errorf("resumed %v: stage row %q, want %s s (recorded %.1f s + earlier %.1f s)", tc.resumed, row[0], want, done.Seconds, ti.EarlierSeconds)
		}
	}
}

// TestIdenticalRunsSameStages runs a small study (every kind of stage,
// including the construction and a synthetic model, whose outputs record
// wall times) in two output directories: the stage directories have the
// same names; with another code key every name differs.
func TestIdenticalRunsSameStages(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two identical runs of a small study are compared in the full suite (without -short)")
	}
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants, cfg.HeatmapModel = []string{"2"}, nil, []string{"tf20"}, "2"
	cfg.MaxSteps, cfg.SynthSteps, cfg.Warmup, cfg.ConstructWindows = 20, 20, 5, 4
	cfg.TrainTrees, cfg.TestTrees = 40, 40
	names := func(out, code string) []string {
		t.Helper()
		if _, err := Run(context.Background(), cfg, Options{Engine: testEngine, Out: out, Version: "test", CodeKey: code}); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(filepath.Join(out, "stages"))
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	a := names(t.TempDir(), "code")
	b := names(t.TempDir(), "code")
	if !slices.Equal(a, b) {
		t.Errorf("stage directories of identical runs differ:\n%v\n%v", a, b)
	}
	for _, want := range []string{results.StageConstruct, results.StageSynth, "synth-tf20", results.StageFigures, results.StageReport} {
		if !slices.ContainsFunc(a, func(n string) bool { return strings.HasPrefix(n, want+"-") }) {
			t.Errorf("no stage %s in %v", want, a)
		}
	}
	g, err := Graph(cfg, Options{Engine: testEngine, Version: "test", CodeKey: "other code"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g {
		if slices.Contains(a, s.Name+"-"+s.Hash) {
			t.Errorf("stage %s has the same directory under another code key", s.Name)
		}
	}
}

// TestRunStage runs a small study stage by stage: a stage whose inputs are
// missing is refused with the missing input named; --stage runs exactly
// the one stage; a full run afterwards skips the stages done; the report
// stage publishes the report.
func TestRunStage(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Fig3Models, cfg.Fig4Models, cfg.SynthVariants, cfg.HeatmapModel = []string{"2"}, nil, nil, ""
	cfg.MaxSteps = 20
	out := t.TempDir()
	opts := Options{Engine: testEngine, Out: out, Version: "test", CodeKey: "test", Events: testLog(t)}
	ctx := context.Background()
	_, err = RunStage(ctx, cfg, opts, "eval-tf-h2")
	var mi *pipeline.MissingInputError
	if !errors.As(err, &mi) || mi.Input != results.StageTrainData || !strings.Contains(err.Error(), "needs stage data-train") {
		t.Fatalf("eval without inputs: %v", err)
	}
	if _, err := RunStage(ctx, cfg, opts, "nope"); err == nil || !strings.Contains(err.Error(), "no stage") {
		t.Errorf("unknown stage: %v", err)
	}
	states := func() map[string]string {
		g, err := Graph(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, s := range g {
			m[s.Name] = s.State
		}
		return m
	}
	res, err := RunStage(ctx, cfg, opts, results.StageTrainData)
	if err != nil || !slices.Equal(res.Ran, []string{results.StageTrainData}) {
		t.Fatalf("data-train: %v %+v", err, res)
	}
	st := states()
	if st[results.StageTrainData] != pipeline.StateDone || st[results.StageTestData] != pipeline.StateReady || st["train-tf-h2"] != pipeline.StateReady || st[results.StageBaselines] != pipeline.StateWaiting {
		t.Errorf("states after data-train: %v", st)
	}
	if _, err := RunStage(ctx, cfg, opts, "eval-tf-h2"); !errors.As(err, &mi) || mi.Input != results.StageTestData {
		t.Errorf("eval with data-train only: %v", err)
	}
	for _, s := range []string{results.StageTestData, "train-tf-h2"} {
		if res, err := RunStage(ctx, cfg, opts, s); err != nil || !slices.Equal(res.Ran, []string{s}) {
			t.Fatalf("%s: %v %+v", s, err, res)
		}
	}
	if res, err := RunStage(ctx, cfg, opts, "train-tf-h2"); err != nil || len(res.Ran) != 0 || !slices.Equal(res.Skipped, []string{"train-tf-h2"}) {
		t.Errorf("second train-tf-h2: %v %+v", err, res)
	}
	if st := states(); st[results.StageBaselines] != pipeline.StateReady || st["eval-tf-h2"] != pipeline.StateReady || st[results.StageFigures] != pipeline.StateWaiting {
		t.Errorf("states: %v", st)
	}
	full, err := Run(ctx, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{results.StageTrainData, results.StageTestData, "train-tf-h2"} {
		if !slices.Contains(full.Skipped, s) {
			t.Errorf("full run after the stages did not skip %s (ran %v)", s, full.Ran)
		}
	}
	os.Remove(filepath.Join(out, report.ReportFile))
	res, err = RunStage(ctx, cfg, opts, results.StageReport)
	if err != nil || res.Report == "" {
		t.Fatalf("report stage: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, report.ReportFile)); err != nil {
		t.Errorf("report stage did not publish: %v", err)
	}
	for name, s := range states() {
		if s != pipeline.StateDone {
			t.Errorf("after the full run %s is %s", name, s)
		}
	}
}

// TestBaselinesIntervenedTF: a tf model with an intervention among the
// extra methods is built on the engine's backend and evaluated with the
// baselines.
func TestBaselinesIntervenedTF(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, err := transformer.NewOn(testEngine.Backend(), transformer.DefaultConfig(2, 2, 8, cfg.N, cfg.A), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	cfg.ExtraMethods = "tf:path=" + dir + ":name=tf,tf:path=" + dir + ":ablate=L1H1+L2H2:name=ablated"
	opts := Options{Engine: testEngine, Out: filepath.Join(dir, "out"), Version: "test", CodeKey: "test", Events: testLog(t)}
	for _, s := range []string{results.StageTrainData, results.StageTestData, results.StageBaselines} {
		if _, err := RunStage(context.Background(), cfg, opts, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	g, err := Graph(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(g, func(s pipeline.StageInfo) bool { return s.Name == results.StageBaselines })
	b, err := os.ReadFile(filepath.Join(g[i].Dir, results.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Methods []struct {
			Name   string
			Window struct{ Mean float64 }
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	loss := map[string]float64{}
	for _, m := range res.Methods {
		loss[m.Name] = m.Window.Mean
	}
	a, ok1 := loss["tf"]
	ab, ok2 := loss["ablated"]
	if !ok1 || !ok2 || a == ab {
		t.Fatalf("baselines: %v", loss)
	}
}

// TestBaselinesTorch: a torch method among the extra methods runs on
// Options.Torch (here a vomc transformer, which the torch engine runs
// too), its window loss that of the same model as a tf method on the Go
// engine to float32 precision; without a torch engine it is refused.
func TestBaselinesTorch(t *testing.T) {
	t.Parallel()
	cfg, err := study.Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, err := transformer.NewOn(testEngine.Backend(), transformer.DefaultConfig(2, 2, 8, cfg.N, cfg.A), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveSafetensors(filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	cfg.ExtraMethods = "tf:path=" + dir + ":name=tf,torch:path=" + dir + ":name=torch"
	opts := Options{Engine: testEngine, Out: filepath.Join(dir, "out"), Version: "test", CodeKey: "test", Events: testLog(t)}
	for _, s := range []string{results.StageTrainData, results.StageTestData} {
		if _, err := RunStage(context.Background(), cfg, opts, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if _, err := RunStage(context.Background(), cfg, opts, results.StageBaselines); err == nil || !strings.Contains(err.Error(), "no torch engine was given") {
		t.Fatalf("without Options.Torch: %v", err)
	}
	if testing.Short() {
		t.Skip("-short: the rest starts the torch engine")
	}
	opts.Torch = &trainrun.Torch{Device: "cpu"}
	if _, err := opts.Torch.Check(); err != nil {
		t.Skipf("torch engine unavailable: %v", err)
	}
	if _, err := RunStage(context.Background(), cfg, opts, results.StageBaselines); err != nil {
		t.Fatal(err)
	}
	g, err := Graph(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(g, func(s pipeline.StageInfo) bool { return s.Name == results.StageBaselines })
	b, err := os.ReadFile(filepath.Join(g[i].Dir, results.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Methods []struct {
			Name   string
			Window struct{ Mean float64 }
		}
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	loss := map[string]float64{}
	for _, m := range res.Methods {
		loss[m.Name] = m.Window.Mean
	}
	a, ok1 := loss["tf"]
	tr, ok2 := loss["torch"]
	if !ok1 || !ok2 || math.Abs(a-tr) > 1e-5 {
		t.Fatalf("baselines: %v", loss)
	}
	t.Logf("window loss: tf %.9f, torch %.9f nats", a, tr)
}
