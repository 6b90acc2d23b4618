package report

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/pipeline"
	"github.com/vomc/vomc/reproduce/figures"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/synth"
)

// fig8Section is the report's Fig. 8 finding and image.
func fig8Section(cfg study.Config, mg *results.Merged, deps map[string]*pipeline.Done) (Finding, []string, string) {
	f := Finding{Claim: "“TF 0-2” (a canonical two-layer transformer) performs close to “TF 2-0” (the two constructed layers followed by a trained FF layer and read-out) " +
		"and to “TF 2-0 w/ all counts”, which almost match each other; removing counting information (“w/o counts”, “total counts only”) degrades performance. " +
		"So the second layer's statistics, with an FF layer that recovers the counts, explain why two layers suffice."}
	if _, ok := deps[results.StageSynth]; !ok {
		return f, nil, "Not produced: no synth_variants are configured."
	}
	res := mg.Res
	// The finding is about the first configured encoding (the paper's,
	// unless synth_encodings leaves it out), replicate 0 for the losses.
	enc0, _ := synth.ParseEncoding(cfg.Encodings()[0])
	get := func(v synth.Variant) *eval.MethodResult { return res.Method(results.SynthLabel(v, enc0)) }
	var parts []string
	if m, ok := figures.TwoLayer(cfg); ok {
		if r := res.Method(m.Label()); r != nil {
			parts = append(parts, fmt.Sprintf("TF 0-2 = %s %s", r.Name, excessSH(r)))
		}
	}
	for _, v := range []synth.Variant{synth.TF20, synth.WithAllCounts, synth.TotalCountsOnly, synth.WithoutCounts} {
		if r := get(v); r != nil {
			parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		}
	}
	f.Found = "Second-half loss above " + results.RefShort(mg.Res) + " (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	if enc0 != synth.Paper {
		f.Found = "Under the " + enc0 + " encoding: " + f.Found
	}
	if tf20, all := get(synth.TF20), get(synth.WithAllCounts); tf20 != nil && all != nil {
		f.Found += fmt.Sprintf(" TF 2-0 and TF 2-0 w/ all counts differ by %.3f nats.", math.Abs(tf20.ExcessSecondHalf.Mean-all.ExcessSecondHalf.Mean))
	}
	var gaps []results.SynthGap
	if results.ReadJSON(deps[results.StageSynth].Dir, results.GapsFile, &gaps) != nil {
		gaps = nil
	}
	fig8Checks(cfg, mg, enc0, gaps, &f)
	f.settleChecked()
	if len(gaps) > 0 {
		f.Found += " " + gapSentence(gaps)
	}
	if d, ok := deps[results.StageFigures]; ok {
		var files []string
		for _, enc := range cfg.Encodings() {
			files = append(files, filepath.Join(d.Dir, figures.Fig8FileFor(enc)))
		}
		return f, files, ""
	}
	return f, nil, ""
}

// GapTolerance is the largest |TF 2-0 − TF 2-0 w/ all counts| (nats per
// symbol over the second half) that the report calls "almost equal", and
// the tolerance of "TF 0-2 performs close to TF 2-0".
const GapTolerance = 0.005

// fig8Checks adds Fig. 8's checks to f, each decided on every TF 2-0
// training seed r (the variants' replicate r under encoding enc0, the
// two-layer transformer's replicate r where it has one) and combined by
// combineSeeds:
//   - TF 2-0 ≈ TF 2-0 w/ all counts: the paired gap of seed r from gaps
//     (gapVerdict), or, without it, the interval of the difference
//     (equivalent), at ±GapTolerance;
//   - removing counts degrades: "total counts only" and "w/o counts" each
//     worse than "w/ all counts" (worse);
//   - TF 0-2 ≈ TF 2-0 at ±GapTolerance (equivalent).
func fig8Checks(cfg study.Config, mg *results.Merged, enc0 string, gaps []results.SynthGap, f *Finding) {
	S := cfg.NumSynthSeeds()
	tf02, hasTF02 := figures.TwoLayer(cfg)
	type check struct {
		claim, numbers string
		per            []string
	}
	var cs []*check
	at := map[string]*check{}
	vote := func(r int, claim string, v verdict, numbers string) {
		c := at[claim]
		if c == nil { // its first seed (seeds come in order): its numbers
			c = &check{claim: claim, per: make([]string, S), numbers: numbers}
			if r > 0 {
				c.numbers = fmt.Sprintf("seed %d: %s", r, numbers)
			}
			for i := range c.per {
				c.per[i] = noVote
			}
			at[claim] = c
			cs = append(cs, c)
		}
		c.per[r] = v.String()
	}
	match := fmt.Sprintf("TF 2-0 and TF 2-0 w/ all counts almost match (their second-half losses within ±%g nats).", GapTolerance)
	for r := range S {
		get := func(v synth.Variant) *eval.MethodResult {
			return mg.Res.Method(results.SynthRepLabel(results.SynthLabel(v, enc0), r))
		}
		tf20, all := get(synth.TF20), get(synth.WithAllCounts)
		decided := false
		for _, g := range gaps {
			if g.Encoding == enc0 && g.Replicate == r {
				m, half, v, text := gapVerdict(g)
				vote(r, match, v, fmt.Sprintf("paired gap TF 2-0 − w/ all counts %+.4f ± %.4f: %s", m, half, text))
				decided = true
			}
		}
		if !decided && tf20 != nil && all != nil {
			t := equivalent(tf20, all, GapTolerance)
			vote(r, match, t.verdict(), t.Text)
		}
		for _, less := range []synth.Variant{synth.TotalCountsOnly, synth.WithoutCounts} {
			if x := get(less); x != nil && all != nil {
				t := worse(x, all)
				claim := fmt.Sprintf("Removing counting information degrades performance: %s is worse than %s.",
					results.SynthLabel(less, enc0), results.SynthLabel(synth.WithAllCounts, enc0))
				vote(r, claim, t.verdict(), t.Text)
			}
		}
		if hasTF02 && r < cfg.NumSeeds() && tf20 != nil {
			if m := mg.Res.Method(results.RepLabel(tf02, r)); m != nil {
				t := equivalent(m, tf20, GapTolerance)
				vote(r, fmt.Sprintf("TF 0-2 (%s) performs close to TF 2-0 (second-half losses within ±%g nats).", tf02.Label(), GapTolerance), t.verdict(), t.Text)
			}
		}
	}
	for _, c := range cs {
		numbers := c.numbers
		if S > 1 {
			numbers += " (" + bySeed(c.per) + ")"
		}
		f.Checks = append(f.Checks, Check{Claim: c.claim, Verdict: combineSeeds(c.per), Numbers: numbers})
	}
}

// gapVerdict says whether "TF 2-0 ≈ TF 2-0 w/ all counts" holds for one
// paired second-half gap, as an equivalence test at tolerance GapTolerance
// on its 95% interval (within): it holds when the whole interval lies
// within ±GapTolerance, does not hold when the whole interval lies outside
// (beyond +GapTolerance or below −GapTolerance), and otherwise, or with a
// single window, the data cannot decide.
func gapVerdict(g results.SynthGap) (m, half float64, v verdict, text string) {
	m, half = float64(g.SecondHalf.Mean), float64(g.SecondHalf.Hi-g.SecondHalf.Lo)/2 // NaN with one window
	if math.IsNaN(half) {
		return m, half, undecided, "cannot be decided (one window)"
	}
	switch v = within(m-half, m+half, GapTolerance); v {
	case holds:
		return m, half, v, fmt.Sprintf("holds (the interval lies within ±%g nats)", GapTolerance)
	case fails:
		return m, half, v, fmt.Sprintf("does not hold (the interval lies beyond ±%g nats)", GapTolerance)
	}
	return m, half, v, fmt.Sprintf("inconclusive (the interval reaches across ±%g nats)", GapTolerance)
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
func gapSentence(gaps []results.SynthGap) string {
	var order []string
	by := map[string][]results.SynthGap{}
	for _, g := range gaps {
		if math.IsNaN(float64(g.SecondHalf.Mean)) {
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
			parts = append(parts, fmt.Sprintf("%s encoding: %+.4f ± %.4f (window %+.4f), %s", enc, m, half, float64(gs[0].Window.Mean), text))
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
		a := results.AcrossSeeds(means)
		parts = append(parts, fmt.Sprintf("%s encoding: %s; it holds in %d of %d seeds and fails in %d; across seeds %+.4f ± %.4f", enc, strings.Join(per, ", "), n, len(gs), bad, a.Mean, a.HalfWidth()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "The paired gap TF 2-0 − TF 2-0 w/ all counts over the second half (nats per symbol, 95% CI across test windows; " +
		"“TF 2-0 ≈ TF 2-0 w/ all counts” holds when the whole interval lies within ±" + fmt.Sprint(GapTolerance) + " nats, fails when it lies wholly beyond, and is inconclusive when it reaches across the tolerance), " +
		"under each encoding of the position and the counts (under log and linear every variant sees the same representation of both; under the paper's, TF 2-0 decodes its position from cos/sin while the counts enter as ln(1+c)): " +
		strings.Join(parts, "; ") + "."
}
