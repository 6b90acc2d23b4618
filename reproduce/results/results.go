package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
)

// MergedFile holds every in-context result of the run (written by the
// figures stage and published at the top of the output).
const MergedFile = "results.json"

// Merged is every in-context result of the run in one Result (the
// baselines', then each model's, then the synthetic models'), with the
// construction's separate result and the models' training records.
type Merged struct {
	Res *eval.Result
	// Val are the results on the validation windows (the held-out
	// training trees) from which "best" methods are selected; nil when the
	// stages kept none.
	Val       *eval.Result
	Construct *eval.Result
	CInfo     ConstructInfo
	Train     map[string]TrainInfo // by label
	// Logs are the trained models' training logs (trainrun.LogFile), by
	// label; a stage of a build that kept no log has none.
	Logs map[string][]transformer.LogEntry
}

// Merge reads the results of the completed stages deps into one
// Merged (what the figures and the report are drawn from).
func Merge(cfg study.Config, deps map[string]*pipeline.Done) (*Merged, error) {
	base, ok := deps[StageBaselines]
	if !ok {
		return nil, errors.New("baselines have not run")
	}
	res, err := LoadResult(base)
	if err != nil {
		return nil, err
	}
	mg := &Merged{Res: res, Train: map[string]TrainInfo{}, Logs: map[string][]transformer.LogEntry{}}
	// addVal merges a stage's validation results (ValFile), if any.
	addVal := func(d *pipeline.Done) error {
		v, err := eval.LoadJSONFile(filepath.Join(d.Dir, ValFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		if mg.Val == nil {
			mg.Val = v
			return nil
		}
		if v.Windows != mg.Val.Windows || v.N != mg.Val.N {
			return fmt.Errorf("%s: %d validation windows of %d, earlier stages %d of %d", d.Name, v.Windows, v.N, mg.Val.Windows, mg.Val.N)
		}
		for _, mr := range v.Methods {
			if mg.Val.Method(mr.Name) == nil {
				mg.Val.Methods = append(mg.Val.Methods, mr)
			}
		}
		return nil
	}
	if err := addVal(base); err != nil {
		return nil, err
	}
	add := func(d *pipeline.Done) error {
		if err := addVal(d); err != nil {
			return err
		}
		r, err := LoadResult(d)
		if err != nil {
			return err
		}
		if r.Windows != res.Windows || r.N != res.N {
			return fmt.Errorf("%s: %d windows of %d, baselines %d of %d", d.Name, r.Windows, r.N, res.Windows, res.N)
		}
		if r.Ref().Name != res.Ref().Name {
			return fmt.Errorf("%s: excesses measured from %s, the baselines' from %s (stages of different builds?)", d.Name, r.Ref().Name, res.Ref().Name)
		}
		for i, mr := range r.Methods {
			if i != r.Reference && res.Method(mr.Name) == nil {
				res.Methods = append(res.Methods, mr)
			}
		}
		return nil
	}
	for r := range cfg.NumSeeds() {
		for _, m := range cfg.Models() {
			if d, ok := deps[EvalStageName(m, r)]; ok {
				if err := add(d); err != nil {
					return nil, err
				}
			}
			if d, ok := deps[TrainStageName(m, r)]; ok {
				var ti TrainInfo
				if err := ReadJSON(d.Dir, InfoFile, &ti); err != nil {
					return nil, err
				}
				mg.Train[RepLabel(m, r)] = ti
				h, err := ReadTrainLog(d.Dir)
				if err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("%s: %w", d.Name, err)
				}
				if err == nil {
					mg.Logs[RepLabel(m, r)] = h
				}
			}
		}
	}
	if d, ok := deps[StageSynth]; ok {
		if err := add(d); err != nil {
			return nil, err
		}
	}
	if d, ok := deps[StageConstruct]; ok {
		if mg.Construct, err = LoadResult(d); err != nil {
			return nil, err
		}
		if err := ReadJSON(d.Dir, "construct.json", &mg.CInfo); err != nil {
			return nil, err
		}
	}
	return mg, nil
}

// WriteJSON writes v as indented JSON into dir/name atomically.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteBytes(filepath.Join(dir, name), true, append(b, '\n'))
}

// ReadJSON reads dir/name into v.
func ReadJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
