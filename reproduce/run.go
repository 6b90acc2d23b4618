package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/report"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// Outcome is what Run did.
type Outcome struct {
	// Report is the path of the HTML report; Figures the figure files
	// copied next to it.
	Report  string
	Figures []string
	// Ran and Skipped are the stages run and the cached stages skipped.
	Ran, Skipped []string
	Elapsed      time.Duration
}

// Run validates cfg, runs (or resumes) the study's stages under
// opts.Out/stages and publishes the report, the figures and the merged
// resultsOf at the top of opts.Out: report.html, figures/*.png, results.json,
// config.json (the effective configuration).
func Run(ctx context.Context, cfg study.Config, opts Options) (*Outcome, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("reproduce: no output directory")
	}
	if opts.Jobs < 0 {
		return nil, fmt.Errorf("reproduce: %d jobs: want ≥ 1 (0: one at a time)", opts.Jobs)
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "stages"), 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(opts.Out, "config.json"), true, []byte(cfg.FileJSON()+"\n")); err != nil {
		return nil, err
	}
	stages, err := Plan(cfg, opts)
	if err != nil {
		return nil, err
	}
	r, err := newRunner(opts, stages)
	if err != nil {
		return nil, err
	}
	if opts.Jobs > 1 {
		par := pipeline.Parallel{Jobs: opts.Jobs, Threads: opts.Threads}
		if par.Threads <= 0 {
			par.Threads = runtime.GOMAXPROCS(0)
		}
		if par.Exec, err = processExec(cfg, opts); err != nil {
			return nil, err
		}
		err = r.RunParallel(ctx, stages, par)
	} else {
		err = r.Run(ctx, stages)
	}
	out := &Outcome{Ran: r.Ran, Skipped: r.Skipped, Elapsed: time.Since(start)}
	if err != nil {
		return out, err
	}
	if out.Report, out.Figures, err = publish(opts.Out, r.Done); err != nil {
		return out, err
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// RunStage runs exactly one stage, named name, of the study under opts.Out
// (skipping it if it is done, waiting for it if another process has
// claimed it). Every stage it depends on, directly or not, must be done
// already; otherwise the error is a *pipeline.MissingInputError. Running
// the report stage also publishes the report, figures and results at the
// top of opts.Out, as Run does.
func RunStage(ctx context.Context, cfg study.Config, opts Options, name string) (*Outcome, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("reproduce: no output directory")
	}
	stages, err := Plan(cfg, opts)
	if err != nil {
		return nil, err
	}
	if _, err := pipeline.Find(stages, name); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "stages"), 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(opts.Out, "config.json"), true, []byte(cfg.FileJSON()+"\n")); err != nil {
		return nil, err
	}
	r, err := newRunner(opts, stages)
	if err != nil {
		return nil, err
	}
	err = r.RunOnly(ctx, stages, name)
	if mi := (*pipeline.MissingInputError)(nil); errors.As(err, &mi) {
		return nil, fmt.Errorf("%w: run that stage first (alone, with the same configuration and output directory), or run the whole study", err)
	}
	out := &Outcome{Ran: r.Ran, Elapsed: time.Since(start)}
	if err != nil {
		return out, err
	}
	if len(r.Ran) == 0 {
		out.Skipped = []string{name}
	}
	if name == results.StageReport {
		if out.Report, out.Figures, err = publish(opts.Out, r.Done); err != nil {
			return out, err
		}
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// Graph returns the study's stages in order with their job kinds and
// dependencies, and their states under opts.Out (every stage "ready" or
// "waiting" when opts.Out is empty or holds nothing).
func Graph(cfg study.Config, opts Options) ([]pipeline.StageInfo, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	stages, err := Plan(cfg, opts)
	if err != nil {
		return nil, err
	}
	opts.Rerun = nil
	r, err := newRunner(opts, stages)
	if err != nil {
		return nil, err
	}
	return r.Graph(stages, opts.Out != "")
}

// newRunner is the runner of opts' stages under opts.Out/stages, keyed on
// the vomc version and the code key; stages are the planned stages (to
// check the names in opts.Rerun).
func newRunner(opts Options, stages []pipeline.Stage) (*pipeline.Runner, error) {
	code := opts.CodeKey
	if code == "" {
		var err error
		if code, err = pipeline.CodeKey(); err != nil {
			return nil, err
		}
	}
	r := &pipeline.Runner{Root: filepath.Join(opts.Out, "stages"), Code: "version " + opts.Version + "\n" + code,
		Events: opts.Events, Lock: opts.Lock, Done: map[string]*pipeline.Done{}}
	if err := r.SetRerun(opts.Rerun, stages); err != nil {
		return nil, err
	}
	return r, nil
}

func publish(out string, done map[string]*pipeline.Done) (reportPath string, figurePaths []string, err error) {
	copyOut := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return fsutil.WriteBytes(dst, true, b)
	}
	reportPath = filepath.Join(out, report.ReportFile)
	if err := copyOut(filepath.Join(done[results.StageReport].Dir, report.ReportFile), reportPath); err != nil {
		return "", nil, err
	}
	if slices.Contains(done[results.StageReport].Outputs, report.ReportTextFile) {
		if err := copyOut(filepath.Join(done[results.StageReport].Dir, report.ReportTextFile), filepath.Join(out, report.ReportTextFile)); err != nil {
			return "", nil, err
		}
	} else if err := os.Remove(filepath.Join(out, report.ReportTextFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A report stage of an older build wrote no text: remove a text
		// report of an earlier run rather than leave it beside this one's
		// report.html ('--rerun report' writes it).
		return "", nil, err
	}
	figs := done[results.StageFigures]
	if err := copyOut(filepath.Join(figs.Dir, results.MergedFile), filepath.Join(out, "results.json")); err != nil {
		return "", nil, err
	}
	if slices.Contains(figs.Outputs, results.SeedsFile) {
		if err := copyOut(filepath.Join(figs.Dir, results.SeedsFile), filepath.Join(out, results.SeedsFile)); err != nil {
			return "", nil, err
		}
	}
	if d, ok := done[results.StageSynth]; ok && slices.Contains(d.Outputs, results.GapsFile) {
		if err := copyOut(filepath.Join(d.Dir, results.GapsFile), filepath.Join(out, results.GapsFile)); err != nil {
			return "", nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "figures"), 0o755); err != nil {
		return "", nil, err
	}
	for _, name := range []string{results.StageFigures, results.StageFig5, results.StageSynth} {
		d, ok := done[name]
		if !ok {
			continue
		}
		for _, o := range d.Outputs {
			if strings.HasSuffix(o, ".png") {
				dst := filepath.Join(out, "figures", filepath.Base(o))
				if err := copyOut(filepath.Join(d.Dir, o), dst); err != nil {
					return "", nil, err
				}
				figurePaths = append(figurePaths, dst)
			}
		}
	}
	return reportPath, figurePaths, nil
}
