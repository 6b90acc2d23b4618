package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// spike is a position whose per-position excess over the reference stands
// out from its neighbourhood.
type spike struct {
	Pos          int     // 1-based position
	Excess, Half float64 // mean excess and 95% half-width at Pos (nats)
	Base         float64 // median mean excess of the 10 positions either side
	// Windows estimates how many windows carry the spike: if k of n
	// windows have excess e above Base and the rest none, the mean is
	// ke/n and the second moment ke²/n, so k ≈ n·μ²/(σ² + μ²) with μ the
	// spike's height above Base and σ the SD across windows at Pos. For
	// any distribution it is a lower bound on the windows with excess
	// above Base (Cauchy–Schwarz: μ² ≤ P(X ≠ 0)·E[X²]). A listed spike has
	// an interval clear of Base, which a few windows cannot give, so it is
	// at least about 4; a systematic effect gives hundreds.
	Windows float64
}

// spikes returns the positions whose excess interval lies more than
// minHeight nats above the median of their neighbourhood: isolated
// features of a per-position curve, with an estimate of how many windows
// cause each (Fig. 3's curves are means over the test windows, drawn
// with a moving average of width Smooth and 95% bands).
func spikes(m *eval.MethodResult, n int, minHeight float64) []spike {
	var out []spike
	for i, e := range m.Excess {
		var nb []float64
		for j := max(0, i-10); j <= min(len(m.Excess)-1, i+10); j++ {
			if j != i {
				nb = append(nb, m.Excess[j].Mean)
			}
		}
		if len(nb) == 0 {
			continue
		}
		sort.Float64s(nb)
		base := nb[len(nb)/2]
		if !(e.Lo > base+minHeight) {
			continue
		}
		mu := e.Mean - base
		out = append(out, spike{Pos: i + 1, Excess: e.Mean, Half: e.HalfWidth(), Base: base, Windows: float64(n) * mu * mu / (e.SD*e.SD + mu*mu)})
	}
	return out
}

// findFig3 is Fig. 3's finding: the transformers by depth, the one-layer
// model against the unigram estimator, KN, the fixed orders, and the
// isolated spikes of the per-position excess.
func findFig3(cfg study.Config, mg *results.Merged) Finding {
	f := Finding{Claim: "All trained transformers except the one-layer one track CTW (the Bayes-optimal predictor of the paper's Fig. 3 data) closely over the whole window; " +
		"the one-layer transformer is only slightly better than the unigram estimator; performance improves with the number of layers, " +
		"with small gains that saturate at about four layers; KN (δ tuned) is clearly worse than CTW and the transformers, most visibly in the late part of the window.", Agrees: true}
	res := mg.Res
	ms, sins, parts := fig3Depths(cfg, res)
	f.Found = "Second-half loss above " + results.RefLong(res) + ", in nats per symbol (95% CI): " + strings.Join(parts, "; ") + "."
	if c := results.First(res, "CTW"); c != nil && c != res.Ref() {
		f.Found += fmt.Sprintf(" CTW(D=%d), the paper's reference, is %s above it.", cfg.MaxDepth(), excessSH(c))
	}
	f.Found += sinusoidalAndSpikes(res, ms, sins)
	if kn := results.First(res, "KN"); kn != nil {
		f.Found += fmt.Sprintf(" KN: %s.", excessSH(kn))
	}
	// The best transformer is that of every Fig. 3 model, the sinusoidal
	// ones included, as in Fig. 10's section (bestTransformer): one
	// "best transformer" across the report.
	f.Found += markovSentence(cfg, mg)
	f.Found += referenceNote(cfg, res)
	fig3Checks(&f, cfg, mg, ms, sins)
	f.settleChecked()
	if cfg.Preset == "tiny" {
		f.Found += " (Preset tiny trains for a few hundred steps only: it checks the pipeline, not the science.)"
	}
	return f
}

// depthResult is the result of a Fig. 3 model with its number of layers.
type depthResult struct {
	L int
	m *eval.MethodResult
}

// fig3Depths are the results of Fig. 3's models with learned positions
// (not the longer-trained -xK copies), with the phrase for each, and the
// models with sinusoidal positions (beside, not in, the layer comparison).
func fig3Depths(cfg study.Config, res *eval.Result) (ms []depthResult, sins []study.Model, parts []string) {
	for _, s := range cfg.Fig3Models {
		m, _ := study.ParseModel(s)
		if m.Budget > 1 {
			continue // a longer-trained copy: not another depth
		}
		if m.Sin {
			sins = append(sins, m)
			continue
		}
		if r := res.Method(m.Label()); r != nil {
			ms = append(ms, depthResult{len(m.Heads), r})
			parts = append(parts, fmt.Sprintf("%s (%d layer%s) %s", m.Label(), len(m.Heads), plural(len(m.Heads)), excessSH(r)))
		}
	}
	return ms, sins, parts
}

// sinusoidalAndSpikes are the sentences on the models with sinusoidal
// positions (beside their learned twins) and on the isolated spikes of
// every model's per-position excess.
func sinusoidalAndSpikes(res *eval.Result, ms []depthResult, sins []study.Model) string {
	var found string
	var sp []string
	spikeOf := append([]depthResult(nil), ms...)
	for _, m := range sins {
		r := res.Method(m.Label())
		if r == nil {
			continue
		}
		spikeOf = append(spikeOf, depthResult{len(m.Heads), r})
		learned := m
		learned.Sin = false
		if l := res.Method(learned.Label()); l != nil {
			found += fmt.Sprintf(" With fixed sinusoidal instead of learned positions, %s is %s above %s, %s %s (%s).", r.Name, excessSH(r), results.RefShort(res), relation(r, l), l.Name, excessSH(l))
		} else {
			found += fmt.Sprintf(" %s (sinusoidal positions): %s.", r.Name, excessSH(r))
		}
	}
	for _, x := range spikeOf {
		for _, k := range spikes(x.m, res.Windows, 0.03) {
			sp = append(sp, fmt.Sprintf("%s at position %d (%.3f ± %.3f vs %.3f around it; ≥ %.0f windows)", x.m.Name, k.Pos, k.Excess, k.Half, k.Base, k.Windows))
		}
	}
	if len(sp) > 0 {
		found += " Isolated spikes of the per-position excess (95% interval more than 0.03 nats above the median of the 10 positions either side; “≥ k windows” is a lower bound on the number of windows carrying each, from the mean and SD across windows (exact when a window either carries the full spike or none of it): a handful means a few outlying windows; hundreds, a systematic, position-specific effect of the model; adjacent positions are listed one by one): " + strings.Join(sp, "; ") + "."
	}
	return found
}

// referenceNote says why CTW is not exactly Bayes-optimal under cfg, if it
// is not, and what that means for the reference.
func referenceNote(cfg study.Config, res *eval.Result) string {
	why := cfg.NotOptimal()
	switch {
	case len(why) > 0 && !strings.HasPrefix(res.Ref().Name, "Bayes"):
		return fmt.Sprintf(" CTW(D=%d, λ=%g, α=%g) is the reference here but not exactly Bayes-optimal, because %s: a method may beat it.", cfg.MaxDepth(), cfg.Lambda, cfg.Alpha, strings.Join(why, ", and "))
	case len(why) > 0:
		return fmt.Sprintf(" CTW(D=%d) is not exactly Bayes-optimal here, because %s; the excesses are measured from the exact Bayes predictor of the prior.", cfg.MaxDepth(), strings.Join(why, ", and "))
	}
	return ""
}

// fig3Checks adds Fig. 3's checks to f: the one-layer model against the
// unigram estimator and the deeper models, depth against depth, KN against
// every deeper model and late in the window, and the deeper models against
// the best fixed order on both halves.
func fig3Checks(f *Finding, cfg study.Config, mg *results.Merged, ms []depthResult, sins []study.Model) {
	res := mg.Res
	kn, uni := results.First(res, "KN"), results.First(res, "Unigram")
	var one *eval.MethodResult
	var multi []depthResult
	for _, x := range ms {
		if x.L == 1 {
			one = x.m
		} else {
			multi = append(multi, x)
		}
	}
	// every transformer with two or more layers, sinusoidal ones included
	deep := []*eval.MethodResult{}
	for _, x := range multi {
		deep = append(deep, x.m)
	}
	for _, m := range sins {
		if r := res.Method(m.Label()); r != nil && len(m.Heads) > 1 {
			deep = append(deep, r)
		}
	}
	if one != nil && uni != nil {
		d := uni.SecondHalf.Mean - one.SecondHalf.Mean
		f.Found += fmt.Sprintf(" The one-layer transformer is %.3f nats %s than the unigram estimator over the second half (unigram %s above %s).",
			math.Abs(d), map[bool]string{true: "better", false: "worse"}[d >= 0], excessSH(uni), results.RefShort(res))
		f.test("The one-layer transformer is better than the unigram estimator.", worse(uni, one))
		f.test(fmt.Sprintf("…but only slightly: it keeps at least half of the unigram estimator's excess over %s.", results.RefShort(res)), halfOf(one, uni, res.Ref()))
		for _, r := range deep {
			f.test(fmt.Sprintf("The one-layer transformer is worse than %s.", r.Name), worse(one, r))
		}
	}
	sort.SliceStable(multi, func(i, j int) bool { return multi[i].L < multi[j].L })
	for i := 1; i < len(multi); i++ {
		a, b := multi[i-1], multi[i]
		if b.L > a.L {
			f.test(fmt.Sprintf("Performance does not degrade with depth: %s is not worse than %s.", b.m.Name, a.m.Name), notWorse(b.m, a.m))
		}
	}
	if kn != nil {
		for _, r := range deep {
			f.test(fmt.Sprintf("KN is worse than %s.", r.Name), worse(kn, r))
		}
		// "most visibly in the late part of the window": KN's gap to the
		// best transformer (chosen on validation windows) is larger in the
		// second half than in the first.
		if bt := selectedTransformer(cfg, mg); bt != nil {
			f.test(fmt.Sprintf("KN's gap to the best transformer, %s, is larger late in the window: its second-half gap exceeds its first-half gap.", bt.Name), laterGap(kn, bt))
		} else if len(deep) > 0 {
			f.check("KN's gap to the best transformer is larger late in the window.", undecided, noSelection)
		}
	}
	// Tracking the Bayes predictor on variable-order data means doing
	// better than every fixed order, over the whole window: the check the
	// paper's picture implies where Markov(k) estimators were evaluated,
	// on both halves of the window. The best fixed order is chosen on
	// validation windows (SelectedFixedOrder).
	if best := results.SelectedFixedOrder(mg); best != nil {
		for _, r := range deep {
			for _, h := range []half{secondHalf, firstHalf} {
				f.test(fmt.Sprintf("%s tracks %s better than the best fixed-order estimator, %s, over the %s of the window.", r.Name, results.RefShort(res), best.Name, h), worseOver(h, best, r))
			}
		}
	} else if len(results.MethodNames(res, "Markov")) > 0 {
		for _, r := range deep {
			f.check(fmt.Sprintf("%s tracks %s better than the best fixed-order estimator over the whole window.", r.Name, results.RefShort(res)), undecided, noSelection)
		}
	}
}

// noSelection is the numbers of a check that needs a selection ("the best
// transformer", "the best fixed order") made on validation windows when
// the study has no validation results (val_frac = 0, or stages of an older
// version): it is inconclusive, never silently left out.
const noSelection = "no validation results to choose it on (val_frac = 0, or stages without val.json): not decided"

// fig3Results are the results of the models of cfg.Fig3Models that res
// has, in their order: learned and sinusoidal positions alike.
func fig3Results(cfg study.Config, res *eval.Result) []*eval.MethodResult {
	var out []*eval.MethodResult
	for _, l := range results.Labels(cfg.Fig3Models) {
		if r := res.Method(l); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// selectedTransformer is the "best transformer" of the Fig. 3 and Fig. 10
// sections: the Fig. 3 model (learned or sinusoidal positions, any
// budget) with the lowest mean second-half loss on the validation windows
// (the held-out training trees, never the test windows that judge it),
// averaged over its training seeds; its test result, or nil without
// validation results.
func selectedTransformer(cfg study.Config, mg *results.Merged) *eval.MethodResult {
	best, bestLoss := "", math.Inf(1)
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil {
			continue
		}
		var reps []string
		for r := range cfg.SeedsOf(m) {
			reps = append(reps, results.RepLabel(m, r))
		}
		if l, ok := results.ValLoss(mg.Val, reps...); ok && l < bestLoss {
			best, bestLoss = m.Label(), l
		}
	}
	if best == "" {
		return nil
	}
	return mg.Res.Method(best)
}

// halfOf tests "one keeps at least half of uni's excess over ref" over
// the second half: the contrast L_one − ½L_uni − ½L_ref is above 0 (no
// margin: a ratio).
func halfOf(one, uni, ref *eval.MethodResult) test {
	mean, se, df, paired, ok := contrast(secondHalf, term{1, one}, term{-0.5, uni}, term{-0.5, ref})
	t := test{OK: ok, Text: fmt.Sprintf("%s %s vs half the unigram's, %.3f", one.Name, excessSH(one), 0.5*uni.ExcessSecondHalf.Mean)}
	if ok {
		t.PHold, t.PFail = above(mean, se, df, 0)
		t.Text += "; " + describe("excess − half the unigram's", mean, se, df, paired, secondHalf)
	}
	return t
}

// laterGap tests "a's gap to b is larger in the second half than in the
// First by more than Margin": per window, (a − b) over the second half
// minus (a − b) over the first.
func laterGap(a, b *eval.MethodResult) test {
	t := test{Text: fmt.Sprintf("%s − %s", a.Name, b.Name)}
	n := len(a.SecondHalfWindows)
	if n < 2 || len(a.FirstHalfWindows) != n || len(b.SecondHalfWindows) != n || len(b.FirstHalfWindows) != n {
		t.Text += ": no per-window losses of both halves"
		return t
	}
	late := &eval.MethodResult{SecondHalfWindows: make([]float64, n)}
	for j := range n {
		late.SecondHalfWindows[j] = (a.SecondHalfWindows[j] - b.SecondHalfWindows[j]) - (a.FirstHalfWindows[j] - b.FirstHalfWindows[j])
	}
	mean, se, df, _, _ := contrast(secondHalf, term{1, late})
	first, _, _, _, _ := contrast(firstHalf, term{1, a}, term{-1, b})
	t.OK = true
	t.PHold, t.PFail = above(mean, se, df, Margin)
	t.Text += fmt.Sprintf(": first half %+.4f, second half %+.4f; ", first, first+mean) + describe("second − first", mean, se, df, true, secondHalf) + fmt.Sprintf("; margin %g nats", Margin)
	return t
}

// markovOrder matches the order k in a Markov(k) method's name.
var markovOrder = regexp.MustCompile(`^Markov\(k=(\d+)`)

// markovSentence compares the fixed-order Markov(k) estimators (methods
// named "Markov…") with the reference and the best transformer: a fixed
// order that comes close to the reference means the data barely test
// variable order. When the largest order evaluated is below the prior's
// maximum depth D it says so: "the best fixed order" is then the best of
// those evaluated. The best fixed order and the best transformer are those
// selected on the validation windows.
func markovSentence(cfg study.Config, mg *results.Merged) string {
	res := mg.Res
	mk := results.MethodNames(res, "Markov")
	if len(mk) == 0 {
		return ""
	}
	var parts []string
	maxK := -1
	for _, n := range mk {
		if m := markovOrder.FindStringSubmatch(n); m != nil {
			k, _ := strconv.Atoi(m[1])
			maxK = max(maxK, k)
		}
		r := res.Method(n)
		parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
	}
	out := " Fixed-order estimators, second half above " + results.RefShort(res) + ": " + strings.Join(parts, "; ") + "."
	if D := cfg.MaxDepth(); maxK >= 0 && maxK < D {
		out += fmt.Sprintf(" (Markov(k) was evaluated for k ≤ %d only, below the prior's depth %d: a higher order may do better than the best shown.)", maxK, D)
	}
	best, tf := results.SelectedFixedOrder(mg), selectedTransformer(cfg, mg)
	if best == nil || tf == nil {
		return out + " (No validation results: the best fixed order and the best transformer are not selected.)"
	}
	return out + fmt.Sprintf(" The best fixed order, %s, is %s the best transformer, %s (%s; both chosen by their second-half loss on %d validation windows, averaged over training seeds).",
		best.Name, relation(best, tf), tf.Name, excessSH(tf), mg.Val.Windows)
}
