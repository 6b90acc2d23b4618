package reproduce

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/jsonfloat"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
)

// synthVariantStage trains replicate r of variant short under encoding enc
// (seed cfg.ReplicateSeed(r); replicate 0 keeps the stage name and hash of
// a run without replicates).
func synthVariantStage(cfg study.Config, short, enc string, r int, opts Options) (pipeline.Stage, error) {
	v, err := synth.ParseVariant(short)
	if err != nil {
		return pipeline.Stage{}, err
	}
	enc = results.EffectiveEncoding(v, enc)
	sc := synth.Config{Variant: v, A: cfg.A, D: cfg.MaxDepth(), Context: cfg.N}
	name := "synth-" + synth.ShortName(v)
	if enc != synth.Paper {
		// The paper's encoding stays the zero value, so that its stages
		// keep the hashes they had before the encodings.
		sc.Encoding = enc
		name += "-" + enc
	}
	name += results.RepSuffix(r)
	label := results.SynthRepLabel(results.SynthLabel(v, enc), r)
	tc := synth.DefaultTrainConfig()
	tc.BatchSize, tc.LR, tc.Seed = cfg.Batch, cfg.LR, cfg.ReplicateSeed(r)
	tc.MaxSteps = cfg.SynthSteps
	if tc.MaxSteps == 0 {
		tc.MaxSteps = cfg.MaxSteps
	}
	tc.Epochs = cfg.Epochs
	tc.WarmupSteps = min(cfg.Warmup, max(tc.MaxSteps/10, 1))
	return pipeline.Stage{
		Name:      name,
		Kind:      pipeline.KindTrain,
		Inputs:    map[string]any{"model": sc, "train": tc, "val_frac": cfg.ValFrac},
		Deps:      []string{results.StageTrainData},
		Resumable: true,
		Run: func(ctx context.Context, stc *pipeline.StageContext) ([]string, error) {
			m, secs, earlier, err := trainSynth(ctx, cfg, stc, sc, tc, name, opts)
			if err != nil {
				return nil, err
			}
			rec := results.SynthRecord{Variant: synth.ShortName(v), Label: label, Params: m.Config.NumParams(), Steps: m.Info.Steps,
				Seconds: secs, BestVal: jsonfloat.Float(m.Info.BestVal), EarlierSeconds: earlier}
			rec.Note = fmt.Sprintf("%d steps, %d features", rec.Steps, m.Config.Features())
			if enc != synth.Paper {
				rec.Note += ", encoding " + enc
			}
			return []string{results.ModelFile}, results.WriteJSON(stc.Dir, "synth.json", rec)
		},
	}, nil
}

// trainSynth trains the synth model of architecture sc with tc in the
// stage's directory through the run driver (trainJob, on the Go engine's
// backend whatever the study's engine). It returns the model (with the
// best parameters, saved as ModelFile), the training time in seconds over
// all resumptions and that of the invocations before this one (0 without
// a resumption).
func trainSynth(ctx context.Context, cfg study.Config, stc *pipeline.StageContext, sc synth.Config, tc transformer.TrainConfig, name string, o Options) (m *synth.Model, secs, earlier float64, err error) {
	gm := synth.RunModel(sc)
	gm.Opened = func(r *synth.Run) { m = r.Trainer.Model }
	s, err := o.Engine.Train(ctx, trainJob(cfg, stc, o, name, gm, tc))
	if err != nil {
		return nil, 0, 0, stageError(err)
	}
	return m, s.Elapsed.Seconds(), s.Earlier.Seconds(), nil
}

// synthStages are the Fig. 8 stages: one per variant and encoding (see
// EffectiveEncoding), then the evaluation of all of them beside CTW
// (StageSynth), which also measures the paired gap TF 2-0 − w/ all counts
// under every encoding.
func synthStages(cfg study.Config, opts Options) ([]pipeline.Stage, error) {
	if len(cfg.SynthVariants) == 0 {
		return nil, nil
	}
	var out []pipeline.Stage
	deps := []string{results.StageTestData}
	seen := map[string]bool{}
	for _, enc := range cfg.Encodings() {
		enc, err := synth.ParseEncoding(enc)
		if err != nil {
			return nil, err
		}
		for r := range cfg.NumSynthSeeds() {
			for _, s := range cfg.SynthVariants {
				st, err := synthVariantStage(cfg, s, enc, r, opts)
				if err != nil {
					return nil, err
				}
				if seen[st.Name] {
					continue
				}
				seen[st.Name] = true
				out = append(out, st)
				deps = append(deps, st.Name)
			}
		}
	}
	inputs := map[string]any{"defaults": defaults(cfg)}
	if cfg.Normalized().SynthEncodings != nil {
		inputs["encodings"] = cfg.Encodings()
	}
	out = append(out, pipeline.Stage{
		Name:   results.StageSynth,
		Inputs: inputs,
		Deps:   deps,
		Run: func(ctx context.Context, sc *pipeline.StageContext) ([]string, error) {
			return evalSynth(ctx, cfg, opts, sc, deps[1:])
		},
	})
	return out, nil
}

// evalSynth is the fig8-synth stage: the models of the stages named
// models evaluated beside CTW on the test set, and the paired gaps
// (GapsFile, synthGaps).
func evalSynth(ctx context.Context, cfg study.Config, opts Options, sc *pipeline.StageContext, models []string) ([]string, error) {
	test, err := dataset.Read(filepath.Join(sc.Deps[results.StageTestData].Dir, results.DataDir))
	if err != nil {
		return nil, err
	}
	var ps []predict.Predictor
	var recs []results.SynthRecord
	byLabel := map[string]predict.Predictor{}
	for _, d := range models {
		m, err := synth.LoadOn(opts.backend(), filepath.Join(sc.Deps[d].Dir, results.ModelFile))
		if err != nil {
			return nil, err
		}
		var r results.SynthRecord
		if err := results.ReadJSON(sc.Deps[d].Dir, "synth.json", &r); err != nil {
			return nil, err
		}
		m.DisplayName = r.Label
		ps = append(ps, m)
		recs = append(recs, r)
		byLabel[r.Label] = m
	}
	ws := experiment.Windows(test)
	outs, err := evalWithRefs(ctx, cfg, sc, ws, ps...)
	if err != nil {
		return nil, err
	}
	gaps, err := synthGaps(ctx, cfg, ws, byLabel)
	if err != nil {
		return nil, err
	}
	if err := results.WriteJSON(sc.Dir, results.GapsFile, gaps); err != nil {
		return nil, err
	}
	return append(outs, results.GapsFile), results.WriteJSON(sc.Dir, "synth.json", recs)
}

// synthGaps measures, under every encoding and for every replicate, the
// paired gap TF 2-0 − TF 2-0 w/ all counts on the windows ws (the models
// by label; a pair with a model missing is left out).
func synthGaps(ctx context.Context, cfg study.Config, ws [][]byte, byLabel map[string]predict.Predictor) ([]results.SynthGap, error) {
	var gaps []results.SynthGap
	for _, enc := range cfg.Encodings() {
		enc, _ := synth.ParseEncoding(enc)
		for r := range cfg.NumSynthSeeds() {
			tl := results.SynthRepLabel(results.SynthLabel(synth.TF20, enc), r)
			al := results.SynthRepLabel(results.SynthLabel(synth.WithAllCounts, enc), r)
			tf, all := byLabel[tl], byLabel[al]
			if tf == nil || all == nil {
				continue
			}
			res, err := eval.Evaluate(ctx, ws, cfg.A, []predict.Predictor{all, tf}, eval.Config{Workers: cfg.Workers, Reference: al})
			if err != nil {
				return nil, err
			}
			m := res.Method(tl)
			gaps = append(gaps, results.SynthGap{Encoding: enc, Replicate: r, TF20: tl, AllCounts: al,
				Window: results.ToJSONInterval(m.ExcessWindow), SecondHalf: results.ToJSONInterval(m.ExcessSecondHalf)})
		}
	}
	return gaps, nil
}
