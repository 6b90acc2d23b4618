package reproduce

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/events"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/internal/fsutil"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
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

// ValWindows is the most validation windows (the training trees held out
// for early stopping: the same split as training) on which the report's
// selections ("the best transformer", "the best fixed order") are made,
// so that the test windows that judge a selection never choose it.
const ValWindows = 500

// validationWindows are the first ValWindows windows of the training
// data's validation split (trainSplit).
func validationWindows(cfg study.Config, sc *pipeline.StageContext) ([][]byte, error) {
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
// result as ValFile (nothing when the split has fewer than 2 windows).
func evalValidation(ctx context.Context, cfg study.Config, sc *pipeline.StageContext, ps []predict.Predictor) ([]string, error) {
	ws, err := validationWindows(cfg, sc)
	if err != nil || len(ws) < 2 {
		return nil, err
	}
	res, err := eval.Evaluate(ctx, ws, cfg.A, ps, eval.Config{Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	return []string{results.ValFile}, fsutil.WriteFile(filepath.Join(sc.Dir, results.ValFile), true, res.WriteJSON)
}

// baselinesStage evaluates the reference methods (baselineSpec and
// cfg.ExtraMethods, which may be tf models — intervened ones too — built on
// the engine's backend, or torch models run on Options.Torch) on the test windows, KN's discount tuned on at
// most KNTuneWindows training windows.
func baselinesStage(cfg study.Config, opts Options) pipeline.Stage {
	bspec := baselineSpec
	if cfg.ExtraMethods != "" {
		bspec += "," + cfg.ExtraMethods
	}
	return pipeline.Stage{
		Name:   results.StageBaselines,
		Inputs: map[string]any{"defaults": defaults(cfg), "methods": bspec, "tune_windows": results.KNTuneWindows, "val_windows": ValWindows},
		Deps:   []string{results.StageTrainData, results.StageTestData},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			train, err := dataset.Read(filepath.Join(sc.Deps[results.StageTrainData].Dir, results.DataDir))
			if err != nil {
				return nil, err
			}
			test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
			if err != nil {
				return nil, err
			}
			d := defaults(cfg)
			d.Tune = experiment.Windows(train)
			if len(d.Tune) > results.KNTuneWindows {
				d.Tune = d.Tune[:results.KNTuneWindows]
			}
			d.TuneNote = fmt.Sprintf("%d training windows", len(d.Tune))
			d.Backend, d.Torch = opts.backend(), opts.torch()
			list, err := methods.Parse(bspec)
			if err != nil {
				return nil, err
			}
			res, built, err := experiment.Evaluate(ctx, experiment.Windows(test), list, d, eval.Config{Workers: cfg.Workers, Events: events.Prefix(sc.Events, sc.Label)})
			if err != nil {
				return nil, err
			}
			if err := results.SaveResult(sc.Dir, res); err != nil {
				return nil, err
			}
			// the fixed orders (the ones just built) on the validation
			// windows, to select the best
			var mk []predict.Predictor
			for _, b := range built {
				if b.Spec.Kind == "markov" {
					mk = append(mk, b.Predictor)
				}
			}
			if len(mk) == 0 {
				return []string{results.ResultFile}, nil
			}
			vo, err := evalValidation(ctx, cfg, sc, mk)
			return append([]string{results.ResultFile}, vo...), err
		},
	}
}

// named gives a trained model the study's label as its name.
type named struct {
	*transformer.Model
	name string
}

func (n named) Name() string { return n.name }

// evalModelStage evaluates replicate r of model m beside Bayes and CTW.
func evalModelStage(cfg study.Config, m study.Model, r int, opts Options) pipeline.Stage {
	return pipeline.Stage{
		Name:   results.EvalStageName(m, r),
		Inputs: map[string]any{"defaults": defaults(cfg), "label": results.RepLabel(m, r), "val_windows": ValWindows},
		Deps:   []string{results.StageTestData, results.TrainStageName(m, r), results.StageTrainData},
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
			if err != nil {
				return nil, err
			}
			model, err := transformer.LoadSafetensorsOn(opts.backend(), filepath.Join(sc.Deps[results.TrainStageName(m, r)].Dir, results.ModelFile))
			if err != nil {
				return nil, err
			}
			p := named{model, results.RepLabel(m, r)}
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
func evalWithRefs(ctx context.Context, cfg study.Config, sc *pipeline.StageContext, ws [][]byte, ps ...predict.Predictor) ([]string, error) {
	built, err := methods.Build(methods.MustParse(refSpec), defaults(cfg))
	if err != nil {
		return nil, err
	}
	var preds []predict.Predictor
	for _, b := range built {
		preds = append(preds, b.Predictor)
	}
	res, err := eval.Evaluate(ctx, ws, cfg.A, append(preds, ps...), eval.Config{Workers: cfg.Workers, Events: events.Prefix(sc.Events, sc.Label), Reference: preds[0].Name()})
	if err != nil {
		return nil, err
	}
	return []string{results.ResultFile}, results.SaveResult(sc.Dir, res)
}
