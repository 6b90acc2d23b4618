package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
)

// ReportFile is the report's file name.
const ReportFile = "report.html"

// figureSection is one figure's section of the report.
type figureSection struct {
	ID, Title string
	Images    []template.URL
	Finding
	Missing string  // non-empty: why the figure is not in this run
	Tables  []table // tables shown after the finding
}

// table is a captioned table of text cells in a figure section.
type table struct {
	Caption string
	Head    []string
	Rows    [][]string
}

// summaryRow is one row of the summary table.
type summaryRow struct {
	Method, Window, Second, ExcessWindow, ExcessSecond, Time, Params, Note string
	// SeedSecond and SeedExcessSecond are the second-half loss and excess
	// over CTW, mean ± 95% Student-t half-width across training seeds.
	SeedSecond, SeedExcessSecond string
	// CTWSecond is the second-half excess over CTW (paired), beside the
	// excess over the reference when that is the Bayes predictor.
	CTWSecond string
	Ref       bool
}

// stageRow is one row of the stage table (the cost section).
type stageRow struct {
	Name, Hash, Seconds, Status string
}

// reportData is what reportTmpl is filled with.
type reportData struct {
	Title, Generated, Preset, ConfigJSON, Cost string
	Versions                                   [][2]string
	Summary                                    []summaryRow
	SummaryNote                                string
	Seeds                                      int // S; the seed columns show when > 1
	// Ref names the reference of the excess columns ("Bayes" or "CTW");
	// CTWCol shows a second-half excess over CTW beside it when the
	// reference is Bayes.
	Ref     string
	CTWCol  bool
	Figures []figureSection
	Stages  []stageRow
}

// Build names the build that writes the report: the vomc version and the
// code key given to the run (Options.CodeKey; empty: the binary's own).
type Build struct {
	Version string
	CodeKey string
}

// codeKeyOf is b.CodeKey or, when unset, pipeline.CodeKey(); a given
// key that is not the binary's own says so and names the binary's.
func codeKeyOf(b Build) string {
	k, err := pipeline.CodeKey()
	if err != nil {
		k = "unknown (" + err.Error() + ")"
	}
	if b.CodeKey != "" && b.CodeKey != k {
		return b.CodeKey + " (given, to reuse the stages of that build; this binary's own key is " + k + ")"
	}
	return k
}

// VCSInfo returns the git commit of the build (or, without a VCS stamp, of
// the source tree this package was compiled from or the working
// directory, as it is now) and whether the tree had local modifications;
// "" when unknown.
func VCSInfo() (commit string, modified bool) {
	commit, modified = pipeline.BuildVCS()
	if commit == "" {
		// The source tree this package was compiled from, then the
		// working directory.
		dirs := []string{"."}
		if _, file, _, ok := runtime.Caller(0); ok {
			dirs = append([]string{filepath.Dir(file)}, dirs...)
		}
		for _, dir := range dirs {
			if out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output(); err == nil {
				commit = strings.TrimSpace(string(out))
				if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
					modified = len(bytes.TrimSpace(st)) > 0
				}
				break
			}
		}
	}
	return commit, modified
}

// iv formats an interval as "mean ± half-width" (the mean alone without
// an interval).
func iv(v eval.Interval) string {
	if math.IsNaN(v.Lo) {
		return fmt.Sprintf("%.4f", v.Mean)
	}
	return fmt.Sprintf("%.4f ± %.4f", v.Mean, v.HalfWidth())
}

// pngURL is the PNG file at path as a data URL (the report embeds its
// figures).
func pngURL(path string) (template.URL, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b)), nil
}

// engineText names the engine that trained the transformers.
func engineText(cfg study.Config) string {
	if cfg.Engine != trainrun.EngineTorch {
		return "go (vomc's CPU engine)"
	}
	return "torch (vomc's PyTorch engine; the {\"engine\": …} lines of each training stage's train.jsonl record the device, torch version and speed features it ran with)"
}

// synthInfo reads the synthetic models' records by label.
func synthInfo(deps map[string]*pipeline.Done) map[string]results.SynthRecord {
	out := map[string]results.SynthRecord{}
	if d, ok := deps[results.StageSynth]; ok {
		var rs []results.SynthRecord
		if results.ReadJSON(d.Dir, "synth.json", &rs) == nil {
			for _, r := range rs {
				out[r.Label] = r
			}
		}
	}
	return out
}

// Write is the report stage's work: report.html and report.txt, from the
// merged results, the figures and the stages' records.
func Write(cfg study.Config, b Build, sc *pipeline.StageContext) ([]string, error) {
	mg, err := results.Merge(cfg, sc.Deps)
	if err != nil {
		return nil, err
	}
	d := reportData{
		Title:      fmt.Sprintf("vomc reproduce — preset %s", cfg.Preset),
		Generated:  time.Now().UTC().Format(time.RFC3339),
		Preset:     cfg.Preset,
		ConfigJSON: cfg.JSON(),
		Versions:   versions(cfg, b),
	}
	// Summary table: one row per method, a model's replicates r ≥ 1
	// folded into its row's across-seed columns.
	res := mg.Res
	d.Seeds = max(cfg.NumSeeds(), cfg.NumSynthSeeds())
	d.Ref = results.RefShort(res)
	d.CTWCol = d.Ref == "Bayes" && results.First(res, "CTW") != nil
	d.Summary = summaryRows(cfg, mg, sc.Deps, d.CTWCol)
	d.SummaryNote = summaryNote(cfg, res)
	var drawn []string // figures drawn into the stage's own directory
	if d.Figures, drawn, err = figureSections(cfg, mg, sc.Deps, sc.Dir); err != nil {
		return nil, err
	}
	d.Stages, d.Cost = stagesAndCost(cfg, b, sc.Deps)
	var buf, text bytes.Buffer
	if err := reportTmpl.Execute(&buf, d); err != nil {
		return nil, err
	}
	if err := reportTextTmpl.Execute(&text, d); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(sc.Dir, ReportTextFile), true, text.Bytes()); err != nil {
		return nil, err
	}
	return append([]string{ReportFile, ReportTextFile}, drawn...), fsutil.WriteBytes(filepath.Join(sc.Dir, ReportFile), true, buf.Bytes())
}

// versions are the report's "versions" rows: vomc, Go, the git commit,
// the code key, the machine and the training engine.
func versions(cfg study.Config, b Build) [][2]string {
	commit, modified := pipeline.BuildVCS()
	switch {
	case commit == "":
		// No VCS stamp in the binary (-buildvcs=false, go run, tests):
		// the checkout's HEAD may have moved on since the build, so it is
		// named as such, beside the code key that identifies the binary.
		commit = "unknown: the binary carries no VCS information"
		if c, m := VCSInfo(); c != "" {
			commit += "; the source checkout was at " + c
			if m {
				commit += " with uncommitted changes"
			}
			commit += " when the report was written"
		}
	case modified:
		commit += " (with uncommitted changes)"
	}
	host, _ := os.Hostname()
	return [][2]string{{"vomc", b.Version}, {"Go", runtime.Version()}, {"git commit", commit}, {"code key (part of every stage hash)", codeKeyOf(b)},
		{"machine", fmt.Sprintf("%s/%s, %d CPUs, GOMAXPROCS %d, host %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), host)},
		{"training engine", engineText(cfg)}}
}

// summaryRows are the summary table's rows: one per method of the merged
// results (a model's replicates r ≥ 1 folded into its row's across-seed
// columns), with a second-half excess over CTW when ctwCol, then the
// construction's.
func summaryRows(cfg study.Config, mg *results.Merged, deps map[string]*pipeline.Done, ctwCol bool) []summaryRow {
	res := mg.Res
	seeds := map[string]results.SeedStats{}
	for _, st := range results.SeedStatsOf(cfg, res) {
		seeds[st.Model] = st
	}
	ctwRes := results.First(res, "CTW")
	var rows []summaryRow
	for i, m := range res.Methods {
		if results.IsReplicate(cfg, m.Name) {
			continue
		}
		ctwCell := "—"
		if ctwCol {
			if p, ok := eval.PairedSecondHalf(&res.Methods[i], ctwRes, res.Confidence); ok && &res.Methods[i] != ctwRes {
				ctwCell = iv(p)
			} else if &res.Methods[i] == ctwRes {
				ctwCell = "(CTW)"
			}
		}
		r := summaryRow{CTWSecond: ctwCell, Method: m.Name, Window: iv(m.Window), Second: iv(m.SecondHalf),
			ExcessWindow: iv(m.ExcessWindow), ExcessSecond: iv(m.ExcessSecondHalf), Ref: i == res.Reference, Time: "—", Params: "—"}
		if r.Ref {
			r.ExcessWindow, r.ExcessSecond = "(reference)", "(reference)"
		}
		if ti, ok := mg.Train[m.Name]; ok {
			r.Time = fmt.Sprintf("%.1f s", ti.Seconds)
			r.Params = fmt.Sprint(ti.Params)
			r.Note = fmt.Sprintf("%d steps, %.3gM tokens", ti.Steps, ti.Tokens/1e6)
		}
		if ti, ok := synthInfo(deps)[m.Name]; ok {
			r.Time, r.Params, r.Note = fmt.Sprintf("%.1f s", ti.Seconds), fmt.Sprint(ti.Params), ti.Note
		}
		if note := res.Labels[m.Name]; note != "" {
			r.Note = note
		}
		r.SeedSecond, r.SeedExcessSecond = "—", "—"
		if st, ok := seeds[m.Name]; ok {
			r.SeedSecond = fmt.Sprintf("%s (%d seeds)", iv(results.AcrossSeeds(st.SecondHalf)), len(st.Replicates))
			r.SeedExcessSecond = iv(results.AcrossSeeds(st.ExcessSecondHalf))
		}
		rows = append(rows, r)
	}
	if c := mg.Construct; c != nil && len(c.Methods) > 1 {
		m := c.Methods[1]
		rows = append(rows, summaryRow{Method: m.Name, Window: iv(m.Window), Second: iv(m.SecondHalf),
			ExcessWindow: iv(m.ExcessWindow), ExcessSecond: iv(m.ExcessSecondHalf), Time: "—",
			Params: "— (constructed)", Note: fmt.Sprintf("on the first %d test windows (CTW there: %s)", c.Windows, iv(c.Methods[0].SecondHalf))})
	}
	return rows
}

// summaryNote is the text under the summary table: what the numbers are,
// whether the windows are independent, and how replicates are folded in.
func summaryNote(cfg study.Config, res *eval.Result) string {
	indep := "one fresh sequence per tree, so the windows are independent, as the intervals assume"
	if cfg.TestTrees > 0 && res.Windows > cfg.TestTrees {
		indep = fmt.Sprintf("WARNING: from only %d trees, so windows share trees and the intervals, which assume independent windows, are too narrow", cfg.TestTrees)
	}
	note := fmt.Sprintf("Mean loss in nats per symbol over %d test windows of N=%d (%s), "+
		"with %.0f%% confidence half-widths across windows (%s); the excess over "+results.RefLong(res)+" is paired window by window. "+
		"The second half is positions %d..%d. Training time is wall time on this machine.",
		res.Windows, res.N, indep, 100*res.Confidence, res.CIMethod, res.SecondHalfStart, res.N)
	var who, figs []string
	if cfg.NumSeeds() > 1 {
		who = append(who, fmt.Sprintf("every transformer %d times", cfg.NumSeeds()))
		figs = append(figs, "3")
	}
	if len(cfg.SynthVariants) > 0 && cfg.NumSynthSeeds() > 1 {
		who = append(who, fmt.Sprintf("every TF 2-0 model %d times", cfg.NumSynthSeeds()))
		figs = append(figs, "8")
	}
	if len(who) > 0 {
		draws := "Fig. " + figs[0] + " draws"
		if len(figs) > 1 {
			draws = "Figs. " + strings.Join(figs, " and ") + " draw"
		}
		note += fmt.Sprintf(" Trained %s (seeds derived from seed %d and the replicate index; same data). "+
			"The intervals across windows are those of replicate 0; the columns “across seeds” give the mean of the replicates' second-half means "+
			"± the %.0f%% Student-t half-width over those means (df = replicates − 1; the count is in each row). Each replicate's curves are in results.json (as “LABEL [seed r]”), "+
			"the per-replicate numbers in %s, and %s every replicate (thin lines).",
			strings.Join(who, " and "), cfg.Seed, 100*results.SeedConfidence, results.SeedsFile, draws)
	}
	return note
}

// sections collects the report's figure sections.
type sections []figureSection

// add appends a section with the figure files (embedded) and the finding
// (settled if it has a claim but no verdict yet).
func (ss *sections) add(id, title string, files []string, f Finding, missing string) error {
	if f.Verdict == "" && f.Claim != "" {
		f.settle()
	}
	s := figureSection{ID: id, Title: title, Finding: f, Missing: missing}
	for _, p := range files {
		u, err := pngURL(p)
		if err != nil {
			return err
		}
		s.Images = append(s.Images, u)
	}
	*ss = append(*ss, s)
	return nil
}

// figureSections are the report's sections, one per figure: the ladder,
// Figs. 3, 4, 5 and 8, the dynamics, Fig. 10 and the construction, each
// with its figures (from the figures stage's directory) and its finding.
// drawn names the figures it drew into dir (the report stage's own), for
// sections whose figures need records the figures stage does not read.
func figureSections(cfg study.Config, mg *results.Merged, deps map[string]*pipeline.Done, dir string) (ss sections, drawn []string, err error) {
	figDir := deps[results.StageFigures].Dir
	res := mg.Res
	if cfg.Ladder {
		f, files, tables, lerr := ladderSection(cfg, mg, deps, figDir, dir)
		if lerr != nil {
			return nil, nil, lerr
		}
		for _, p := range files {
			if filepath.Dir(p) == dir {
				drawn = append(drawn, filepath.Base(p))
			}
		}
		if err := ss.add("ladder", "The budget ladder: is Fig. 3's failure at depth 5 the training budget?", files, f, ""); err != nil {
			return nil, nil, err
		}
		ss[len(ss)-1].Tables = tables
		if f, title, ok := findRung(cfg, mg); ok {
			if err := ss.add("ladder-rung", title, nil, f, ""); err != nil {
				return nil, nil, err
			}
		}
	}
	fig3Files := []string{filepath.Join(figDir, figures.Fig3File)}
	if _, err := os.Stat(filepath.Join(figDir, figures.Fig3ZoomFile)); err == nil {
		fig3Files = append(fig3Files, filepath.Join(figDir, figures.Fig3ZoomFile))
	}
	if err := ss.add("fig3", "Fig. 3 — transformers vs KN vs "+results.RefShort(res)+" (and CTW)", fig3Files, acrossReplicates(cfg, mg, findFig3), ""); err != nil {
		return nil, nil, err
	}
	if len(cfg.Fig4Models) > 0 {
		files := []string{filepath.Join(figDir, figures.Fig4File)}
		if _, err := os.Stat(filepath.Join(figDir, figures.Fig4CurvesFile)); err == nil {
			files = append(files, filepath.Join(figDir, figures.Fig4CurvesFile))
		}
		if err := ss.add("fig4", "Fig. 4 — attention-only and single-head vs full transformers", files, acrossReplicates(cfg, mg, findFig4), ""); err != nil {
			return nil, nil, err
		}
	}
	f5, f5files, f5missing := fig5Section(cfg, mg, deps)
	if err := ss.add("fig5", "Fig. 5 — attention heatmaps and suffix matching", f5files, f5, f5missing); err != nil {
		return nil, nil, err
	}
	f8, f8files, f8missing := fig8Section(cfg, mg, deps)
	if err := ss.add("fig8", "Fig. 8 — normal vs synthetic two-layer transformers (TF 2-0)", f8files, f8, f8missing); err != nil {
		return nil, nil, err
	}
	knName := ""
	if kn := results.First(res, "KN"); kn != nil {
		knName = kn.Name
	}
	if dfiles, f, tables, ok, err := dynamicsSection(cfg, deps, figDir, knName); err != nil {
		return nil, nil, err
	} else if ok {
		if err := ss.add("dynamics", "Training dynamics", dfiles, f, ""); err != nil {
			return nil, nil, err
		}
		ss[len(ss)-1].Tables = tables
	}
	if err := ss.add("fig10", "Fig. 10 — PPM (method A: as is, normalised, with exclusion) vs transformers", []string{filepath.Join(figDir, figures.Fig10File)}, findFig10(cfg, mg), ""); err != nil {
		return nil, nil, err
	}
	if mg.Construct != nil {
		if err := ss.add("construct", "The (D+2)-layer constructed transformer vs CTW", []string{filepath.Join(figDir, figures.ConstructFile)}, findConstruct(cfg, mg), ""); err != nil {
			return nil, nil, err
		}
	}
	return ss, drawn, nil
}

// stagesAndCost are the stage table's rows and the text on the run's cost
// under it.
func stagesAndCost(cfg study.Config, b Build, deps map[string]*pipeline.Done) ([]stageRow, string) {
	hashKey := b.CodeKey // the code key of the stage hashes
	if hashKey == "" {
		hashKey, _ = pipeline.CodeKey()
	}
	rows, total, resumed := stageRows(deps, hashKey)
	recorded := "as recorded when each ran"
	if resumed > 0 {
		recorded += fmt.Sprintf(", the %d resumed training stage%s with the training time of their earlier invocations", resumed, plural(resumed))
	}
	cost := fmt.Sprintf("Stages took %.0f s (%.2f h) in all, %s. The run trains %s; "+
		"the estimate for training them all on a 2-core AVX-512 machine (≈ 165k tokens/s for a 2-layer E=64 N=512 model, scaled by model cost) is %.2f h.",
		total, total/3600, recorded, cfg.CostSummary(), cfg.EstimateHours())
	return rows, cost
}

// stageRows are the rows of the stage table, in the order the stages
// finished, their total seconds (each stage's stageTime) and the number of
// stages that were resumed (stageTime's note). hashKey is the code key of
// the stage hashes.
func stageRows(deps map[string]*pipeline.Done, hashKey string) (rows []stageRow, total float64, resumed int) {
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return deps[names[i]].Finished.Before(deps[names[j]].Finished) })
	for _, n := range names {
		dd := deps[n]
		st := "ran in this invocation"
		if dd.Skipped {
			st = "cached from an earlier invocation"
		}
		if dd.ComputedBy != "" && dd.ComputedBy != hashKey {
			st += "; computed by the build with code key " + dd.ComputedBy + ", not by the one whose key its hash carries"
		}
		secs, note := stageTime(n, dd)
		if note != "" {
			st += "; " + note
			resumed++
		}
		total += secs
		rows = append(rows, stageRow{Name: n, Hash: dd.Hash, Seconds: fmt.Sprintf("%.1f", secs), Status: st})
	}
	return rows, total, resumed
}

// stageTime is the wall time of the stage named name, completed as dd: the
// seconds dd records, which are those of the invocation that completed
// it, plus, for a training stage resumed from its checkpoint (a
// transformer's, TrainInfo, or a TF 2-0 model's, SynthRecord), the
// training time of the earlier invocations up to that checkpoint
// (EarlierSeconds). A resumed stage recorded before EarlierSeconds existed
// is given its training time over all invocations, which the invocation
// that completed it falls short of. note, for a resumed stage, says how
// its time is made up; it is empty otherwise.
func stageTime(name string, dd *pipeline.Done) (secs float64, note string) {
	var training, earlier float64
	switch {
	case strings.HasPrefix(name, "train-tf-"):
		var ti results.TrainInfo
		if results.ReadJSON(dd.Dir, results.InfoFile, &ti) != nil {
			return dd.Seconds, ""
		}
		training, earlier = ti.Seconds, ti.EarlierSeconds
	case strings.HasPrefix(name, "synth-"):
		var r results.SynthRecord
		if results.ReadJSON(dd.Dir, "synth.json", &r) != nil {
			return dd.Seconds, ""
		}
		training, earlier = r.Seconds, r.EarlierSeconds
	default:
		return dd.Seconds, ""
	}
	switch {
	case earlier > 0:
		return dd.Seconds + earlier, fmt.Sprintf("resumed: %.1f s of training in earlier invocations + %.1f s in the one that completed it", earlier, dd.Seconds)
	case training > dd.Seconds:
		// Without a resumption the stage's time includes its training.
		return training, fmt.Sprintf("resumed: its training time over all invocations (the one that completed it took %.1f s; the earlier ones' time outside training is not recorded)", dd.Seconds)
	}
	return dd.Seconds, ""
}

var reportTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<title>{{.Title}}</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; max-width: 1250px; margin: 1.5em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.6em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: right; }
th { background: #f0f0f0; }
td.l, th.l { text-align: left; }
tr.ref td { font-weight: bold; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.6em; font-size: 0.8em; overflow-x: auto; }
img { max-width: 100%; border: 1px solid #eee; }
.claim { background: #f3f6fb; border-left: 4px solid #5b7db1; padding: 0.4em 0.8em; }
.found { background: #f4faf3; border-left: 4px solid #4f9a45; padding: 0.4em 0.8em; }
.differs { background: #fff6ec; border-left: 4px solid #d08a2a; padding: 0.4em 0.8em; }
.missing { background: #fbeeee; border-left: 4px solid #b44; padding: 0.4em 0.8em; }
.note { background: #f5f5f5; border-left: 4px solid #999; padding: 0.4em 0.8em; }
.small { font-size: 0.85em; color: #555; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="small">Reproduction of “An Information-Theoretic Approach to Understanding Transformers’ In-Context Learning of Variable-Order Markov Chains”, generated {{.Generated}} by <code>vomc reproduce</code> from data drawn in this run.</p>
<h2 id="summary">Summary</h2>
<table>
<tr><th class="l">method</th><th>window loss</th><th>second half</th><th>excess over {{.Ref}} (window)</th><th>excess over {{.Ref}} (second half)</th>{{if .CTWCol}}<th>excess over CTW (second half)</th>{{end}}{{if gt .Seeds 1}}<th>second half, across seeds</th><th>excess (second half), across seeds</th>{{end}}<th>training time</th><th>parameters</th><th class="l">note</th></tr>
{{$seeds := .Seeds}}{{$ctw := .CTWCol}}{{range .Summary}}<tr{{if .Ref}} class="ref"{{end}}><td class="l">{{.Method}}</td><td>{{.Window}}</td><td>{{.Second}}</td><td>{{.ExcessWindow}}</td><td>{{.ExcessSecond}}</td>{{if $ctw}}<td>{{.CTWSecond}}</td>{{end}}{{if gt $seeds 1}}<td>{{.SeedSecond}}</td><td>{{.SeedExcessSecond}}</td>{{end}}<td>{{.Time}}</td><td>{{.Params}}</td><td class="l">{{.Note}}</td></tr>
{{end}}</table>
<p class="small">{{.SummaryNote}}</p>
{{range .Figures}}<h2 id="{{.ID}}">{{.Title}}</h2>
{{if .Missing}}<p class="missing">{{.Missing}}</p>
{{end}}{{range .Images}}<p><img src="{{.}}" alt="figure" /></p>
{{end}}{{if .Claim}}<p class="claim"><b>Paper:</b> {{.Claim}}</p>
{{end}}{{if .Found}}<p class="{{if not .Claim}}note{{else if .Agrees}}found{{else}}differs{{end}}"><b>This run:</b> {{.Found}}</p>
{{end}}{{if .Summary}}<p><b>Verdict:</b> {{.Summary}}.</p>
{{end}}{{if .Checks}}<table>
<tr><th class="l">part of the claim</th><th class="l">verdict</th><th class="l">numbers (second-half excess over {{$.Ref}}, nats/symbol, 95% CI; p-values Holm-adjusted across the figure's tests)</th></tr>
{{range .Checks}}<tr><td class="l">{{.Claim}}</td><td class="l"><b>{{.Verdict}}</b></td><td class="l">{{.Numbers}}</td></tr>
{{end}}</table>
{{end}}{{range .Tables}}<p class="small">{{.Caption}}</p>
{{if .Rows}}<table>
<tr>{{range .Head}}<th class="l">{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td class="l">{{.}}</td>{{end}}</tr>
{{end}}</table>
{{end}}{{end}}{{end}}<h2 id="cost">Cost</h2>
<p>{{.Cost}}</p>
<table>
<tr><th class="l">stage</th><th class="l">hash</th><th>seconds</th><th class="l">status</th></tr>
{{range .Stages}}<tr><td class="l">{{.Name}}</td><td class="l"><code>{{.Hash}}</code></td><td>{{.Seconds}}</td><td class="l">{{.Status}}</td></tr>
{{end}}</table>
<h2 id="versions">Versions</h2>
<table>
{{range .Versions}}<tr><th class="l">{{index . 0}}</th><td class="l">{{index . 1}}</td></tr>
{{end}}</table>
<h2 id="config">Configuration (preset {{.Preset}}, after overrides)</h2>
<pre>{{.ConfigJSON}}</pre>
</body>
</html>
`))
