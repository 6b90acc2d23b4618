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
func synthVariantStage(cfg Config, short, enc string, r int, opts Options) (Stage, error) {
	v, err := synth.ParseVariant(short)
	if err != nil {
		return Stage{}, err
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
			rec := synthRecord{Variant: synth.ShortName(v), Label: label, Params: m.Config.NumParams(), Steps: m.Info.Steps,
				Seconds: time.Since(start).Seconds(), BestVal: m.Info.BestVal}
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
func synthStages(cfg Config, opts Options) ([]Stage, error) {
	if len(cfg.SynthVariants) == 0 {
		return nil, nil
	}
	var out []Stage
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
	out = append(out, Stage{
		Name:   StageSynth,
		Inputs: inputs,
		Deps:   deps,
		Run: func(ctx context.Context, sc *StageContext) ([]string, error) {
			test, err := dataset.Read(filepath.Join(sc.Deps[StageTestData].Dir, dataDir))
			if err != nil {
				return nil, err
			}
			var ps []predict.Predictor
			var recs []synthRecord
			byLabel := map[string]predict.Predictor{}
			for _, d := range deps[1:] {
				m, err := synth.Load(filepath.Join(sc.Deps[d].Dir, modelFile))
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
			ws := study.Windows(test)
			outs, err := evalWithCTW(ctx, cfg, sc, ws, ps...)
			if err != nil {
				return nil, err
			}
			{
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
				if err := writeJSON(sc.Dir, GapsFile, gaps); err != nil {
					return nil, err
				}
				outs = append(outs, GapsFile)
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

// fig8Section is the report's Fig. 8 finding and image.
func fig8Section(cfg Config, mg *merged, deps map[string]*Done) (Finding, []string, string) {
	f := Finding{Claim: "“TF 0-2” (a canonical two-layer transformer) performs close to “TF 2-0” (the two constructed layers followed by a trained FF layer and read-out) " +
		"and to “TF 2-0 w/ all counts”, which almost match each other; removing counting information (“w/o counts”, “total counts only”) degrades performance. " +
		"So the second layer's statistics, with an FF layer that recovers the counts, explain why two layers suffice."}
	if _, ok := deps[StageSynth]; !ok {
		return f, nil, "Not produced: no synth_variants are configured."
	}
	res := mg.Res
	// The finding is about the first configured encoding (the paper's,
	// unless synth_encodings leaves it out), replicate 0 for the losses.
	enc0, _ := synth.ParseEncoding(cfg.Encodings()[0])
	get := func(v synth.Variant) *eval.MethodResult { return res.Method(synthLabel(v, enc0)) }
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
	if enc0 != synth.Paper {
		f.Found = "Under the " + enc0 + " encoding: " + f.Found
	}
	var diffs []string
	tf20, all, tot, none := get(synth.TF20), get(synth.WithAllCounts), get(synth.TotalCountsOnly), get(synth.WithoutCounts)
	var gaps []synthGap
	if readJSON(deps[StageSynth].Dir, GapsFile, &gaps) != nil {
		gaps = nil
	}
	if tf20 != nil && all != nil {
		d := math.Abs(tf20.ExcessSecondHalf.Mean - all.ExcessSecondHalf.Mean)
		f.Found += fmt.Sprintf(" TF 2-0 and TF 2-0 w/ all counts differ by %.3f nats.", d)
		// Decided by the paired gaps of that encoding: the claim fails
		// when it fails (gapVerdict) in at least half of the seeds.
		n, bad := 0, 0
		for _, g := range gaps {
			if g.Encoding == enc0 {
				n++
				if _, _, v, _ := gapVerdict(g); v == fails {
					bad++
				}
			}
		}
		switch {
		case n > 0 && 2*bad >= n:
			diffs = append(diffs, fmt.Sprintf("TF 2-0 and TF 2-0 w/ all counts do not almost match (the paired gap fails the ±%g-nat equivalence in %d of %d seeds; below)", GapTolerance, bad, n))
		case n == 0 && d > GapTolerance:
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
	if len(gaps) > 0 {
		f.Found += " " + gapSentence(gaps)
	}
	if d, ok := deps[StageFigures]; ok {
		var files []string
		for _, enc := range cfg.Encodings() {
			files = append(files, filepath.Join(d.Dir, fig8File(enc)))
		}
		return f, files, ""
	}
	return f, nil, ""
}

// GapTolerance is the largest |TF 2-0 − TF 2-0 w/ all counts| (nats per
// symbol over the second half) that the report calls "almost equal" when
// the paired interval excludes zero.
const GapTolerance = 0.005

// gapVerdict says whether "TF 2-0 ≈ TF 2-0 w/ all counts" holds for one
// paired second-half gap, as an equivalence test at tolerance GapTolerance:
// it holds when the whole 95% interval lies within ±GapTolerance; it does
// not hold when the interval excludes 0 and is not within the tolerance;
// otherwise (the interval contains 0 but is wider than the tolerance, or
// there is a single window) the data cannot decide.
func gapVerdict(g synthGap) (m, half float64, v verdict, text string) {
	m, half = deref(g.SecondHalf.Mean), math.NaN()
	if g.SecondHalf.Lo != nil && g.SecondHalf.Hi != nil {
		half = (*g.SecondHalf.Hi - *g.SecondHalf.Lo) / 2
	}
	switch {
	case math.IsNaN(half):
		return m, half, undecided, "cannot be decided (one window)"
	case m-half >= -GapTolerance && m+half <= GapTolerance:
		return m, half, holds, fmt.Sprintf("holds (the interval lies within ±%g nats)", GapTolerance)
	case m-half <= 0 && m+half >= 0:
		return m, half, undecided, fmt.Sprintf("inconclusive (the interval contains 0 but is wider than ±%g nats)", GapTolerance)
	}
	return m, half, fails, "does not hold"
}

// verdict is the outcome of gapVerdict.
type verdict int

const (
	undecided verdict = iota
	holds
	fails
)

// gapSentence reports, per encoding, the paired gap TF 2-0 − TF 2-0 w/ all
// counts and whether "TF 2-0 ≈ TF 2-0 w/ all counts" holds (gapVerdict);
// with several training seeds, per seed and how many seeds it holds in,
// with the mean ± 95% t-interval across seeds.
func gapSentence(gaps []synthGap) string {
	var order []string
	by := map[string][]synthGap{}
	for _, g := range gaps {
		if g.SecondHalf.Mean == nil {
			continue
		}
		if _, ok := by[g.Encoding]; !ok {
			order = append(order, g.Encoding)
		}
		by[g.Encoding] = append(by[g.Encoding], g)
	}
	var parts []string
	for _, enc := range order {
		gs := by[enc]
		if len(gs) == 1 {
			m, half, _, text := gapVerdict(gs[0])
			parts = append(parts, fmt.Sprintf("%s encoding: %+.4f ± %.4f (window %+.4f), %s", enc, m, half, deref(gs[0].Window.Mean), text))
			continue
		}
		var per []string
		var means []float64
		n, bad := 0, 0
		for _, g := range gs {
			m, half, v, _ := gapVerdict(g)
			per = append(per, fmt.Sprintf("seed %d %+.4f ± %.4f", g.Replicate, m, half))
			means = append(means, m)
			switch v {
			case holds:
				n++
			case fails:
				bad++
			}
		}
		a := AcrossSeeds(means)
		parts = append(parts, fmt.Sprintf("%s encoding: %s; it holds in %d of %d seeds and fails in %d; across seeds %+.4f ± %.4f", enc, strings.Join(per, ", "), n, len(gs), bad, a.Mean, a.HalfWidth()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "The paired gap TF 2-0 − TF 2-0 w/ all counts over the second half (nats per symbol, 95% CI across test windows; " +
		"“TF 2-0 ≈ TF 2-0 w/ all counts” holds when the whole interval lies within ±" + fmt.Sprint(GapTolerance) + " nats, fails when it excludes 0 and is not within that, and is inconclusive otherwise), " +
		"under each encoding of the position and the counts (under log and linear every variant sees the same representation of both; under the paper's, TF 2-0 decodes its position from cos/sin while the counts enter as ln(1+c)): " +
		strings.Join(parts, "; ") + "."
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
