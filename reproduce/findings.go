package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/vomc/vomc/eval"
)

// excessSH formats a method's second-half excess over CTW.
func excessSH(m *eval.MethodResult) string {
	return fmt.Sprintf("%.3f ± %.3f", m.ExcessSecondHalf.Mean, m.ExcessSecondHalf.HalfWidth())
}

// clearlyAbove reports whether a's second-half excess interval lies above b's.
func clearlyAbove(a, b *eval.MethodResult) bool {
	return a.ExcessSecondHalf.Lo > b.ExcessSecondHalf.Hi
}

// relation says how a compares with b over the second half: "clearly
// better than", "clearly worse than" (disjoint intervals) or "within noise
// of".
func relation(a, b *eval.MethodResult) string {
	switch {
	case clearlyAbove(a, b):
		return "clearly worse than"
	case clearlyAbove(b, a):
		return "clearly better than"
	}
	return "within noise of"
}

func first(res *eval.Result, prefix string) *eval.MethodResult {
	for i := range res.Methods {
		if strings.HasPrefix(res.Methods[i].Name, prefix) {
			return &res.Methods[i]
		}
	}
	return nil
}

// spike is a position whose per-position excess over the reference stands
// out from its neighbourhood.
type spike struct {
	Pos          int     // 1-based position
	Excess, Half float64 // mean excess and 95% half-width at Pos (nats)
	Base         float64 // median mean excess of the 10 positions either side
	// Windows estimates how many windows carry the spike: if k of n
	// windows have excess e above Base and the rest none, the mean is
	// ke/n and the second moment ke²/n, so k ≈ n·μ²/(σ² + μ²) with μ the
	// spike's height above Base and σ the SD across windows at Pos. A
	// single outlying window gives ≈ 1; a systematic effect many.
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

func findFig3(cfg Config, mg *merged) Finding {
	f := Finding{Claim: "All trained transformers except the one-layer one track CTW (Bayes-optimal here) closely over the whole window; " +
		"the one-layer transformer is only slightly better than the unigram estimator; performance improves with the number of layers, " +
		"with small gains that saturate at about four layers; KN (δ tuned) is clearly worse than CTW and the transformers, most visibly in the late part of the window.", Agrees: true}
	res := mg.Res
	var parts, diffs []string
	type lm struct {
		L int
		m *eval.MethodResult
	}
	var ms []lm
	var sins []Model // sinusoidal-position models: beside, not in, the layer comparison
	for _, s := range cfg.Fig3Models {
		m, _ := ParseModel(s)
		if m.Sin {
			sins = append(sins, m)
			continue
		}
		if r := res.Method(m.Label()); r != nil {
			ms = append(ms, lm{len(m.Heads), r})
			parts = append(parts, fmt.Sprintf("%s (%d layer%s) %s", m.Label(), len(m.Heads), plural(len(m.Heads)), excessSH(r)))
		}
	}
	f.Found = "Second-half loss above CTW, in nats per symbol (95% CI): " + strings.Join(parts, "; ") + "."
	var sp []string
	spikeOf := append([]lm(nil), ms...)
	for _, m := range sins {
		r := res.Method(m.Label())
		if r == nil {
			continue
		}
		spikeOf = append(spikeOf, lm{len(m.Heads), r})
		learned := m
		learned.Sin = false
		if l := res.Method(learned.Label()); l != nil {
			f.Found += fmt.Sprintf(" With fixed sinusoidal instead of learned positions, %s is %s above CTW, %s %s (%s).", r.Name, excessSH(r), relation(r, l), l.Name, excessSH(l))
		} else {
			f.Found += fmt.Sprintf(" %s (sinusoidal positions): %s.", r.Name, excessSH(r))
		}
	}
	for _, x := range spikeOf {
		for _, k := range spikes(x.m, res.Windows, 0.03) {
			sp = append(sp, fmt.Sprintf("%s at position %d (%.3f ± %.3f vs %.3f around it; ≈ %.0f windows)", x.m.Name, k.Pos, k.Excess, k.Half, k.Base, k.Windows))
		}
	}
	if len(sp) > 0 {
		f.Found += " Isolated spikes of the per-position excess (95% interval more than 0.03 nats above the median of the 10 positions either side; the number of windows carrying each is estimated from the mean and SD across windows: ≈ 1 means one outlying window, i.e. noise; many means a systematic, position-specific effect of the model): " + strings.Join(sp, "; ") + "."
	}
	kn, uni := first(res, "KN"), first(res, "Unigram")
	if kn != nil {
		f.Found += fmt.Sprintf(" KN: %s.", excessSH(kn))
	}
	var tfs []*eval.MethodResult
	for _, x := range ms {
		tfs = append(tfs, x.m)
	}
	f.Found += markovSentence(res, tfs)
	if why := cfg.notOptimal(); len(why) > 0 {
		f.Found += fmt.Sprintf(" CTW(D=%d, λ=%g, α=%g) is the reference here but not exactly Bayes-optimal, because %s: a method may beat it.", cfg.MaxDepth(), cfg.Lambda, cfg.Alpha, strings.Join(why, ", and "))
	}
	var one *eval.MethodResult
	var multi []lm
	for _, x := range ms {
		if x.L == 1 {
			one = x.m
		} else {
			multi = append(multi, x)
		}
	}
	if one != nil && uni != nil {
		d := uni.SecondHalf.Mean - one.SecondHalf.Mean
		f.Found += fmt.Sprintf(" The one-layer transformer is %.3f nats %s than the unigram estimator over the second half (unigram %s above CTW).",
			math.Abs(d), map[bool]string{true: "better", false: "worse"}[d >= 0], excessSH(uni))
		switch {
		case d < -0.01:
			diffs = append(diffs, "the one-layer transformer is worse than, not slightly better than, the unigram estimator")
		case one.ExcessSecondHalf.Mean < 0.5*uni.ExcessSecondHalf.Mean:
			diffs = append(diffs, "the one-layer transformer is much better than the unigram estimator")
		}
	}
	if len(multi) > 0 {
		worst := multi[0].m
		for _, x := range multi {
			if x.m.ExcessSecondHalf.Mean > worst.ExcessSecondHalf.Mean {
				worst = x.m
			}
		}
		f.Found += fmt.Sprintf(" The worst transformer with two or more layers (%s) is %s above CTW.", worst.Name, excessSH(worst))
		if one != nil && !clearlyAbove(one, worst) {
			diffs = append(diffs, "the one-layer transformer is not clearly worse than the deeper ones")
		}
		if kn != nil && !clearlyAbove(kn, worst) {
			diffs = append(diffs, fmt.Sprintf("KN is not clearly worse than %s", worst.Name))
		}
		// Monotonicity in depth.
		for i := 1; i < len(multi); i++ {
			a, b := multi[i-1], multi[i]
			if b.L > a.L && clearlyAbove(b.m, a.m) {
				diffs = append(diffs, fmt.Sprintf("%s is clearly worse than the shallower %s", b.m.Name, a.m.Name))
			}
		}
	}
	if len(diffs) > 0 {
		f.Agrees = false
		f.Found += " This differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Found += " This agrees with the paper's picture."
	}
	if cfg.Preset == "tiny" {
		f.Found += " (Preset tiny trains for a few hundred steps only: it checks the pipeline, not the science.)"
	}
	return f
}

// markovSentence compares the fixed-order Markov(k) estimators (methods
// named "Markov…") with CTW and the best transformer of ms: a fixed order
// that comes close to CTW means the data barely test variable order.
func markovSentence(res *eval.Result, tfs []*eval.MethodResult) string {
	mk := methodNames(res, "Markov")
	if len(mk) == 0 {
		return ""
	}
	var parts []string
	var best *eval.MethodResult
	for _, n := range mk {
		r := res.Method(n)
		parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		if best == nil || r.ExcessSecondHalf.Mean < best.ExcessSecondHalf.Mean {
			best = r
		}
	}
	out := " Fixed-order estimators, second half above CTW: " + strings.Join(parts, "; ") + "."
	var tf *eval.MethodResult
	for _, r := range tfs {
		if tf == nil || r.ExcessSecondHalf.Mean < tf.ExcessSecondHalf.Mean {
			tf = r
		}
	}
	if tf != nil {
		out += fmt.Sprintf(" The best fixed order, %s, is %s the best transformer, %s (%s).", best.Name, relation(best, tf), tf.Name, excessSH(tf))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func findFig4(cfg Config, mg *merged) Finding {
	f := Finding{Claim: "Attention-only networks (no FF layers, no LayerNorm) perform considerably worse than CTW and a full four-layer transformer; " +
		"two-layer single-head transformers TF(1,1) and three-layer single-head transformers without FF layers also perform poorly, particularly the former: " +
		"the mechanisms known for fixed-order chains do not explain in-context learning of VOMCs, and the FF layers matter.", Agrees: true}
	res := mg.Res
	ref, ok := fullReference(cfg)
	var rm *eval.MethodResult
	if ok {
		rm = res.Method(ref.Label())
	}
	if rm == nil {
		f.Found, f.Agrees = "No full transformer with at most four layers was trained, so there is no reference.", false
		return f
	}
	parts := []string{fmt.Sprintf("full %s %s", rm.Name, excessSH(rm))}
	var diffs []string
	for _, s := range cfg.Fig4Models {
		m, _ := ParseModel(s)
		r := res.Method(m.Label())
		if r == nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		if !clearlyAbove(r, rm) {
			diffs = append(diffs, fmt.Sprintf("%s is not clearly worse than the full %s", r.Name, rm.Name))
		}
	}
	f.Found = "Second-half loss above CTW (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	a, b := res.Method("TF(1,1)"), res.Method("TF(1,1,1) w/o FF")
	if a != nil && b != nil {
		if a.ExcessSecondHalf.Mean > b.ExcessSecondHalf.Mean {
			f.Found += " TF(1,1) is the worse of the two single-head models, as in the paper."
		} else {
			diffs = append(diffs, "TF(1,1) is not worse than TF(1,1,1) w/o FF")
		}
	}
	if len(diffs) > 0 {
		f.Agrees = false
		f.Found += " This differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Found += " Every variant is clearly worse than the full transformer, as the paper reports."
	}
	return f
}

// ppmVariantNote says what each PPM variant of the baselines is.
func ppmVariantNote(name string) string {
	switch {
	case strings.Contains(name, "excl"):
		return "with exclusion"
	case strings.Contains(name, "norm"):
		return "normalised"
	}
	return "as is: without exclusion its probabilities sum to < 1"
}

// findFig10 compares PPM (method A) in its three variants with KN, CTW
// and the transformers, and says which of the paper's statements depend
// on the variant (the paper does not say whether its PPM used exclusion).
func findFig10(cfg Config, mg *merged) Finding {
	f := Finding{Claim: "PPM (method A, not tuned) behaves like KN: both are fixed-order estimators, clearly worse than CTW and the transformers, " +
		"most visibly late in the window; KN is overall more efficient than this PPM.", Agrees: true}
	res := mg.Res
	var ppms []*eval.MethodResult
	for i := range res.Methods {
		if strings.HasPrefix(res.Methods[i].Name, "PPM") {
			ppms = append(ppms, &res.Methods[i])
		}
	}
	kn := first(res, "KN")
	if len(ppms) == 0 {
		f.Found, f.Agrees = "PPM was not evaluated.", false
		return f
	}
	var parts []string
	for _, p := range ppms {
		parts = append(parts, fmt.Sprintf("%s (%s) %.3f ± %.3f over the window and %s over the second half",
			p.Name, ppmVariantNote(p.Name), p.ExcessWindow.Mean, p.ExcessWindow.HalfWidth(), excessSH(p)))
	}
	f.Found = "Loss above CTW in nats per symbol (95% CI): " + strings.Join(parts, "; ")
	if kn != nil {
		f.Found += fmt.Sprintf("; KN %.3f ± %.3f and %s.", kn.ExcessWindow.Mean, kn.ExcessWindow.HalfWidth(), excessSH(kn))
	} else {
		f.Found += "."
	}
	best := (*eval.MethodResult)(nil)
	for _, l := range labels(cfg.Fig3Models) {
		if r := res.Method(l); r != nil && (best == nil || r.ExcessSecondHalf.Mean < best.ExcessSecondHalf.Mean) {
			best = r
		}
	}
	if best != nil {
		f.Found += fmt.Sprintf(" The best transformer (%s) is %s above CTW over the second half.", best.Name, excessSH(best))
	}
	// which statements hold for which variant
	var knWorse, knBetter, knTie, tfWorse, tfNot []string
	for _, p := range ppms {
		if kn != nil {
			switch {
			case kn.ExcessWindow.Hi < p.ExcessWindow.Lo:
				knBetter = append(knBetter, p.Name)
			case p.ExcessWindow.Hi < kn.ExcessWindow.Lo:
				knWorse = append(knWorse, p.Name)
			default:
				knTie = append(knTie, p.Name)
			}
		}
		if best != nil {
			if clearlyAbove(p, best) {
				tfWorse = append(tfWorse, p.Name)
			} else {
				tfNot = append(tfNot, p.Name)
			}
		}
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	def := ppms[0] // the default variant: ppm = method A as is
	var diffs []string
	if kn != nil {
		f.Found += fmt.Sprintf(" Which statements depend on the PPM variant: “KN is overall more efficient than PPM” (window CIs disjoint) holds for %s, is reversed for %s and undecided for %s.",
			list(knBetter), list(knWorse), list(knTie))
		if len(knBetter) != len(ppms) {
			f.Found += " So the KN-vs-PPM conclusion is a property of the PPM variant, not of PPM: the paper does not say whether its PPM used exclusion or normalised its probabilities."
		}
		if !(kn.ExcessWindow.Hi < def.ExcessWindow.Lo) {
			diffs = append(diffs, def.Name+" is not clearly worse than KN over the window")
		}
	}
	if best != nil {
		f.Found += fmt.Sprintf(" “PPM is clearly worse than the transformers” (second-half CI above the best transformer's) holds for %s and not for %s.", list(tfWorse), list(tfNot))
		if !clearlyAbove(def, best) {
			diffs = append(diffs, def.Name+" is not clearly worse than the best transformer")
		}
	}
	if len(diffs) > 0 {
		f.Agrees = false
		f.Found += " For the default variant this differs from the paper: " + strings.Join(diffs, "; ") + "."
	} else {
		f.Found += " For the default variant (" + def.Name + ", probabilities as PPM assigns them) this agrees with the paper."
	}
	return f
}

func findConstruct(cfg Config, mg *merged) Finding {
	f := Finding{Claim: "A (D+2)-layer transformer (Theorems 3–5: a context-extension layer, a statistics-collection layer and D induction layers) " +
		"can compute CTW's Bayes-optimal prediction exactly."}
	c := mg.Construct
	if c == nil || len(c.Methods) < 2 {
		f.Found = "The construction was not evaluated."
		return f
	}
	m := c.Methods[1]
	f.Found = fmt.Sprintf("The %d-layer construction (hard-attention limit, with this implementation's corrections to the paper's induction keys — see package construct) "+
		"matches CTW on %d test windows: the largest difference of any predicted probability is %.2g and the mean loss differs by %.2g nats per symbol.",
		mg.CInfo.Layers, mg.CInfo.Windows, mg.CInfo.MaxProbDiff, m.ExcessWindow.Mean)
	f.Agrees = mg.CInfo.MaxProbDiff < 1e-6
	if !f.Agrees {
		f.Found += " They do NOT coincide, which differs from the paper."
	} else {
		f.Found += " They coincide, as the paper states."
	}
	return f
}
