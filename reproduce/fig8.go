package reproduce

import (
	"context"
	"fmt"
	"math"
	"path/filepath"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/experiment"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/synth"
	"github.com/vomc/vomc/transformer"
)

// Fig8File is the Fig. 8 figure (written by the figures stage).
const Fig8File = "fig8_synthetic.png"

// synthRecord is what a synthetic-model stage records.
type synthRecord struct {
	Variant string
	Label   string
	Params  int
	Steps   int
	Seconds float64
	BestVal float64 // -1 without validation
	Note    string
	// EarlierSeconds is as TrainInfo's: the training time of the
	// invocations before the one that completed the stage (0, not
	// written, without a resumption).
	EarlierSeconds float64 `json:",omitempty"`
}

// synthLabel is the method name of the model that serves variant v under
// encoding enc (effectiveEncoding): the paper's label when that is
// synth.Paper, "LABEL [enc]" otherwise.
func synthLabel(v synth.Variant, enc string) string {
	enc = effectiveEncoding(v, enc)
	if enc == synth.Paper || enc == "" {
		return synth.Label(v)
	}
	return synth.Label(v) + " [" + enc + "]"
}

// effectiveEncoding is the encoding whose model serves variant v under
// enc. Models whose features do not change are not trained twice: "w/o
// counts" sees neither a position nor a count, so every encoding gives the
// paper's features; under synth.Log the count variants see exactly the
// paper's features (the counts as ln(1+c) either way; only TF 2-0's
// position changes).
func effectiveEncoding(v synth.Variant, enc string) string {
	if v == synth.WithoutCounts || (enc == synth.Log && v != synth.TF20) {
		return synth.Paper
	}
	return enc
}

// synthRepLabel is the method name of replicate r of the TF 2-0 model
// named base: base for r = 0, "base [seed r]" otherwise.
func synthRepLabel(base string, r int) string {
	if r == 0 {
		return base
	}
	return fmt.Sprintf("%s [seed %d]", base, r)
}

// synthVariantStage trains replicate r of variant short under encoding enc
// (seed cfg.ReplicateSeed(r); replicate 0 keeps the stage name and hash of
// a run without replicates).
func synthVariantStage(cfg Config, short, enc string, r int, opts Options) (pipeline.Stage, error) {
	v, err := synth.ParseVariant(short)
	if err != nil {
		return pipeline.Stage{}, err
	}
	enc = effectiveEncoding(v, enc)
	sc := synth.Config{Variant: v, A: cfg.A, D: cfg.MaxDepth(), Context: cfg.N}
	name := "synth-" + synth.ShortName(v)
	if enc != synth.Paper {
		// The paper's encoding stays the zero value, so that its stages
		// keep the hashes they had before the encodings.
		sc.Encoding = enc
		name += "-" + enc
	}
	name += repSuffix(r)
	label := synthRepLabel(synthLabel(v, enc), r)
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
		Deps:      []string{StageTrainData},
		Resumable: true,
		Run: func(ctx context.Context, stc *pipeline.StageContext) ([]string, error) {
			m, secs, earlier, err := trainSynth(ctx, cfg, stc, sc, tc, name, opts)
			if err != nil {
				return nil, err
			}
			rec := synthRecord{Variant: synth.ShortName(v), Label: label, Params: m.Config.NumParams(), Steps: m.Info.Steps,
				Seconds: secs, BestVal: m.Info.BestVal, EarlierSeconds: earlier}
			if math.IsNaN(rec.BestVal) || math.IsInf(rec.BestVal, 0) {
				rec.BestVal = -1
			}
			rec.Note = fmt.Sprintf("%d steps, %d features", rec.Steps, m.Config.Features())
			if enc != synth.Paper {
				rec.Note += ", encoding " + enc
			}
			return []string{modelFile}, writeJSON(stc.Dir, "synth.json", rec)
		},
	}, nil
}

// trainSynth trains the synth model of architecture sc with tc in the
// stage's directory through the run driver (trainJob, on the Go engine's
// backend whatever the study's engine). It returns the model (with the
// best parameters, saved as modelFile), the training time in seconds over
// all resumptions and that of the invocations before this one (0 without
// a resumption).
func trainSynth(ctx context.Context, cfg Config, stc *pipeline.StageContext, sc synth.Config, tc transformer.TrainConfig, name string, o Options) (m *synth.Model, secs, earlier float64, err error) {
	gm := synth.RunModel(sc)
	gm.Opened = func(r *synth.Run) { m = r.Trainer.Model }
	s, err := o.Engine.Train(ctx, trainJob(cfg, stc, o, name, gm, tc))
	if err != nil {
		return nil, 0, 0, stageError(err)
	}
	return m, s.Elapsed.Seconds(), s.Earlier.Seconds(), nil
}

// GapsFile holds, per encoding, the paired gap "TF 2-0 − TF 2-0 w/ all
// counts" (written by the fig8-synth stage).
const GapsFile = "gaps.json"

// synthGap is the paired difference of TF 2-0 and TF 2-0 w/ all counts
// under one encoding: mean loss differences over the window and over the
// second half, nats per symbol, with 95% intervals across test windows.
type synthGap struct {
	Encoding   string
	Replicate  int
	TF20       string
	AllCounts  string
	Window     jsonInterval
	SecondHalf jsonInterval
}

// synthStages are the Fig. 8 stages: one per variant and encoding (see
// effectiveEncoding), then the evaluation of all of them beside CTW
// (StageSynth), which also measures the paired gap TF 2-0 − w/ all counts
// under every encoding.
func synthStages(cfg Config, opts Options) ([]pipeline.Stage, error) {
	if len(cfg.SynthVariants) == 0 {
		return nil, nil
	}
	var out []pipeline.Stage
	deps := []string{StageTestData}
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
	if cfg.normalized().SynthEncodings != nil {
		inputs["encodings"] = cfg.Encodings()
	}
	out = append(out, pipeline.Stage{
		Name:   StageSynth,
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
func evalSynth(ctx context.Context, cfg Config, opts Options, sc *pipeline.StageContext, models []string) ([]string, error) {
	test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
	if err != nil {
		return nil, err
	}
	var ps []predict.Predictor
	var recs []synthRecord
	byLabel := map[string]predict.Predictor{}
	for _, d := range models {
		m, err := synth.LoadOn(opts.backend(), filepath.Join(sc.Deps[d].Dir, modelFile))
		if err != nil {
			return nil, err
		}
		var r synthRecord
		if err := readJSON(sc.Deps[d].Dir, "synth.json", &r); err != nil {
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
	if err := writeJSON(sc.Dir, GapsFile, gaps); err != nil {
		return nil, err
	}
	return append(outs, GapsFile), writeJSON(sc.Dir, "synth.json", recs)
}

// synthGaps measures, under every encoding and for every replicate, the
// paired gap TF 2-0 − TF 2-0 w/ all counts on the windows ws (the models
// by label; a pair with a model missing is left out).
func synthGaps(ctx context.Context, cfg Config, ws [][]byte, byLabel map[string]predict.Predictor) ([]synthGap, error) {
	var gaps []synthGap
	for _, enc := range cfg.Encodings() {
		enc, _ := synth.ParseEncoding(enc)
		for r := range cfg.NumSynthSeeds() {
			tl := synthRepLabel(synthLabel(synth.TF20, enc), r)
			al := synthRepLabel(synthLabel(synth.WithAllCounts, enc), r)
			tf, all := byLabel[tl], byLabel[al]
			if tf == nil || all == nil {
				continue
			}
			res, err := eval.Evaluate(ctx, ws, cfg.A, []predict.Predictor{all, tf}, eval.Config{Workers: cfg.Workers, Reference: al})
			if err != nil {
				return nil, err
			}
			m := res.Method(tl)
			gaps = append(gaps, synthGap{Encoding: enc, Replicate: r, TF20: tl, AllCounts: al,
				Window: toJSONInterval(m.ExcessWindow), SecondHalf: toJSONInterval(m.ExcessSecondHalf)})
		}
	}
	return gaps, nil
}

// twoLayer is the canonical two-layer transformer of Fig. 8 ("TF 0-2"):
// the first full two-layer model of Fig3Models.
func twoLayer(cfg Config) (Model, bool) {
	for _, s := range cfg.Fig3Models {
		if m, err := ParseModel(s); err == nil && len(m.Heads) == 2 && m.FF && m.LN && !m.Sin {
			return m, true
		}
	}
	return Model{}, false
}

// fig8File is the Fig. 8 figure of encoding enc: Fig8File for the paper's,
// "fig8_synthetic_<enc>.png" otherwise.
func fig8File(enc string) string {
	if enc == synth.Paper || enc == "" {
		return Fig8File
	}
	return "fig8_synthetic_" + enc + ".png"
}

// fig8Names are the methods drawn in Fig. 8 under encoding enc.
func fig8Names(cfg Config, res *eval.Result, enc string) []string {
	names := []string{res.Ref().Name}
	if m, ok := twoLayer(cfg); ok && res.Method(m.Label()) != nil {
		names = append(names, m.Label())
	}
	for _, v := range cfg.SynthVariants {
		if p, err := synth.ParseVariant(v); err == nil {
			if l := synthLabel(p, enc); res.Method(l) != nil {
				names = append(names, l)
			}
		}
	}
	return names
}
