package reproduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vomc/vomc/fsutil"
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
// results at the top of opts.Out: report.html, figures/*.png, results.json,
// config.json (the effective configuration).
func Run(ctx context.Context, cfg Config, opts Options) (*Outcome, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("reproduce: no output directory")
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "stages"), 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(opts.Out, "config.json"), true, []byte(cfg.JSON()+"\n")); err != nil {
		return nil, err
	}
	r := &Runner{Root: filepath.Join(opts.Out, "stages"), Version: opts.Version, Log: opts.Log}
	err := r.Run(ctx, Plan(cfg, opts))
	out := &Outcome{Ran: r.Ran, Skipped: r.Skipped, Elapsed: time.Since(start)}
	if err != nil {
		return out, err
	}
	// Publish.
	copyOut := func(src, dst string) error {
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		return fsutil.WriteBytes(dst, true, b)
	}
	out.Report = filepath.Join(opts.Out, ReportFile)
	if err := copyOut(filepath.Join(r.Done[StageReport].Dir, ReportFile), out.Report); err != nil {
		return out, err
	}
	figs := r.Done[StageFigures]
	if err := copyOut(filepath.Join(figs.Dir, MergedFile), filepath.Join(opts.Out, "results.json")); err != nil {
		return out, err
	}
	if err := os.MkdirAll(filepath.Join(opts.Out, "figures"), 0o755); err != nil {
		return out, err
	}
	for _, name := range []string{StageFigures, StageFig5, StageSynth} {
		d, ok := r.Done[name]
		if !ok {
			continue
		}
		for _, o := range d.Outputs {
			if strings.HasSuffix(o, ".png") {
				dst := filepath.Join(opts.Out, "figures", filepath.Base(o))
				if err := copyOut(filepath.Join(d.Dir, o), dst); err != nil {
					return out, err
				}
				out.Figures = append(out.Figures, dst)
			}
		}
	}
	out.Elapsed = time.Since(start)
	return out, nil
}
