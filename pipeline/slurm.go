package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vomc/vomc/internal/fsutil"
)

// Slurm describes a Slurm submission of a plan: one job per job kind, each
// array task running one stage with Command on the shared stage directory.
type Slurm struct {
	// Dir receives the submission: Files, one stage list and one sbatch
	// script per job kind, submit.sh and logs/. It must be absolute.
	Dir string
	// Name names the sweep in the scripts' comments ("vomc reproduce");
	// JobPrefix heads the job names (PREFIX-KIND).
	Name, JobPrefix string
	// Command is the shell command, its words quoted (ShellQuote), that
	// runs one stage: a task executes `Command --stage "$STAGE"`.
	Command string
	// SbatchOpts are extra #SBATCH options, "KEY=VALUE" or "KEY" (without
	// the leading dashes), for every job; "KIND:KEY=VALUE" (KIND one of
	// Kinds) applies to that kind's job only, e.g. "train:gres=gpu:1".
	SbatchOpts []string
	// Files are written into Dir before the jobs (e.g. the configuration
	// every task reads), by file name.
	Files map[string][]byte
	// Force allows writing into a directory that already holds a
	// submission (otherwise the error is ErrSubmitted).
	Force bool
}

// ErrSubmitted is WriteSlurm's error when Dir already holds a submission.
var ErrSubmitted = errors.New("already holds a submission")

// SlurmJob is one job of a submission.
type SlurmJob struct {
	Kind string
	// Stages are the stages it runs, one per array task (task i runs
	// Stages[i]); StageList and Script are its files.
	Stages            []string
	StageList, Script string
}

// Submission is a written Slurm submission.
type Submission struct {
	Dir    string
	Submit string // the script that submits the jobs, chained
	Jobs   []SlurmJob
}

// sbatchOpt is one parsed #SBATCH option.
type sbatchOpt struct{ kind, key, value string }

func parseSbatchOpts(opts []string) ([]sbatchOpt, error) {
	var out []sbatchOpt
	for _, o := range opts {
		kv := strings.TrimSpace(o)
		key, value, hasValue := strings.Cut(kv, "=")
		kind := ""
		if k, rest, ok := strings.Cut(key, ":"); ok {
			if !slices.Contains(Kinds, k) {
				return nil, fmt.Errorf("pipeline: sbatch option %q: unknown job kind %q (%s)", o, k, strings.Join(Kinds, ", "))
			}
			kind, key = k, rest
		}
		key = strings.TrimLeft(key, "-")
		if key == "" || strings.ContainsAny(key, " \t\n'\"") || strings.ContainsAny(value, "\n") {
			return nil, fmt.Errorf("pipeline: sbatch option %q: want KEY=VALUE, KEY or KIND:KEY=VALUE", o)
		}
		switch key {
		case "array", "dependency", "output", "error", "job-name", "J", "o", "e", "d", "a":
			return nil, fmt.Errorf("pipeline: sbatch option %q: %s is set by the submission", o, key)
		}
		if !hasValue {
			value = "\x00" // a flag without a value
		}
		out = append(out, sbatchOpt{kind, key, value})
	}
	return out, nil
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// slurmScript is the sbatch script of one job: it runs the stage of its
// array task (line SLURM_ARRAY_TASK_ID+1 of the stage list) with
// `s.Command --stage`. Training jobs are requeueable (a requeued task
// resumes its stage). Options apply to every job, or to the job of their
// kind.
func slurmScript(job SlurmJob, s Slurm, logs string, opts []sbatchOpt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s-%s\n", s.JobPrefix, job.Kind)
	array := len(job.Stages) > 1
	if array {
		fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", len(job.Stages)-1)
		fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logs, "%x-%A_%a.out"))
	} else {
		fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(logs, "%x-%j.out"))
	}
	fmt.Fprintf(&b, "#SBATCH --open-mode=append\n")
	if job.Kind == KindTrain {
		fmt.Fprintf(&b, "#SBATCH --requeue\n")
	} else {
		fmt.Fprintf(&b, "#SBATCH --no-requeue\n")
	}
	for _, o := range opts {
		if o.kind != "" && o.kind != job.Kind {
			continue
		}
		if o.value == "\x00" {
			fmt.Fprintf(&b, "#SBATCH --%s\n", o.key)
		} else {
			fmt.Fprintf(&b, "#SBATCH --%s=%s\n", o.key, o.value)
		}
	}
	fmt.Fprintf(&b, "\n# %s: the %s stage(s) of the study, one per array task.\nset -euo pipefail\n", s.Name, job.Kind)
	if array {
		fmt.Fprintf(&b, "STAGE=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" %s)\n", ShellQuote(job.StageList))
		fmt.Fprintf(&b, "if [ -z \"$STAGE\" ]; then echo \"no stage for array task $SLURM_ARRAY_TASK_ID in %s\" >&2; exit 1; fi\n", job.StageList)
	} else {
		fmt.Fprintf(&b, "STAGE=%s\n", ShellQuote(job.Stages[0]))
	}
	fmt.Fprintf(&b, "echo \"$(date -u +%%FT%%TZ) $(hostname): stage $STAGE (job ${SLURM_JOB_ID:-?}, restart ${SLURM_RESTART_COUNT:-0})\"\n")
	fmt.Fprintf(&b, "exec %s --stage \"$STAGE\"\n", s.Command)
	return b.String()
}

// submitScript is the script that submits the jobs in order, each after
// the previous one succeeded (sbatch --dependency=afterok), and records
// their ids in jobs.txt.
func submitScript(name string, jobs []SlurmJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/bash
# Submits the %s sweep: each job starts when the previous one
# (every task of it) has succeeded. Run it again after a failure or a
# cancellation: completed stages are skipped, training resumes from its
# checkpoints. Extra sbatch arguments (e.g. --partition=X) are passed on.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p logs
dep=()
: > jobs.txt
`, name)
	for _, j := range jobs {
		fmt.Fprintf(&b, "id=$(sbatch --parsable --kill-on-invalid-dep=yes \"${dep[@]}\" \"$@\" %s)\nid=${id%%%%;*}\necho \"%s $id\" | tee -a jobs.txt\ndep=(--dependency=afterok:$id)\n",
			ShellQuote(filepath.Base(j.Script)), j.Kind)
	}
	return b.String()
}

// WriteSlurm writes a Slurm submission of the plan stages (see Slurm):
// instead of running the stages, it writes one job per job kind, in the
// order of Kinds — an array job where a kind has several stages, the
// training job requeueable — each task running one stage with s.Command,
// and a submit.sh that chains the jobs with --dependency=afterok.
func WriteSlurm(stages []Stage, s Slurm) (*Submission, error) {
	if !filepath.IsAbs(s.Dir) || s.Command == "" {
		return nil, errors.New("pipeline: a Slurm submission needs an absolute directory and a command")
	}
	sbo, err := parseSbatchOpts(s.SbatchOpts)
	if err != nil {
		return nil, err
	}
	sub := &Submission{Dir: s.Dir, Submit: filepath.Join(s.Dir, "submit.sh")}
	if _, err := os.Stat(sub.Submit); err == nil && !s.Force {
		return nil, fmt.Errorf("pipeline: %s %w", s.Dir, ErrSubmitted)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	logs := filepath.Join(s.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(s.Files)) {
		if err := fsutil.WriteBytes(filepath.Join(s.Dir, name), true, s.Files[name]); err != nil {
			return nil, err
		}
	}
	byKind := map[string][]string{}
	for _, st := range stages {
		byKind[st.JobKind()] = append(byKind[st.JobKind()], st.Name)
	}
	for _, k := range Kinds {
		if len(byKind[k]) == 0 {
			continue
		}
		j := SlurmJob{Kind: k, Stages: byKind[k], StageList: filepath.Join(s.Dir, "stages-"+k+".txt"), Script: filepath.Join(s.Dir, k+".sbatch")}
		if err := fsutil.WriteBytes(j.StageList, true, []byte(strings.Join(j.Stages, "\n")+"\n")); err != nil {
			return nil, err
		}
		if err := fsutil.WriteBytes(j.Script, true, []byte(slurmScript(j, s, logs, sbo))); err != nil {
			return nil, err
		}
		sub.Jobs = append(sub.Jobs, j)
	}
	if err := fsutil.WriteBytes(sub.Submit, true, []byte(submitScript(s.Name, sub.Jobs))); err != nil {
		return nil, err
	}
	if err := os.Chmod(sub.Submit, 0o755); err != nil {
		return nil, err
	}
	return sub, nil
}
