package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vomc/vomc/internal/fsutil"
)

// Stage states reported by Graph.
const (
	StateDone    = "done"    // its done marker is valid
	StateRunning = "running" // claimed (its lock exists)
	StatePartial = "partial" // started, not done (a training checkpoint)
	StateReady   = "ready"   // its inputs are done
	StateWaiting = "waiting" // an input is not done
)

// StageInfo describes one stage of the graph.
type StageInfo struct {
	Name string
	// Kind is the job kind (KindData, …) the Slurm submission runs it in.
	Kind      string
	Deps      []string
	Resumable bool
	// State is one of the State constants, as found under the output
	// directory; Hash and Dir are always known (a hash depends only on inputs).
	State string
	Hash  string
	Dir   string
	// Note says who holds a running stage's claim.
	Note string
}

// Graph returns the study's stages in order with their job kinds and
// dependencies, and their states under opts.Out (every stage "ready" or
// "waiting" when opts.Out is empty or holds nothing).
func Graph(cfg Config, opts Options) ([]StageInfo, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	stages := Plan(cfg, opts)
	opts.Rerun = nil
	r, err := newRunner(opts, stages)
	if err != nil {
		return nil, err
	}
	var out []StageInfo
	for _, s := range stages {
		si := StageInfo{Name: s.Name, Kind: s.JobKind(), Deps: s.Deps, Resumable: s.Resumable, State: StateWaiting}
		hash, dir, err := r.stageDir(s)
		if err != nil {
			return nil, err
		}
		si.Hash, si.Dir = hash, dir
		ready := true
		for _, d := range s.Deps {
			if _, ok := r.Done[d]; !ok {
				ready = false
			}
		}
		if ready {
			si.State = StateReady
			if opts.Out != "" {
				if d, ok := r.valid(s, hash, dir); ok {
					r.Done[s.Name] = d
					si.State = StateDone
				} else if note := describeLock(dir+".lock", opts.Lock); note != "" {
					si.State, si.Note = StateRunning, note
				} else if _, err := os.Stat(dir); err == nil {
					si.State = StatePartial
				}
			}
		}
		out = append(out, si)
	}
	return out, nil
}

// MissingInputError is RunStage's error when a stage's input is not done.
type MissingInputError struct {
	Stage, Input string
	// Root is the stages directory searched.
	Root string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("reproduce: stage %s needs stage %s, which is not done in %s: run it first (vomc reproduce --stage %s with the same configuration and --out), or run the whole study",
		e.Stage, e.Input, e.Root, e.Input)
}

// RunStage runs exactly one stage, named name, of the study under opts.Out
// (skipping it if it is done, waiting for it if another process has
// claimed it). Every stage it depends on, directly or not, must be done
// already; otherwise the error is a *MissingInputError. Running the report
// stage also publishes the report, figures and results at the top of
// opts.Out, as Run does.
func RunStage(ctx context.Context, cfg Config, opts Options, name string) (*Outcome, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" {
		return nil, fmt.Errorf("reproduce: no output directory")
	}
	stages := Plan(cfg, opts)
	idx := slices.IndexFunc(stages, func(s Stage) bool { return s.Name == name })
	if idx < 0 {
		var names []string
		for _, s := range stages {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("reproduce: no stage %q in this configuration (stages: %s)", name, strings.Join(names, ", "))
	}
	// The stage's ancestors, which must all be done.
	need := map[string]bool{}
	var mark func(n string)
	byName := map[string]Stage{}
	for _, s := range stages {
		byName[s.Name] = s
	}
	mark = func(n string) {
		for _, d := range byName[n].Deps {
			if !need[d] {
				need[d] = true
				mark(d)
			}
		}
	}
	mark(name)
	root := filepath.Join(opts.Out, "stages")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(filepath.Join(opts.Out, "config.json"), true, []byte(cfg.JSON()+"\n")); err != nil {
		return nil, err
	}
	r, err := newRunner(opts, stages)
	if err != nil {
		return nil, err
	}
	for _, s := range stages[:idx] {
		hash, dir, err := r.stageDir(s)
		if err != nil {
			return nil, err
		}
		if !need[s.Name] {
			continue
		}
		d, ok := r.valid(s, hash, dir)
		if !ok {
			return nil, &MissingInputError{Stage: name, Input: s.Name, Root: root}
		}
		d.Skipped = true
		r.Done[s.Name] = d
	}
	err = r.RunOne(ctx, stages[idx], idx+1, len(stages))
	out := &Outcome{Ran: r.Ran, Elapsed: time.Since(start)}
	if err != nil {
		return out, err
	}
	if len(r.Ran) == 0 {
		out.Skipped = []string{name}
	}
	if name == StageReport {
		if out.Report, out.Figures, err = publish(opts.Out, r.Done); err != nil {
			return out, err
		}
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

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
	// Kinds) applies to that kind's job only, e.g. "train:gres=gpu:1".
	SbatchOpts []string
	// Force allows writing into a directory that already holds a
	// submission.
	Force bool
}

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
	Config string // the configuration every task reads
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
				return nil, fmt.Errorf("reproduce: --slurm-opt %q: unknown job kind %q (%s)", o, k, strings.Join(Kinds, ", "))
			}
			kind, key = k, rest
		}
		key = strings.TrimLeft(key, "-")
		if key == "" || strings.ContainsAny(key, " \t\n'\"") || strings.ContainsAny(value, "\n") {
			return nil, fmt.Errorf("reproduce: --slurm-opt %q: want KEY=VALUE, KEY or KIND:KEY=VALUE", o)
		}
		switch key {
		case "array", "dependency", "output", "error", "job-name", "J", "o", "e", "d", "a":
			return nil, fmt.Errorf("reproduce: --slurm-opt %q: %s is set by the submission", o, key)
		}
		if !hasValue {
			value = "\x00" // a flag without a value
		}
		out = append(out, sbatchOpt{kind, key, value})
	}
	return out, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// SlurmScript is the sbatch script of one job: it runs the stage of its
// array task (line SLURM_ARRAY_TASK_ID+1 of the stage list) with `vomc
// reproduce --stage`, on the shared output directory out, reading the
// configuration file config. Training jobs are requeueable (a requeued
// task resumes from its checkpoint). Options apply to every job, or to the
// job of their kind; a set lock.Stale is passed on as --lock-stale.
func SlurmScript(job SlurmJob, vomc, config, preset, out, logs string, lock LockConfig, opts []sbatchOpt) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=vomc-%s\n", job.Kind)
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
	fmt.Fprintf(&b, "\n# vomc reproduce: the %s stage(s) of the study, one per array task.\nset -euo pipefail\n", job.Kind)
	if array {
		fmt.Fprintf(&b, "STAGE=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" %s)\n", shellQuote(job.StageList))
		fmt.Fprintf(&b, "if [ -z \"$STAGE\" ]; then echo \"no stage for array task $SLURM_ARRAY_TASK_ID in %s\" >&2; exit 1; fi\n", job.StageList)
	} else {
		fmt.Fprintf(&b, "STAGE=%s\n", shellQuote(job.Stages[0]))
	}
	fmt.Fprintf(&b, "echo \"$(date -u +%%FT%%TZ) $(hostname): stage $STAGE (job ${SLURM_JOB_ID:-?}, restart ${SLURM_RESTART_COUNT:-0})\"\n")
	stale := ""
	if lock.Stale > 0 {
		stale = " --lock-stale " + lock.Stale.String()
	}
	fmt.Fprintf(&b, "exec %s reproduce --preset %s --config %s --out %s%s --stage \"$STAGE\"\n",
		shellQuote(vomc), shellQuote(preset), shellQuote(config), shellQuote(out), stale)
	return b.String()
}

// SubmitScript is the script that submits the jobs in order, each after
// the previous one succeeded (sbatch --dependency=afterok), and records
// their ids in jobs.txt.
func SubmitScript(jobs []SlurmJob) string {
	var b strings.Builder
	b.WriteString(`#!/bin/bash
# Submits the vomc reproduce sweep: each job starts when the previous one
# (every task of it) has succeeded. Run it again after a failure or a
# cancellation: completed stages are skipped, training resumes from its
# checkpoints. Extra sbatch arguments (e.g. --partition=X) are passed on.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p logs
dep=()
: > jobs.txt
`)
	for _, j := range jobs {
		fmt.Fprintf(&b, "id=$(sbatch --parsable --kill-on-invalid-dep=yes \"${dep[@]}\" \"$@\" %s)\nid=${id%%%%;*}\necho \"%s $id\" | tee -a jobs.txt\ndep=(--dependency=afterok:$id)\n",
			shellQuote(filepath.Base(j.Script)), j.Kind)
	}
	return b.String()
}

// WriteSlurm writes a Slurm submission of the study (see SlurmOptions):
// instead of running the stages, it writes one job per job kind — the
// data stages, the training stages as one job array, the evaluation
// stages, then the figures and the report — each task running one stage
// with `vomc reproduce --stage NAME` on the shared output directory
// opts.Out, and a submit.sh that chains them with --dependency=afterok.
func WriteSlurm(cfg Config, opts Options, so SlurmOptions) (*Submission, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Out == "" || so.Dir == "" || so.Vomc == "" {
		return nil, errors.New("reproduce: a Slurm submission needs an output directory, a submission directory and the vomc binary")
	}
	sbo, err := parseSbatchOpts(so.SbatchOpts)
	if err != nil {
		return nil, err
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
	sub := &Submission{Dir: dir, Submit: filepath.Join(dir, "submit.sh"), Config: filepath.Join(dir, "config.json")}
	if _, err := os.Stat(sub.Submit); err == nil && !so.Force {
		return nil, fmt.Errorf("reproduce: %s already holds a submission (use --force to replace it)", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	if err := fsutil.WriteBytes(sub.Config, true, []byte(cfg.JSON()+"\n")); err != nil {
		return nil, err
	}
	byKind := map[string][]string{}
	for _, s := range Plan(cfg, opts) {
		byKind[s.JobKind()] = append(byKind[s.JobKind()], s.Name)
	}
	for _, k := range Kinds {
		if len(byKind[k]) == 0 {
			continue
		}
		j := SlurmJob{Kind: k, Stages: byKind[k], StageList: filepath.Join(dir, "stages-"+k+".txt"), Script: filepath.Join(dir, k+".sbatch")}
		if err := fsutil.WriteBytes(j.StageList, true, []byte(strings.Join(j.Stages, "\n")+"\n")); err != nil {
			return nil, err
		}
		script := SlurmScript(j, vomc, sub.Config, cfg.Preset, out, logs, opts.Lock, sbo)
		if err := fsutil.WriteBytes(j.Script, true, []byte(script)); err != nil {
			return nil, err
		}
		sub.Jobs = append(sub.Jobs, j)
	}
	if err := fsutil.WriteBytes(sub.Submit, true, []byte(SubmitScript(sub.Jobs))); err != nil {
		return nil, err
	}
	if err := os.Chmod(sub.Submit, 0o755); err != nil {
		return nil, err
	}
	return sub, nil
}
