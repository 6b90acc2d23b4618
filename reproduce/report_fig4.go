package reproduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/vomc/vomc/eval"
)

// findFig4 is Fig. 4's finding: the attention-only and single-head
// models against the full reference transformer (fullReference).
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
		f.Found = "No full transformer with at most four layers was trained, so there is no reference."
		f.settleChecked()
		return f
	}
	parts := []string{fmt.Sprintf("full %s %s", rm.Name, excessSH(rm))}
	var variants []Model
	for _, s := range cfg.Fig4Models {
		m, _ := ParseModel(s)
		if r := res.Method(m.Label()); r != nil {
			variants = append(variants, m)
			parts = append(parts, fmt.Sprintf("%s %s", r.Name, excessSH(r)))
		}
	}
	f.Found = "Second-half loss above CTW (nats per symbol, 95% CI): " + strings.Join(parts, "; ") + "."
	for _, m := range variants {
		r := res.Method(m.Label())
		v, text := worse(r, rm)
		f.check(fmt.Sprintf("%s is worse than the full %s.", r.Name, rm.Name), v, text)
	}
	a, b := res.Method("TF(1,1)"), res.Method("TF(1,1,1) w/o FF")
	if a != nil && b != nil {
		v, text := worse(a, b)
		f.check("TF(1,1) is the worse of the two single-head models.", v, text)
	}
	// Is a variant's loss a training-budget artefact? Its curve's last
	// quarter (a caveat: a model whose loss still falls fast enough to
	// close its gap makes "worse" uncertain), and the same model trained K
	// times longer (beside the base model).
	var conv []string
	for _, m := range variants {
		if h, ok := mg.Logs[m.Label()]; ok {
			c := convergenceOf(h)
			conv = append(conv, fmt.Sprintf("%s: %s", m.Label(), c))
			v, text := budgetCaveat(c, res.Method(m.Label()), rm)
			f.caveat(fmt.Sprintf("%s's training loss, falling at its rate of the last quarter, would not close its gap to the full %s within another quarter of the run (else the gap may be a budget artefact).", m.Label(), rm.Name), v, text)
		}
		if m.Budget > 1 {
			base := m
			base.Budget = 0
			if r, rl := res.Method(base.Label()), res.Method(m.Label()); r != nil {
				f.Found += fmt.Sprintf(" Trained %d times longer, %s (%s) is %s %s (%s); its check against the full model says whether the gap survives the larger budget.",
					m.Budget, rl.Name, excessSH(rl), relation(rl, r), r.Name, excessSH(r))
			}
		}
	}
	if len(conv) > 0 {
		f.Found += " Training curves (" + Fig4CurvesFile + "; a least-squares line through the training losses of the last quarter of the steps, extrapolated over another quarter; the cosine schedule itself flattens the end, so a -xK model is the direct test of the budget): " + strings.Join(conv, "; ") + "."
	}
	f.settleChecked()
	return f
}

// budgetCaveat decides whether variant's training curve (c, the fit of its
// last quarter) could close its gap to full within another quarter of the
// run. The gap is over the whole window, as the training loss is: the
// conservative interval [gLo, gHi] of variant's window excess over CTW
// minus full's, from the two 95% intervals. It holds when the upper end of
// the fitted drop is below gLo, fails when its lower end reaches gHi (the
// curve alone would close the gap), and is inconclusive otherwise, when
// the fit has too few points, or when variant is not clearly worse.
// Losses on training and test windows are compared as one quantity: both
// are means per symbol over whole windows from the same prior.
func budgetCaveat(c Convergence, variant, full *eval.MethodResult) (verdict, string) {
	gLo := variant.ExcessWindow.Lo - full.ExcessWindow.Hi
	gHi := variant.ExcessWindow.Hi - full.ExcessWindow.Lo
	text := fmt.Sprintf("%s; window gap to %s [%.4f, %.4f]", c, full.Name, gLo, gHi)
	switch {
	case c.Points < 4 || math.IsNaN(c.DropCI) || math.IsNaN(gLo) || math.IsNaN(gHi) || gLo <= 0:
		return undecided, text
	case c.Drop+c.DropCI < gLo:
		return holds, text
	case c.Drop-c.DropCI >= gHi:
		return fails, text
	}
	return undecided, text
}
