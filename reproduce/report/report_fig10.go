package report

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

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
func findFig10(cfg study.Config, mg *results.Merged) Finding {
	f := Finding{Claim: "PPM (method A, not tuned) behaves like KN: both are fixed-order estimators, clearly worse than CTW and the transformers, " +
		"most visibly late in the window; KN is overall more efficient than this PPM.", Agrees: true}
	res := mg.Res
	var ppms []*eval.MethodResult
	for i := range res.Methods {
		if strings.HasPrefix(res.Methods[i].Name, "PPM") {
			ppms = append(ppms, &res.Methods[i])
		}
	}
	kn := results.First(res, "KN")
	if len(ppms) == 0 {
		f.Found, f.Agrees = "PPM was not evaluated.", false
		return f
	}
	var parts []string
	for _, p := range ppms {
		parts = append(parts, fmt.Sprintf("%s (%s) %.3f ± %.3f over the window and %s over the second half",
			p.Name, ppmVariantNote(p.Name), p.ExcessWindow.Mean, p.ExcessWindow.HalfWidth(), excessSH(p)))
	}
	f.Found = "Loss above " + results.RefShort(res) + " in nats per symbol (95% CI): " + strings.Join(parts, "; ")
	if kn != nil {
		f.Found += fmt.Sprintf("; KN %.3f ± %.3f and %s.", kn.ExcessWindow.Mean, kn.ExcessWindow.HalfWidth(), excessSH(kn))
	} else {
		f.Found += "."
	}
	best := selectedTransformer(cfg, mg) // the same as Fig. 3's
	if best != nil {
		f.Found += fmt.Sprintf(" The best transformer (%s, chosen on validation windows) is %s above %s over the second half.", best.Name, excessSH(best), results.RefShort(res))
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
