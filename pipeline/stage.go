// Package pipeline runs a plan of cached stages: each stage is computed
// once into a directory named after a hash of its inputs and reused by
// every later run, by concurrent runs and by the tasks of a Slurm sweep
// that share the directory. It knows nothing of what the stages compute.
//
//   - Cache (Stage, Done, StageHash): stage NAME is computed in
//     ROOT/NAME-HASH/, where HASH covers the code key (CodeKey), the
//     stage's name and JSON-encoded inputs and the hashes of the stages it
//     depends on; the file done.json, written last, marks it complete and
//     records the hash of its output files. A stage is reused while its
//     dependencies' outputs are unchanged.
//   - Runner: runs stages in plan order, skipping the complete ones;
//     --rerun-style recomputation (Runner.Rerun), one stage alone
//     (Runner.RunOnly) and the state of every stage (Runner.Graph).
//   - Locks (AcquireLock): a stage is claimed by a lock file with a
//     heartbeat, taken over when its holder is certainly gone.
//   - Slurm (WriteSlurm): the plan as one job per job kind (data, train,
//     eval, figures, report), each task running one stage.
package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/vomc/vomc/events"
)

// DoneFile is the marker a stage writes last into its directory.
const DoneFile = "done.json"

// Stage is one cached step of a plan.
type Stage struct {
	// Name identifies the stage (file-name safe), e.g. "train-h4-4".
	Name string
	// Inputs is the stage's own configuration (JSON-encoded into its hash).
	Inputs any
	// Deps are the names of the stages whose outputs it reads.
	Deps []string
	// Resumable stages keep a partial directory (training checkpoints);
	// others start from an empty directory when they are redone.
	Resumable bool
	// Kind is the stage's job kind (KindData, KindTrain, …; empty means
	// KindEval): the Slurm submission runs the stages of a kind as one job.
	Kind string
	// Run does the work in sc.Dir and returns the paths (relative to
	// sc.Dir) of the files that define its output; their contents are
	// hashed into the output hash that downstream stages depend on.
	Run func(ctx context.Context, sc *StageContext) (outputs []string, err error)
}

// StageContext is what a running stage gets.
type StageContext struct {
	// Dir is the stage's directory (created).
	Dir string
	// Index (1-based) and Total place the stage in the run; Label is
	// "[k/n] name" for progress lines.
	Index, Total int
	Label        string
	// Deps are the completed upstream stages by name.
	Deps map[string]*Done
	// Events receives the stage's progress, warnings and log lines (the
	// runner's Events; never nil).
	Events events.Sink
}

// Done is the content of a stage's done marker.
type Done struct {
	Name string `json:"name"`
	// Hash is the stage's input hash (the directory suffix), OutputHash
	// the hash of its declared outputs.
	Hash       string `json:"hash"`
	OutputHash string `json:"output_hash"`
	// Outputs are the declared output files.
	Outputs []string `json:"outputs"`
	// DepOutputs are the output hashes of the dependencies it was computed
	// from, by name: a stage whose dependency's outputs have changed since
	// (a dependency recomputed by a rerun) is stale and computed again.
	DepOutputs map[string]string `json:"dep_outputs"`
	// ComputedBy is the code key of the binary that computed the stage
	// (CodeKey): the hash's code key unless the run was given another
	// build's (reusing its stages).
	ComputedBy string `json:"computed_by,omitempty"`
	// Seconds is the stage's wall time (of the run that completed it).
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	// Dir is the stage's directory (not stored).
	Dir string `json:"-"`
	// Skipped is set when the stage was already done (not stored).
	Skipped bool `json:"-"`
}

// hashDomain heads every stage hash. It dates from when this machinery
// was part of package reproduce and is kept so that the stage directories
// computed then stay valid; change its version only to invalidate every
// cached stage.
const hashDomain = "vomc-reproduce/2"

// StageHash is the hash of a stage's inputs: the code key (see CodeKey;
// Runner.Code), its name and configuration, and the hashes (keys) of the
// stages it depends on, given by name in keys. It depends only on inputs,
// never on outputs, so identical runs give identical stage directories
// even where outputs record wall times.
func StageHash(code string, s Stage, keys map[string]string) (string, error) {
	in, err := json.Marshal(s.Inputs)
	if err != nil {
		return "", fmt.Errorf("pipeline: stage %s: %w", s.Name, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\ncode %q\nstage %s\ninputs %s\n", hashDomain, code, s.Name, in)
	for _, d := range s.Deps {
		k, ok := keys[d]
		if !ok {
			return "", fmt.Errorf("pipeline: stage %s depends on %s, which is not planned before it", s.Name, d)
		}
		fmt.Fprintf(h, "dep %s %s\n", d, k)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// hashFiles hashes the named files of dir (names and contents).
func hashFiles(dir string, names []string) (string, error) {
	names = append([]string(nil), names...)
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file %s\n", n)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Job kinds of stages: the Slurm submission runs the stages of one kind as
// one job (an array job when there are several), in this order; training
// jobs are requeueable.
const (
	KindData    = "data"
	KindTrain   = "train"
	KindEval    = "eval"
	KindFigures = "figures"
	KindReport  = "report"
)

// Kinds lists the job kinds in the order they run.
var Kinds = []string{KindData, KindTrain, KindEval, KindFigures, KindReport}

// JobKind is the stage's kind (KindEval when Kind is empty).
func (s Stage) JobKind() string {
	if s.Kind == "" {
		return KindEval
	}
	return s.Kind
}

// readDone reads the done marker of the stage directory dir; it is an
// error when a declared output is missing.
func readDone(dir string) (*Done, error) {
	b, err := os.ReadFile(filepath.Join(dir, DoneFile))
	if err != nil {
		return nil, err
	}
	var d Done
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	for _, o := range d.Outputs {
		if _, err := os.Stat(filepath.Join(dir, o)); err != nil {
			return nil, fmt.Errorf("stage output %s missing: %w", o, fs.ErrNotExist)
		}
	}
	if d.Hash == "" {
		return nil, errors.New("empty done marker")
	}
	return &d, nil
}
