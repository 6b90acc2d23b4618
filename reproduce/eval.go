package reproduce

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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

// baselineSpec are the reference methods of Figs. 3 and 10: the exact
// Bayes predictor of the study's prior (the reference every excess is
// measured from), CTW with the study's (D, λ, α) (the paper's reference),
// KN, and PPM (method A) in its three variants — as is (probabilities
// summing to < 1), normalised, and with exclusion — because the KN-vs-PPM
// conclusion depends on which.
const baselineSpec = "bayes,ctw,kn,ppm,ppm:norm,ppm:excl,unigram"

// refSpec are the methods every model is evaluated beside: the exact Bayes
// predictor (the reference of the excesses) and CTW.
const refSpec = "bayes,ctw"

// KNTuneWindows is the most training windows KN's discount is tuned on.
const KNTuneWindows = 1000

// ValWindows is the most validation windows (the training trees held out
// for early stopping: the same split as training) on which the report's
// selections ("the best transformer", "the best fixed order") are made,
// so that the test windows that judge a selection never choose it.
const ValWindows = 500

// valFile is an evaluation stage's result on the validation windows.
const valFile = "val.json"

// validationWindows are the first ValWindows windows of the training
// data's validation split (trainSplit).
func validationWindows(cfg Config, sc *pipeline.StageContext) ([][]byte, error) {
	_, val, _, err := trainSplit(cfg, sc)
	if err != nil || val == nil {
		return nil, err
	}
	n := min(val.Windows(), ValWindows)
	out := make([][]byte, n)
	for i := range n {
		out[i] = val.Window(i)
	}
	return out, nil
}

// evalValidation evaluates ps on the validation windows and saves the
// result as valFile (nothing when the split has fewer than 2 windows).
func evalValidation(ctx context.Context, cfg Config, sc *pipeline.StageContext, ps []predict.Predictor) ([]string, error) {
	ws, err := validationWindows(cfg, sc)
	if err != nil || len(ws) < 2 {
		return nil, err
	}
	res, err := eval.Evaluate(ctx, ws, cfg.A, ps, eval.Config{Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	return []string{valFile}, fsutil.WriteFile(filepath.Join(sc.Dir, valFile), true, res.WriteJSON)
}

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
		Inputs: map[string]any{"defaults": defaults(cfg), "methods": bspec, "tune_windows": KNTuneWindows, "val_windows": ValWindows},
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
			if err := saveResult(sc.Dir, res); err != nil {
				return nil, err
			}
			// the fixed orders on the validation windows, to select the best
			var mk []predict.Predictor
			if cfg.ExtraMethods != "" {
				built, err := methods.Build(cfg.ExtraMethods, d)
				if err != nil {
					return nil, err
				}
				for _, b := range built {
					if strings.HasPrefix(b.Predictor.Name(), "Markov") {
						mk = append(mk, b.Predictor)
					}
				}
			}
			if len(mk) == 0 {
				return []string{resFile}, nil
			}
			vo, err := evalValidation(ctx, cfg, sc, mk)
			return append([]string{resFile}, vo...), err
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

// evalModelStage evaluates replicate r of model m beside Bayes and CTW.
func evalModelStage(cfg Config, m Model, r int, opts Options) pipeline.Stage {
	return pipeline.Stage{
		Name:   evalStageName(m, r),
		Inputs: map[string]any{"defaults": defaults(cfg), "label": RepLabel(m, r), "val_windows": ValWindows},
		Deps:   []string{StageTestData, trainStageName(m, r), StageTrainData},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensorsOn(opts.backend(), filepath.Join(sc.Deps[trainStageName(m, r)].Dir, modelFile))
			if err != nil {
				return nil, err
			}
			p := named{model, RepLabel(m, r)}
			outs, err := evalWithRefs(ctx, cfg, sc, experiment.Windows(test), p)
			if err != nil {
				return nil, err
			}
			vo, err := evalValidation(ctx, cfg, sc, []predict.Predictor{p})
			return append(outs, vo...), err
		},
	}
}

// evalWithRefs evaluates the references (refSpec: Bayes, the reference of
// the excesses, and CTW) and p on the windows and saves the result.
func evalWithRefs(ctx context.Context, cfg Config, sc *pipeline.StageContext, ws [][]byte, ps ...predict.Predictor) ([]string, error) {
	built, err := methods.Build(refSpec, defaults(cfg))
	if err != nil {
		return nil, err
	}
	var preds []predict.Predictor
	for _, b := range built {
		preds = append(preds, b.Predictor)
	}
	bar := progress.New(sc.Log, sc.Label, len(ws)).DelayStart(2 * time.Second)
	res, err := eval.Evaluate(ctx, ws, cfg.A, append(preds, ps...), eval.Config{Workers: cfg.Workers, Progress: bar.Update, Reference: preds[0].Name()})
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
