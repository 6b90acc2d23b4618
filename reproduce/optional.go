package reproduce

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/vomc/vomc/dataset"
	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/internal/progress"
	"github.com/vomc/vomc/internal/study"
	"github.com/vomc/vomc/predict"
	"github.com/vomc/vomc/synth"
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
}

func synthVariantStage(cfg Config, short string, opts Options) (Stage, error) {
	v, err := synth.ParseVariant(short)
	if err != nil {
		return Stage{}, err
	}
	sc := synth.Config{Variant: v, A: cfg.A, D: cfg.MaxDepth(), Context: cfg.N}
	tc := synth.DefaultTrainConfig()
	tc.BatchSize, tc.LR, tc.Seed = cfg.Batch, cfg.LR, cfg.Seed
	tc.MaxSteps = cfg.SynthSteps
	if tc.MaxSteps == 0 {
		tc.MaxSteps = cfg.MaxSteps
	}
	tc.Epochs = cfg.Epochs
	tc.WarmupSteps = min(cfg.Warmup, max(tc.MaxSteps/10, 1))
	name := "synth-" + synth.ShortName(v)
	return Stage{
		Name:   name,
		Kind:   KindTrain,
		Inputs: map[string]any{"model": sc, "train": tc, "val_frac": cfg.ValFrac},
		Deps:   []string{StageTrainData},
		Run: func(ctx context.Context, stc *StageContext) ([]string, error) {
			train, val, err := trainSplit(cfg, stc)
			if err != nil {
				return nil, err
			}
			bar := progress.New(stc.Log, stc.Label, tc.MaxSteps).DelayStart(2 * time.Second)
			start := time.Now()
			m, err := synth.Train(ctx, sc, train, val, tc, func(step, total int, loss float64) {
				bar.SetExtra(fmt.Sprintf("step %d/%d loss %.4f", step, total, loss))
				bar.Update(step, total)
				if opts.OnStep != nil {
					opts.OnStep(name, step)
				}
			})
			bar.Done()
			if err != nil {
				return nil, err
			}
			if err := m.Save(filepath.Join(stc.Dir, modelFile)); err != nil {
				return nil, err
			}
			rec := synthRecord{Variant: synth.ShortName(v), Label: m.Name(), Params: m.Config.NumParams(), Steps: m.Info.Steps,
				Seconds: time.Since(start).Seconds(), BestVal: m.Info.BestVal}
			if math.IsNaN(rec.BestVal) || math.IsInf(rec.BestVal, 0) {
				rec.BestVal = -1
			}
			rec.Note = fmt.Sprintf("%d steps, %d features", rec.Steps, m.Config.Features())
			return []string{modelFile}, writeJSON(stc.Dir, "synth.json", rec)
		},
	}, nil
}

// synthStages are the Fig. 8 stages: one per variant, then the evaluation
// of all of them beside CTW (StageSynth).
func synthStages(cfg Config, opts Options) ([]Stage, error) {
	if len(cfg.SynthVariants) == 0 {
		return nil, nil
	}
	var out []Stage
	deps := []string{StageTestData}
	for _, s := range cfg.SynthVariants {
		st, err := synthVariantStage(cfg, s, opts)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
		deps = append(deps, st.Name)
	}
	out = append(out, Stage{
		Name:   StageSynth,
		Inputs: map[string]any{"defaults": defaults(cfg)},
		Deps:   deps,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			var ps []predict.Predictor
			var recs []synthRecord
			for _, d := range deps[1:] {
				m, err := synth.Load(filepath.Join(sc.Deps[d].Dir, modelFile))
				if err != nil {
					return nil, err
				}
				var r synthRecord
				if err := readJSON(sc.Deps[d].Dir, "synth.json", &r); err != nil {
					return nil, err
				}
				ps = append(ps, m)
				recs = append(recs, r)
			}
			outs, err := evalWithCTW(ctx, cfg, sc, study.Windows(test), ps...)
			if err != nil {
				return nil, err
			}
			return outs, writeJSON(sc.Dir, "synth.json", recs)
		},
	})
	return out, nil
}

// synthInfo reads the synthetic models' records by label.
func synthInfo(deps map[string]*Done) map[string]synthRecord {
	out := map[string]synthRecord{}
	if d, ok := deps[StageSynth]; ok {
		var rs []synthRecord
		if readJSON(d.Dir, "synth.json", &rs) == nil {
			for _, r := range rs {
				out[r.Label] = r
			}
		}
	}
	return out
}

// twoLayer is the canonical two-layer transformer of Fig. 8 ("TF 0-2"):
// the first full two-layer model of Fig3Models.
func twoLayer(cfg Config) (Model, bool) {
	for _, s := range cfg.Fig3Models {
		if m, err := ParseModel(s); err == nil && len(m.Heads) == 2 && m.FF && m.LN {
			return m, true
		}
	}
	return Model{}, false
}

// fig8Names are the methods drawn in Fig. 8.
func fig8Names(cfg Config, res *eval.Result, deps map[string]*Done) []string {
	names := []string{res.Ref().Name}
	if m, ok := twoLayer(cfg); ok && res.Method(m.Label()) != nil {
		names = append(names, m.Label())
	}
	for _, v := range cfg.SynthVariants {
		if p, err := synth.ParseVariant(v); err == nil && res.Method(synth.Label(p)) != nil {
			names = append(names, synth.Label(p))
		}
	}
	return names
}

// fig8Section is the report's Fig. 8 finding and image.
func fig8Section(cfg Config, mg *merged, deps map[string]*Done) (Finding, []string, string) {
	f := Finding{Claim: "“TF 0-2” (a canonical two-layer transformer) performs close to “TF 2-0” (the two constructed layers followed by a trained FF layer and read-out) " +
		"and to “TF 2-0 w/ all counts”, which almost match each other; removing counting information (“w/o counts”, “total counts only”) degrades performance. " +
		"So the second layer's statistics, with an FF layer that recovers the counts, explain why two layers suffice."}
	if _, ok := deps[StageSynth]; !ok {
		return f, nil, "Not produced: no synth_variants are configured."
	}
	res := mg.Res
	get := func(v synth.Variant) *eval.MethodResult { return res.Method(synth.Label(v)) }
	var parts []string
	if m, ok := twoLayer(cfg); ok {
		if r := res.Method(m.Label()); r != nil {
			parts = append(parts, fmt.Sprintf("TF 0-2 = %s %s", r.Name, excessSH(r)))
		}
	}
	for _, v := range []synth.Variant{synth.TF20, synth.WithAllCounts, synth.TotalCountsOnly, synth.WithoutCounts} {
		if r := get(v); r != nil {
			parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		}
	}
	f.Found = "Second-half loss above CTW (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	var diffs []string
	tf20, all, tot, none := get(synth.TF20), get(synth.WithAllCounts), get(synth.TotalCountsOnly), get(synth.WithoutCounts)
	if tf20 != nil && all != nil {
		d := math.Abs(tf20.ExcessSecondHalf.Mean - all.ExcessSecondHalf.Mean)
		f.Found += fmt.Sprintf(" TF 2-0 and TF 2-0 w/ all counts differ by %.3f nats.", d)
		if d > 0.02 {
			diffs = append(diffs, "TF 2-0 and TF 2-0 w/ all counts do not almost match")
		}
	}
	best := all
	if best == nil || (tf20 != nil && tf20.ExcessSecondHalf.Mean < best.ExcessSecondHalf.Mean) {
		best = tf20
	}
	for _, r := range []*eval.MethodResult{tot, none} {
		if r != nil && best != nil && r.ExcessSecondHalf.Mean <= best.ExcessSecondHalf.Mean {
			diffs = append(diffs, fmt.Sprintf("%s is not worse than %s", r.Name, best.Name))
		}
	}
	if len(diffs) > 0 {
		f.Found += " This differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Agrees = true
		f.Found += " The ordering agrees with the paper: less counting information, higher loss."
	}
	if d, ok := deps[StageFigures]; ok {
		return f, []string{filepath.Join(d.Dir, Fig8File)}, ""
	}
	return f, nil, ""
}
