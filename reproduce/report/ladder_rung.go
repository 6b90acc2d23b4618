package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/powerfit"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// This file applies the rules of the ladder's next rung, fixed in
// docs/figures/ladder/README.md ("The next rung, pre-registered") before
// any of its models was trained: a rung of TF(4,4) above the rule's top
// budget K (×8 beside the ladder's ×4), and one of TF(4,4)-sin.
//
// The predictions are recomputed here from the budgets below the rung, the
// way the README computed them, so that the report shows both the rule's
// inputs and its outcome; the README states the numbers it fixed, and a
// reader checks that the two agree.
//
// The rung is the budget 2K of the rule's architecture (K the rule's top,
// study.Config.LadderRule): a later, larger rung leaves this one's rules as they are.
//
// TF(4,4) (every seed): for seed s, the floor form c + a·T^(−b) solved
// through its excesses at the budgets below the rung (powerfit.Floor)
// predicts F_s at the rung, the last local log–log slope continued predicts
// L_s, and m_s is their midpoint. As written, with F_s above L_s: the
// floor form's prediction is rejected if in every seed the rung's 95%
// interval (second half, paired with the reference, over the test windows)
// lies wholly below m_s; the local slope's if in every seed it lies wholly
// above m_s; otherwise the rule is unresolved (each prediction "not
// rejected"; "undecided" while a seed has no result). (The words assume F_s
// above L_s, as it is in both of the ladder's seeds: a fall that flattens
// has a floor above 0, which keeps F above the power law's continuation.)
//
// TF(4,4)-sin (seed 0, as registered): the least-squares power law
// a·T^(−b) in log–log through its excesses below the rung (powerfit.Power,
// as the report fits) predicts P at the rung; moving each budget's excess
// to the lower end, the mean or the upper end of its interval (3^n
// combinations) gives the range [P−, P+]. Supported if the rung's interval
// contains P, rejected if it lies wholly outside [P−, P+], undecided
// otherwise.
//
// The README fixed m_s, P and [P−, P+] to four decimals; the rules decide
// with the recomputed values rounded to those four decimals (fixed), so
// that an interval's end between a recomputed value and its written form
// is read as the README reads it; the intervals are printed to five.
//
// Beside both, not part of either rule, the paired interval of each rung
// model against CTW (TF(4,4) reaches CTW's level at the rung if it lies
// wholly below 0 in every seed), and the finding's verdict says that: the
// paper's question, asked of the rung; and, post hoc, the ladder's fits
// (E′) and (F′) through every budget up to the rung.

// fixed is x to the four decimals at which the README fixed the rules'
// numbers.
func fixed(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// rungOutcomes are the words of the rules' outcomes.
const (
	rungRejected    = "rejected"
	rungNotRejected = "not rejected"
	rungSupported   = "supported"
	rungUndecided   = "undecided"
)

// ladderRung is the model of arch's architecture at budget 2k, and
// whether the study has it.
func ladderRung(cfg study.Config, arch study.Model, k int) (study.Model, bool) {
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err == nil && m.Architecture() == arch.Architecture() && max(1, m.Budget) == 2*k {
			return m, true
		}
	}
	return study.Model{}, false
}

// below are the points of seed s of arch's architecture trained on fewer
// tokens than t.
func below(cfg study.Config, res *eval.Result, arch study.Model, s int, t float64) []ladderPoint {
	var out []ladderPoint
	for _, p := range ladderPoints(cfg, res, arch, s) {
		if p.tokens < t {
			out = append(out, p)
		}
	}
	return out
}

// rungPredictions are seed s's two predictions at the rung's tokens t:
// the floor form's F and the last local slope's L (ok false when either
// cannot be computed), with the text of their inputs.
func rungPredictions(ps []ladderPoint, t float64) (f, l float64, text string, ok bool) {
	ts, es := tokensExcess(ps)
	law, okF := powerfit.Floor(ts, es)
	last, okL := powerfit.LastSlope(ts, es)
	if !okF || !okL {
		return 0, 0, fmt.Sprintf("%d budgets below the rung (three needed) or no fall", len(ps)), false
	}
	f, l = law.At(t), last.At(t)
	var pts []string
	for i := range ts {
		pts = append(pts, fmt.Sprintf("%.4f", es[i]))
	}
	return f, l, fmt.Sprintf("excesses below the rung %s; floor form c = %.4f, b = %.2f → F = %.4f; last local slope %+.3f → L = %.4f",
		strings.Join(pts, ", "), law.C, law.B, f, -last.B, l), true
}

// sideOf says where [lo, hi] lies against m: −1 wholly below, +1 wholly
// above, 0 across it.
func sideOf(lo, hi, m float64) int {
	switch {
	case hi < m:
		return -1
	case lo > m:
		return 1
	}
	return 0
}

// rungOutcome is what rungChecks decided: the rule's outcome for each
// prediction, reaches +1 when the rung is below CTW in every seed, −1
// when above in every seed, else 0, and any false when no seed of the
// rung has a result.
type rungOutcome struct {
	floor, slope string
	reaches      int
	any          bool
}

// rungChecks applies the TF(4,4) rung's rule: one check per seed (its
// predictions, midpoint and interval) and the rule's outcome for each
// prediction, then the rung against CTW per seed (ctwChecks).
func rungChecks(cfg study.Config, res *eval.Result, rung study.Model) (cs []Check, o rungOutcome) {
	ref := res.Ref()
	t := cfg.ModelTrainTokens(rung)
	floorOut, slopeOut, decided := true, true, true
	for s := range cfg.SeedsOf(rung) {
		label := results.RepLabel(rung, s)
		claim := fmt.Sprintf("(R) seed %d: %s's second-half excess over %s against the midpoint m of the floor form's and the last local slope's predictions from the budgets below it", s, label, ref.Name)
		f, l, text, okP := rungPredictions(below(cfg, res, rung, s, t), t)
		m := fixed((f + l) / 2)
		if okP {
			text += fmt.Sprintf("; m = %.4f", m)
		}
		x := res.Method(label)
		o.any = o.any || x != nil
		var mean, lo, hi float64
		okI := false
		if x != nil {
			mean, lo, hi, okI = interval95(term{1, x}, term{-1, ref})
		}
		if !okP || !okI {
			if x == nil {
				text += "; " + label + " has no result"
			} else if !okI {
				text += "; no paired interval"
			}
			cs = append(cs, Check{Claim: claim, Verdict: rungUndecided, Numbers: text})
			floorOut, slopeOut, decided = false, false, false
			continue
		}
		side := sideOf(lo, hi, m)
		floorOut = floorOut && side == -1 // as written: wholly below m_s
		slopeOut = slopeOut && side == 1  // wholly above m_s
		cs = append(cs, Check{Claim: claim, Verdict: map[int]string{-1: "wholly below m", 0: "across m", 1: "wholly above m"}[side],
			Numbers: fmt.Sprintf("%s; %s %.5f [%.5f, %.5f]", text, label, mean, lo, hi)})
	}
	outcome := func(out bool) string {
		switch {
		case out:
			return rungRejected
		case !decided:
			return rungUndecided
		}
		return rungNotRejected
	}
	o.floor, o.slope = outcome(floorOut), outcome(slopeOut)
	cs = append(cs,
		Check{Claim: "(R-floor) the floor form's prediction: rejected if in every seed the interval lies wholly below m_s", Verdict: o.floor},
		Check{Claim: "(R-slope) the last local slope's prediction: rejected if in every seed the interval lies wholly above m_s", Verdict: o.slope})
	ctw, below, above := ctwChecks(res, rung, cfg.SeedsOf(rung), "(R-CTW)")
	cs = append(cs, ctw...)
	switch n := cfg.SeedsOf(rung); {
	case below == n:
		o.reaches = 1
	case above == n:
		o.reaches = -1
	}
	return cs, o
}

// ctwChecks are the rung's seeds 0..seeds−1 (those with a result) against
// CTW, paired second half, beside the rules: one check each, named with
// prefix, and how many lie wholly below and wholly above 0. None when CTW
// is missing or is the reference.
func ctwChecks(res *eval.Result, rung study.Model, seeds int, prefix string) (cs []Check, below, above int) {
	ctw := results.First(res, "CTW")
	if ctw == nil || ctw.Name == res.Methods[res.Reference].Name {
		return nil, 0, 0
	}
	for s := range seeds {
		label := results.RepLabel(rung, s)
		x := res.Method(label)
		if x == nil {
			continue
		}
		mean, lo, hi, ok := interval95(term{1, x}, term{-1, ctw})
		c := Check{Claim: fmt.Sprintf("%s seed %d: %s − %s, paired second half (beside the rule)", prefix, s, label, ctw.Name), Verdict: rungUndecided, Numbers: "no paired interval"}
		if ok {
			c.Numbers = fmt.Sprintf("%+.4f [%+.4f, %+.4f]", mean, lo, hi)
			switch sideOf(lo, hi, 0) {
			case -1:
				c.Verdict, below = "below", below+1
			case 1:
				c.Verdict, above = "above", above+1
			default:
				c.Verdict = "not told apart"
			}
		}
		cs = append(cs, c)
	}
	return cs, below, above
}

// sinRungChecks applies the TF(4,4)-sin rung's rule to its seed 0 (the
// seed the README registered), and its difference from CTW beside it;
// outcome is the rule's.
func sinRungChecks(cfg study.Config, res *eval.Result, rung study.Model) (cs []Check, outcome string) {
	ref := res.Ref()
	t := cfg.ModelTrainTokens(rung)
	label := results.RepLabel(rung, 0)
	claim := fmt.Sprintf("(S) seed 0: %s's second-half excess over %s against the power law through the budgets below it", label, ref.Name)
	ps := below(cfg, res, rung, 0, t)
	ts, es := tokensExcess(ps)
	law, okL := powerfit.Power(ts, es)
	if !okL {
		return []Check{{Claim: claim, Verdict: rungUndecided, Numbers: fmt.Sprintf("%d budgets below the rung with results: no power law", len(ps))}}, rungUndecided
	}
	plo, phi := powerRange(ps, t)
	p, plo, phi := fixed(law.At(t)), fixed(plo), fixed(phi)
	var pts []string
	for i := range es {
		pts = append(pts, fmt.Sprintf("%.4f", es[i]))
	}
	text := fmt.Sprintf("excesses below the rung %s; slope %+.4f → P = %.4f, range [%.4f, %.4f]", strings.Join(pts, ", "), -law.B, p, plo, phi)
	x := res.Method(label)
	if x == nil {
		return []Check{{Claim: claim, Verdict: rungUndecided, Numbers: text + "; " + label + " has no result"}}, rungUndecided
	}
	mean, lo, hi, okI := interval95(term{1, x}, term{-1, ref})
	v := rungUndecided
	switch {
	case !okI:
		text += "; no paired interval"
	case lo <= p && p <= hi:
		v = rungSupported
	case hi < plo || lo > phi:
		v = rungRejected
	}
	if okI {
		text += fmt.Sprintf("; %s %.5f [%.5f, %.5f]", label, mean, lo, hi)
	}
	ctw, _, _ := ctwChecks(res, rung, 1, "(S-CTW)")
	return append([]Check{{Claim: claim, Verdict: v, Numbers: text}}, ctw...), v
}

// powerRange is the least and largest prediction at t of the power law
// fitted to every combination of each point's excess at the lower end,
// the mean and the upper end of its interval.
func powerRange(ps []ladderPoint, t float64) (lo, hi float64) {
	ts, _ := tokensExcess(ps)
	lo, hi = math.Inf(1), math.Inf(-1)
	eachMoved(ps, func(moved []float64) {
		if law, ok := powerfit.Power(ts, moved); ok {
			lo, hi = min(lo, law.At(t)), max(hi, law.At(t))
		}
	})
	return lo, hi
}

// findRung is the report's finding on the ladder's next rung: the
// pre-registered rules' checks and, as the finding's verdict, whether
// TF(4,4) at the rung is below CTW in every seed (holds), above it in
// every seed (fails) or neither (inconclusive), with the section's title.
// ok is false when the study has no rung above the rule's top budget.
func findRung(cfg study.Config, mg *results.Merged) (f Finding, title string, ok bool) {
	top, _, _, okTop := cfg.LadderRule()
	res := mg.Res
	if !okTop || res.Reference < 0 || res.Reference >= len(res.Methods) {
		return Finding{}, "", false
	}
	k := max(1, top.Budget)
	rung, okR := ladderRung(cfg, top, k)
	sinArch := top
	sinArch.Sin, sinArch.Spec = true, ""
	sin, okS := ladderRung(cfg, sinArch, k)
	if !okR && !okS {
		return Finding{}, "", false
	}
	title = fmt.Sprintf("The ladder's next rung, pre-registered: %s", sin.Label())
	if okR {
		title = fmt.Sprintf("The ladder's next rung, pre-registered: does %s reach CTW's level?", rung.Label())
	}
	var rules []string
	if okR {
		rules = append(rules, rung.Label()+" (the floor form's prediction rejected if every seed's interval lies wholly below the midpoint m_s of the floor form's and the last local slope's predictions, the local slope's if wholly above)")
	}
	if okS {
		rules = append(rules, sin.Label()+" (the sin power law's prediction, supported if the interval contains it, rejected if the interval lies wholly outside its range)")
	}
	f = Finding{Verdict: undecided.String(),
		Claim: "The next rung, pre-registered in docs/figures/ladder/README.md before its models were trained: " + strings.Join(rules, " and ") + "."}
	var o rungOutcome
	var outs []string
	if okR {
		f.Claim += fmt.Sprintf(" The finding's verdict asks the paper's question of the rung: is %s below CTW in every seed?", rung.Label())
		var cs []Check
		cs, o = rungChecks(cfg, res, rung)
		f.Checks = append(f.Checks, cs...)
		if !o.any {
			outs = append(outs, rung.Label()+" has no result yet")
		} else {
			// post hoc: the ladder's fits (E′) and (F′) through every budget
			// up to the rung (before it has a result they are the rule's)
			for _, fit := range []func(study.Config, *eval.Result, study.Model) (Check, bool){ctwExtrapolation, floorExtrapolation} {
				if c, ok := fit(cfg, res, rung); ok {
					c.Claim = "(R′) post hoc, every budget up to the rung: " + c.Claim
					f.Checks = append(f.Checks, c)
				}
			}
		}
		outs = append(outs, "(R-floor) "+o.floor, "(R-slope) "+o.slope)
		if o.floor == rungNotRejected && o.slope == rungNotRejected {
			outs = append(outs, "the rule unresolved")
		}
	}
	if okS {
		cs, v := sinRungChecks(cfg, res, sin)
		f.Checks = append(f.Checks, cs...)
		outs = append(outs, "(S) seed 0 "+v)
	}
	f.Found = "Outcomes: " + strings.Join(outs, "; ") + "."
	switch o.reaches {
	case 1:
		f.Verdict, f.Agrees = holds.String(), true
		f.Found += fmt.Sprintf(" %s is below CTW in every seed: at this budget it reaches CTW's level.", rung.Label())
	case -1:
		f.Verdict = fails.String()
		f.Found += fmt.Sprintf(" %s is still above CTW in every seed.", rung.Label())
	}
	f.Summary = "the next rung: " + strings.Join(outs, "; ")
	return f, title, true
}
