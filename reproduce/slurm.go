package reproduce

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
)

// SlurmOptions describe a Slurm submission.
type SlurmOptions struct {
	// Dir receives the submission: config.json, one stage list and one
	// sbatch script per job kind, submit.sh and logs/.
	Dir string
	// Vomc is the vomc binary the tasks run (an absolute path on the
	// cluster's shared file system).
	Vomc string
	// SbatchOpts are extra #SBATCH options, "KEY=VALUE" or "KEY" (without
	// the leading dashes), for every job; "KIND:KEY=VALUE" (KIND one of
	// pipeline.Kinds) applies to that kind's job only, e.g.
	// "train:gres=gpu:1".
	SbatchOpts []string
	// Force allows writing into a directory that already holds a
	// submission.
	Force bool
}

// Submission is a written Slurm submission of the study.
type Submission struct {
	pipeline.Submission
	Config string // the configuration every task reads
}

// WriteSlurm writes a Slurm submission of the study (see SlurmOptions and
// pipeline.WriteSlurm): instead of running the stages, it writes one job
// per job kind — the data stages, the training stages as one job array,
// the evaluation stages, then the figures and the report — each task
// running one stage with `vomc reproduce --stage NAME` on the shared
// output directory opts.Out, reading the configuration copied into the
// submission, and a submit.sh that chains them with --dependency=afterok.
// A set opts.Lock.Stale is passed on as --lock-stale.
func WriteSlurm(cfg study.Config, opts Options, so SlurmOptions) (*Submission, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" || so.Dir == "" || so.Vomc == "" {
		return nil, errors.New("reproduce: a Slurm submission needs an output directory, a submission directory and the vomc binary")
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(so.Dir)
	if err != nil {
		return nil, err
	}
	vomc, err := filepath.Abs(so.Vomc)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(vomc); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("reproduce: %s is not an executable vomc binary", vomc)
	}
	stages, err := Plan(cfg, opts)
	if err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "config.json")
	q := pipeline.ShellQuote
	command := q(vomc)
	for _, a := range stageArgs(cfg, opts, config, out) {
		command += " " + q(a)
	}
	sub, err := pipeline.WriteSlurm(stages, pipeline.Slurm{Dir: dir, Name: "vomc reproduce", JobPrefix: "vomc", Command: command,
		SbatchOpts: so.SbatchOpts, Files: map[string][]byte{filepath.Base(config): []byte(cfg.FileJSON() + "\n")}, Force: so.Force})
	if errors.Is(err, pipeline.ErrSubmitted) {
		return nil, fmt.Errorf("reproduce: %w", err)
	}
	if err != nil {
		return nil, err
	}
	return &Submission{Submission: *sub, Config: config}, nil
}
