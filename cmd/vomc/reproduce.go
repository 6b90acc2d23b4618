package main

import (
	"context"
	"flag"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce"
	"github.com/vomc/vomc/transformer/trainrun"
)

// setFlags collects repeated --set key=value flags.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

// reproduceConfig is reproduce.Layered with its errors as usage errors.
func reproduceConfig(preset, file string, sets []string) (reproduce.Config, error) {
	cfg, err := reproduce.Layered(preset, file, sets)
	if err != nil {
		return cfg, usageError{err.Error()}
	}
	return cfg, nil
}

// reproduceHelp is the description of vomc reproduce -h.
const reproduceHelp = `
Runs the paper's whole study from data generated in this run and writes every
figure and one self-contained HTML report (DIR/report.html): Fig. 3
(transformers of 1..4 (6) layers vs CTW and KN with δ tuned on the training
data), Fig. 4 (attention-only and single-head networks), Fig. 5 (attention
heatmaps and suffix matching), Fig. 8 (synthetic TF 2-0 models, when built),
Fig. 10 (PPM method A), the (D+2)-layer construction beside CTW, and a summary
table (mean loss over the window and its second half, excess over CTW with 95%
CIs, training time, parameters).

Presets: tiny (seconds to a minute; for tests), small (A=3, D=3, N=256; under
an hour on 2 cores), medium (D=4, N=512; many hours), paper (the paper's
settings; a big machine). Every parameter can be changed with --set key=value
(repeatable; lists as 1,2,3, model lists as 4;4,4;4,4,4 or JSON) or a JSON
--config file (applied before --set). Models are written as heads per layer
with optional -ff (no feed-forward) and -ln (no LayerNorm) suffixes.

Stages are cached in DIR/stages/<name>-<hash>/ under a hash of their
configuration, their input stages' hashes, the vomc version and the code
(the binary's VCS revision, or its SHA-256 without VCS information or when
built from a modified tree): running the same command again skips every
stage, changing one parameter reruns only the stages it affects, and a
rebuilt vomc of other code recomputes everything. --rerun STAGE[,STAGE...]
(or all) recomputes those stages although cached; the stages depending on
them are recomputed where the rerun changed their output files. An interrupted run (Ctrl-C) resumes where it stopped;
transformer training continues from its checkpoint.

Running at scale (Slurm): --slurm DIR writes, instead of running, a
submission into DIR (config.json, stage lists, data/train/eval/figures/report
.sbatch scripts, submit.sh); "DIR/submit.sh" submits the jobs chained with
--dependency=afterok, the training stages as one requeueable job array. Each
task runs one stage: vomc reproduce --stage NAME --out OUT --config
DIR/config.json. --slurm-opt KEY=VALUE adds "#SBATCH --KEY=VALUE" to every job
(KIND:KEY=VALUE to one kind's job, e.g. train:gres=gpu:1). --list-stages
prints the stage graph and each stage's state under --out. Stages are claimed
with lock files (OUT/stages/NAME-HASH.lock, heartbeat; taken over when the
holder's process is gone, its Slurm job was requeued, or after --lock-stale
without heartbeat), so concurrent tasks never compute the same stage.

Reusing another build's stages: every stage hash covers the code key of the
binary (its VCS revision, or its SHA-256), so a rebuilt vomc computes
everything again. --code-key KEY computes the hashes with KEY instead — the
key another build printed in its report ("code key") — so that this binary
reuses that build's cached stages, e.g. to redraw the figures and the report
of a long run with newer drawing code (--rerun figures,report). You assert
that the code behind the reused stages has not changed in ways that matter;
the report names both keys.`

func runReproduce(args []string) error {
	fs := newFlags("reproduce", "--preset tiny|small|medium|paper [--out DIR] [--config FILE.json] [--set key=value ...]", reproduceHelp)
	preset := fs.String("preset", "tiny", "preset: "+strings.Join(reproduce.Presets, ", "))
	out := fs.String("out", "", "output directory (default reproduce-PRESET)")
	file := fs.String("config", "", "JSON file of overrides (keys as printed)")
	var sets setFlags
	fs.Var(&sets, "set", "override one parameter, key=value (repeatable)")
	dry := fs.Bool("dry-run", false, "print the effective configuration and the estimated cost, then stop")
	seeds := fs.Int("seeds", 0, "train every transformer S times (seeds derived from --set seed and the replicate index; 0: the preset's or config's value, 1 without replicates)")
	stage := fs.String("stage", "", "run only this stage (its inputs must be done under --out)")
	list := fs.Bool("list-stages", false, "print the stage graph and the stages' states under --out, then stop")
	slurmDir := fs.String("slurm", "", "write a Slurm submission into this directory instead of running")
	var slurmOpts setFlags
	fs.Var(&slurmOpts, "slurm-opt", "#SBATCH option KEY=VALUE, KEY, or KIND:KEY=VALUE for one job kind (repeatable)")
	slurmVomc := fs.String("slurm-vomc", "", "vomc binary the Slurm tasks run (default: this binary's absolute path)")
	force := fs.Bool("force", false, "with --slurm: replace an existing submission")
	rerun := fs.String("rerun", "", "recompute these stages even if cached: STAGE[,STAGE...] or all (stages depending on them are recomputed where their outputs changed)")
	stale := fs.Duration("lock-stale", 5*time.Minute, "a stage lock without heartbeat for this long is taken over")
	codeKey := fs.String("code-key", "", "compute stage hashes with this code key (another build's, from its report) to reuse its stages")
	tor := &trainrun.Torch{Stderr: os.Stderr}
	torchFlags(fs, tor)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("unexpected arguments %v", fs.Args())
	}
	cfg, err := reproduceConfig(*preset, *file, sets)
	if err != nil {
		return err
	}
	if *seeds < 0 {
		return usagef("--seeds %d: want ≥ 1", *seeds)
	}
	if *seeds > 0 {
		if cfg.Seeds = *seeds; cfg.Validate() != nil {
			return cfg.Validate()
		}
	}
	if *out == "" {
		*out = "reproduce-" + cfg.Preset
	}
	c := reproduce.Command{Config: cfg, List: *list, Stage: *stage, Dry: *dry, Stdout: os.Stdout, Stderr: os.Stderr,
		Options: reproduce.Options{Out: *out, Version: version, Log: os.Stderr, Lock: pipeline.LockConfig{Stale: *stale}, CodeKey: *codeKey},
		Slurm:   reproduce.SlurmOptions{Dir: *slurmDir, Vomc: *slurmVomc, SbatchOpts: slurmOpts, Force: *force}}
	if err := reproduceEngine(fs, cfg, tor, &c.Options); err != nil {
		return err
	}
	if *rerun != "" {
		if *list || *slurmDir != "" {
			return usagef("--rerun runs stages: it does not go with --list-stages or --slurm")
		}
		if c.Options.Rerun, err = reproduce.ParseStageList(*rerun); err != nil {
			return usagef("--rerun %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.Execute(ctx)
}

// reproduceEngine sets the torch engine for every training stage when the
// configuration trains with torch, and refuses torch-only flags otherwise.
func reproduceEngine(fs *flag.FlagSet, cfg reproduce.Config, tor *trainrun.Torch, opts *reproduce.Options) error {
	if cfg.Engine == trainrun.EngineTorch {
		if err := tor.Validate(); err != nil {
			return usageError{err.Error()}
		}
		opts.Torch = tor
		return nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, f := range torchOnlyFlags {
		if given[f] {
			return usagef("--%s is a torch engine setting: add --set engine=torch", f)
		}
	}
	return nil
}
