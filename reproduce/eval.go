package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/transformer"
)

// baselineSpec are the reference methods of Figs. 3 and 10: PPM (method A)
// in its three variants — as is (probabilities summing to < 1), normalised,
// and with exclusion — because the KN-vs-PPM conclusion depends on which.
const baselineSpec = "ctw,kn,ppm,ppm:norm,ppm:excl,unigram"

// KNTuneWindows is the most training windows KN's discount is tuned on.
const KNTuneWindows = 1000

// baselinesStage evaluates the reference methods (baselineSpec and
// cfg.ExtraMethods) on the test windows, KN's discount tuned on at most
// KNTuneWindows training windows.
func baselinesStage(cfg Config) pipeline.Stage {
	bspec := baselineSpec
	if cfg.ExtraMethods != "" {
		bspec += "," + cfg.ExtraMethods
	}
	return pipeline.Stage{
		Name:   StageBaselines,
		Inputs: map[string]any{"defaults": defaults(cfg), "methods": bspec, "tune_windows": KNTuneWindows},
		Deps:   []string{StageTrainData, StageTestData},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			train, err := dataset.Read(filepath.Join(sc.Deps[StageTrainData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			d := defaults(cfg)
			d.Tune = experiment.Windows(train)
			if len(d.Tune) > KNTuneWindows {
				d.Tune = d.Tune[:KNTuneWindows]
			}
			d.TuneNote = fmt.Sprintf("%d training windows", len(d.Tune))
			bar := progress.New(sc.Log, sc.Label, test.Windows()).DelayStart(2 * time.Second)
			res, _, err := experiment.Evaluate(ctx, experiment.Windows(test), bspec, d, eval.Config{Workers: cfg.Workers, Progress: bar.Update})
			bar.Done()
			if err != nil {
				return nil, err
			}
			return []string{resFile}, saveResult(sc.Dir, res)
		},
	}
}

// resFile is the result file of an evaluation stage.
const resFile = "results.json"

// evalStageName names the evaluation stage of replicate r of model m.
func evalStageName(m Model, r int) string { return "eval-tf-" + m.Slug() + repSuffix(r) }

// named gives a trained model the study's label as its name.
type named struct {
	*transformer.Model
	name string
}

func (n named) Name() string { return n.name }

// evalModelStage evaluates replicate r of model m beside CTW.
func evalModelStage(cfg Config, m Model, r int, opts Options) pipeline.Stage {
	return pipeline.Stage{
		Name:   evalStageName(m, r),
		Inputs: map[string]any{"defaults": defaults(cfg), "label": RepLabel(m, r)},
		Deps:   []string{StageTestData, trainStageName(m, r)},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensorsOn(opts.Backend, filepath.Join(sc.Deps[trainStageName(m, r)].Dir, modelFile))
			if err != nil {
				return nil, err
			}
			return evalWithCTW(ctx, cfg, sc, experiment.Windows(test), named{model, RepLabel(m, r)})
		},
	}
}

// evalWithCTW evaluates CTW and p on the windows and saves the result.
func evalWithCTW(ctx context.Context, cfg Config, sc *pipeline.StageContext, ws [][]byte, ps ...predict.Predictor) ([]string, error) {
	built, err := methods.Build("ctw", defaults(cfg))
	if err != nil {
		return nil, err
	}
	bar := progress.New(sc.Log, sc.Label, len(ws)).DelayStart(2 * time.Second)
	res, err := eval.Evaluate(ctx, ws, cfg.A, append([]predict.Predictor{built[0].Predictor}, ps...), eval.Config{Workers: cfg.Workers, Progress: bar.Update})
	bar.Done()
	if err != nil {
		return nil, err
	}
	return []string{resFile}, saveResult(sc.Dir, res)
}

// saveResult writes an evaluation stage's result.
func saveResult(dir string, res *eval.Result) error {
	return fsutil.WriteFile(filepath.Join(dir, resFile), true, res.WriteJSON)
}

// loadResult reads the result of the evaluation stage d.
func loadResult(d *pipeline.Done) (*eval.Result, error) {
	return eval.LoadJSONFile(filepath.Join(d.Dir, resFile))
}
