package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/vomc/vomc/internal/cli"
	"github.com/vomc/vomc/reproduce"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/trainrun"
)

func runReproduce(args []string) error {
	fs := newFlags("reproduce")
	ev := newSink(os.Stderr) // progress lines and warnings on standard error
	defer ev.Close()
	c := reproduce.Command{Stdout: os.Stdout, Options: reproduce.Options{Version: version, Events: ev}}
	o, sl := &c.Options, &c.Slurm
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(study.Presets, ", "))
	fs.StringVar(&o.Out, "out", "", "output directory (default reproduce-PRESET)")
	file := fs.String("config", "", "JSON file of overrides (keys as printed)")
	var sets cli.Strings
	fs.Var(&sets, "set", "override one parameter, key=value (repeatable)")
	fs.BoolVar(&c.Dry, "dry-run", false, "without --list-stages, --slurm, --stage: print the effective configuration and the estimated cost, then stop")
	seeds := fs.Int("seeds", 0, "train every transformer S times (seeds derived from --set seed and the replicate index; 0: the preset's or config's value, 1 without replicates)")
	fs.IntVar(&o.Jobs, "jobs", 0, "without --dry-run, --stage, --list-stages, --slurm: stages computed at once, each in a process of its own with a share of the cores (0: half the cores, 2 to 4, or 1 with the torch engine; 1: one at a time)")
	fs.StringVar(&c.Stage, "stage", "", "run only this stage (its inputs must be done under --out)")
	fs.BoolVar(&c.List, "list-stages", false, "print the stage graph and the stages' states under --out, then stop")
	fs.StringVar(&sl.Dir, "slurm", "", "write a Slurm submission into this directory instead of running")
	fs.Var((*cli.Strings)(&sl.SbatchOpts), "slurm-opt", "with --slurm: #SBATCH option KEY=VALUE, KEY, or KIND:KEY=VALUE for one job kind (repeatable)")
	fs.StringVar(&sl.Vomc, "slurm-vomc", "", "with --slurm: vomc binary the Slurm tasks run (default: this binary's absolute path)")
	fs.BoolVar(&sl.Force, "force", false, "with --slurm: replace an existing submission")
	rerun := fs.String("rerun", "", "without --dry-run, --list-stages, --slurm: recompute these stages even if cached: STAGE[,STAGE...] or all (stages depending on them are recomputed where their outputs changed)")
	fs.DurationVar(&o.Lock.Stale, "lock-stale", 5*time.Minute, "without --dry-run: a stage lock without heartbeat for this long is taken over (with --slurm: by every task; with --list-stages: the listing says which locks are stale)")
	fs.StringVar(&o.CodeKey, "code-key", "", "without --dry-run, --slurm: compute stage hashes with this code key (another build's, from its report) to reuse its stages")
	tor := &trainrun.Torch{Stderr: os.Stderr}
	tor.AddFlags(fs)
	if err := parseArgs(fs, args, 0, ""); err != nil {
		return err
	}
	cfg, err := studyConfig(*preset, *file, sets, *seeds)
	if err != nil {
		return err
	}
	c.Config = cfg
	if o.Jobs == 0 {
		o.Jobs = reproduce.DefaultJobs(cfg, runtime.GOMAXPROCS(0))
	}
	if o.Out == "" {
		o.Out = "reproduce-" + cfg.Preset
	}
	if o.Engine, err = reproduceEngine(fs, cfg, tor); err != nil {
		return err
	}
	o.Torch = tor // extra torch: methods, whatever the engine
	defer o.Engine.Close()
	if err := reproduceRerun(&c, *rerun); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.Execute(ctx)
}

// studyConfig is the study's configuration: the preset, the JSON file
// and the --set overrides, layered (study.Layered), with --seeds if given.
func studyConfig(preset, file string, sets []string, seeds int) (study.Config, error) {
	cfg, err := study.Layered(preset, file, sets)
	switch {
	case err != nil:
		return cfg, asUsage(err)
	case seeds < 0:
		return cfg, usagef("--seeds %d: want ≥ 1", seeds)
	case seeds > 0:
		cfg.Seeds = seeds
		return cfg, cfg.Validate()
	}
	return cfg, nil
}

// reproduceRerun checks --code-key and sets the stages --rerun names.
func reproduceRerun(c *reproduce.Command, rerun string) error {
	if c.Options.CodeKey != "" && c.Slurm.Dir != "" {
		return usagef("--code-key reuses the stages of a local run: it does not go with --slurm")
	}
	if rerun == "" {
		return nil
	}
	if c.List || c.Slurm.Dir != "" {
		return usagef("--rerun runs stages: it does not go with --list-stages or --slurm")
	}
	var err error
	if c.Options.Rerun, err = reproduce.ParseStageList(rerun); err != nil {
		return usagef("--rerun %v", err)
	}
	return nil
}

// reproduceEngine is the engine the configuration names (its "engine"),
// with the torch flags' settings; they are refused for the Go engine.
func reproduceEngine(fs *flag.FlagSet, cfg study.Config, tor *trainrun.Torch) (*trainrun.Engine, error) {
	if cfg.Engine != trainrun.EngineTorch {
		if err := torchOnly(givenFlags(fs), "--%s is a torch engine setting: add --set engine=torch"); err != nil {
			return nil, err
		}
	}
	eng, err := trainrun.NewEngine(trainrun.Spec{Name: cfg.Engine, CPU: compute(), Torch: tor})
	return eng, asUsage(err)
}
