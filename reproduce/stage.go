package reproduce

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

	"github.com/vomc/vomc/fsutil"
)

// DoneFile is the marker a stage writes last into its directory.
const DoneFile = "done.json"

// Stage is one cached step of the pipeline.
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
	// Log receives progress lines.
	Log io.Writer
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
	// Seconds is the stage's wall time (of the run that completed it).
	Seconds  float64   `json:"seconds"`
	Finished time.Time `json:"finished"`
	// Dir is the stage's directory (not stored).
	Dir string `json:"-"`
	// Skipped is set when the stage was already done (not stored).
	Skipped bool `json:"-"`
}

// StageHash is the hash of a stage's inputs: the vomc version, its name and
// configuration, and the output hashes of its dependencies.
func StageHash(version string, s Stage, deps map[string]*Done) (string, error) {
	in, err := json.Marshal(s.Inputs)
	if err != nil {
		return "", fmt.Errorf("reproduce: stage %s: %w", s.Name, err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "vomc-reproduce/1\nversion %s\nstage %s\ninputs %s\n", version, s.Name, in)
	for _, d := range s.Deps {
		dd, ok := deps[d]
		if !ok {
			return "", fmt.Errorf("reproduce: stage %s depends on %s, which has not run", s.Name, d)
		}
		fmt.Fprintf(h, "dep %s %s\n", d, dd.OutputHash)
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

// Runner runs stages in order, caching them under Root.
type Runner struct {
	// Root is the directory of the stage directories (OUT/stages).
	Root string
	// Version is the vomc version (part of every hash).
	Version string
	// Log receives the progress lines (nil: discard).
	Log io.Writer
	// Done are the stages completed so far, by name.
	Done map[string]*Done
	// Ran and Skipped list the stages run and skipped, in order.
	Ran, Skipped []string
}

// Run runs (or skips) the stages in order. The i-th stage is reported as
// stage i+1 of len(stages).
func (r *Runner) Run(ctx context.Context, stages []Stage) error {
	if r.Done == nil {
		r.Done = map[string]*Done{}
	}
	log := r.Log
	if log == nil {
		log = io.Discard
	}
	for i, s := range stages {
		if err := ctx.Err(); err != nil {
			return err
		}
		hash, err := StageHash(r.Version, s, r.Done)
		if err != nil {
			return err
		}
		dir := filepath.Join(r.Root, s.Name+"-"+hash)
		label := fmt.Sprintf("[%d/%d] %s", i+1, len(stages), s.Name)
		if d, err := readDone(dir); err == nil && d.Hash == hash {
			d.Dir, d.Skipped = dir, true
			r.Done[s.Name] = d
			r.Skipped = append(r.Skipped, s.Name)
			fmt.Fprintf(log, "%s: done (cached in %s)\n", label, dir)
			continue
		}
		if !s.Resumable {
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: running in %s\n", label, dir)
		start := time.Now()
		sc := &StageContext{Dir: dir, Index: i + 1, Total: len(stages), Label: label, Deps: r.Done, Log: log}
		outs, err := s.Run(ctx, sc)
		if err != nil {
			return fmt.Errorf("stage %s: %w", s.Name, err)
		}
		oh, err := hashFiles(dir, outs)
		if err != nil {
			return fmt.Errorf("stage %s: %w", s.Name, err)
		}
		d := &Done{Name: s.Name, Hash: hash, OutputHash: oh, Outputs: outs,
			Seconds: time.Since(start).Seconds(), Finished: time.Now().UTC(), Dir: dir}
		b, _ := json.MarshalIndent(d, "", "  ")
		if err := fsutil.WriteBytes(filepath.Join(dir, DoneFile), true, append(b, '\n')); err != nil {
			return err
		}
		r.Done[s.Name] = d
		r.Ran = append(r.Ran, s.Name)
		fmt.Fprintf(log, "%s: finished in %s\n", label, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

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

// writeJSON writes v as indented JSON into dir/name atomically.
func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteBytes(filepath.Join(dir, name), true, append(b, '\n'))
}

// readJSON reads dir/name into v.
func readJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
