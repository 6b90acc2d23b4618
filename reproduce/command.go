package reproduce

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/reproduce/study"
)

// ParseStageList splits a comma-separated list of stage names (or "all");
// an empty name is an error.
func ParseStageList(s string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n == "" {
			return nil, fmt.Errorf("%q: empty stage name", s)
		}
		names = append(names, n)
	}
	return names, nil
}

// Command is one invocation of the study: list its stages (List), write
// a Slurm submission (Slurm.Dir set), run one stage (Stage), or run the
// whole study (after printing the configuration and the cost estimate;
// Dry stops there). Options.Engine is the engine Config.Engine names.
type Command struct {
	Config  study.Config
	Options Options
	List    bool
	Slurm   SlurmOptions
	Stage   string
	Dry     bool
	// Stdout receives the command's output (nil: discarded); warnings go
	// to Options.Events.
	Stdout io.Writer
}

// Execute runs the command.
func (c Command) Execute(ctx context.Context) error {
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	switch {
	case c.List:
		return WriteStages(c.Stdout, c.Config, c.Options)
	case c.Slurm.Dir != "":
		return c.writeSlurm()
	case c.Stage != "":
		return c.runStage(ctx)
	}
	return c.runAll(ctx)
}

// WriteStages writes the stage graph to w, with each stage's job kind,
// state under opts.Out and dependencies.
func WriteStages(w io.Writer, cfg study.Config, opts Options) error {
	g, err := Graph(cfg, opts)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tstage\tjob\tstate\tdepends on\n")
	for i, s := range g {
		deps := strings.Join(s.Deps, ",")
		if deps == "" {
			deps = "-"
		} else if len(s.Deps) == i && i > 2 {
			deps = fmt.Sprintf("(all %d stages above)", i)
		}
		state := s.State
		if s.Note != "" {
			state += " (" + s.Note + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, s.Name, s.Kind, state, deps)
	}
	return tw.Flush()
}

// writeSlurm writes the Slurm submission (the tasks run this binary
// unless c.Slurm.Vomc names one) and says how to submit it.
func (c Command) writeSlurm() error {
	so := c.Slurm
	if so.Vomc == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("cannot find this binary (%v): name the vomc binary the tasks run", err)
		}
		so.Vomc = exe
		if strings.Contains(exe, "go-build") {
			events.Or(c.Options.Events).Warn(fmt.Sprintf("warning: %s is a temporary binary of go run; build vomc (go build -o PATH ./cmd/vomc) and pass --slurm-vomc PATH", exe))
		}
	}
	sub, err := WriteSlurm(c.Config, c.Options, so)
	if err != nil {
		return err
	}
	for _, j := range sub.Jobs {
		fmt.Fprintf(c.Stdout, "%-8s %2d stage(s)  %s\n", j.Kind, len(j.Stages), j.Script)
	}
	fmt.Fprintf(c.Stdout, "configuration: %s\nsubmit with:   %s [extra sbatch arguments]\n", sub.Config, sub.Submit)
	return nil
}

// runStage runs c.Stage (RunStage) and reports it.
func (c Command) runStage(ctx context.Context) error {
	res, err := RunStage(ctx, c.Config, c.Options, c.Stage)
	if err != nil {
		return err
	}
	what := "ran"
	if len(res.Ran) == 0 {
		what = "done already:"
	}
	fmt.Fprintf(c.Stdout, "%s stage %s in %s\n", what, c.Stage, res.Elapsed.Round(time.Millisecond))
	if res.Report != "" {
		fmt.Fprintf(c.Stdout, "report: %s\n", res.Report)
	}
	return nil
}

// runAll prints the configuration and the estimated cost and, unless Dry,
// checks the torch engine and runs the study (Run).
func (c Command) runAll(ctx context.Context) error {
	cfg, w := c.Config, c.Stdout
	fmt.Fprintf(w, "effective configuration:\n%s\n", cfg.JSON())
	fmt.Fprintf(w, "%s; estimated training time on a 2-core AVX-512 machine: %.2f h\n", cfg.CostSummary(), cfg.EstimateHours())
	tor := c.Options.Engine.Torch()
	if tor != nil {
		fmt.Fprintf(w, "engine torch (device %s): the estimate above is the Go engine's; see docs/transformers.md, Training on a GPU\n", tor.Device)
	}
	if c.Dry {
		return nil
	}
	if err := c.Options.Engine.Check(); err != nil { // before any stage runs
		return err
	}
	if c.Options.Jobs > 1 && c.Options.Vomc == "" {
		exe, err := self()
		if err != nil {
			return fmt.Errorf("cannot find this binary (%v) to compute stages at once: use --jobs 1", err)
		}
		c.Options.Vomc = exe
	}
	res, err := Run(ctx, cfg, c.Options)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w\ninterrupted: run the same command again to resume", err)
		}
		return err
	}
	fmt.Fprintf(w, "ran %d stages, %d cached, in %s\nreport: %s\nfigures: %s\n", len(res.Ran), len(res.Skipped),
		res.Elapsed.Round(1e9), res.Report, strings.Join(res.Figures, " "))
	return nil
}
