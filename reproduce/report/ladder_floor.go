package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/powerfit"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
)

// ladderPoint is one budget of the architecture of the rule's fit:
// its training tokens, the second-half excess over the reference (mean
// over the n of its of seeds that have results, or one seed's) and the
// half-width of its 95% interval over the test windows (the mean of the
// seeds' half-widths).
type ladderPoint struct {
	tokens, excess, half float64
	n, of                int
}

// ladderPoints are the budgets of top's architecture (study.Model.
// Architecture: the rule's fit) up to top's own with results, by tokens:
// the mean over the seeds (seed < 0) or one seed's excess.
func ladderPoints(cfg study.Config, res *eval.Result, top study.Model, seed int) []ladderPoint {
	var out []ladderPoint
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil || m.Architecture() != top.Architecture() || max(1, m.Budget) > max(1, top.Budget) {
			continue
		}
		sum, half, n := 0.0, 0.0, 0
		for r := range cfg.SeedsOf(m) {
			if seed >= 0 && r != seed {
				continue
			}
			if x := res.Method(results.RepLabel(m, r)); x != nil {
				sum += x.ExcessSecondHalf.Mean
				half += (x.ExcessSecondHalf.Hi - x.ExcessSecondHalf.Lo) / 2
				n++
			}
		}
		if n > 0 {
			out = append(out, ladderPoint{cfg.ModelTrainTokens(m), sum / float64(n), half / float64(n), n, cfg.SeedsOf(m)})
		}
	}
	slices.SortStableFunc(out, func(a, b ladderPoint) int { return cmp.Compare(a.tokens, b.tokens) })
	return out
}

// tokensExcess splits points into their tokens and excesses.
func tokensExcess(ps []ladderPoint) (ts, es []float64) {
	for _, p := range ps {
		ts, es = append(ts, p.tokens), append(es, p.excess)
	}
	return ts, es
}

// floorExtrapolation is (F′) beside the verdict: the rule's power law with
// a floor, excess(T) = c + a·T^(−b), fitted to the mean over seeds and to
// each seed, and whether the floor lies below CTW's excess (then the budget
// at which the fit reaches it) or not (then, by this form, TF(4,4) with
// this model, data and schedule never reaches CTW's level), with the range
// of c when each budget's excess moves within its interval (floorRange). A
// three-budget ladder determines the three parameters exactly: the form is
// solved, not tested. Not ok without CTW among the methods or when CTW is
// the reference.
func floorExtrapolation(cfg study.Config, res *eval.Result, top study.Model) (Check, bool) {
	ctw := results.First(res, "CTW")
	if ctw == nil || res.Reference < 0 || res.Reference >= len(res.Methods) || res.Methods[res.Reference].Name == ctw.Name {
		return Check{}, false
	}
	target, ref := ctw.ExcessSecondHalf.Mean, res.Methods[res.Reference].Name
	claim := fmt.Sprintf("(F′) %s's second-half excess over %s as a power law with a floor, excess(T) = c + a·T^(−b): is the floor c below %s's %.4f?", top.Architecture(), ref, ctw.Name, target)
	ps := ladderPoints(cfg, res, top, -1)
	ts, es := tokensExcess(ps)
	law, ok := powerfit.Floor(ts, es)
	if !ok {
		return Check{Claim: claim, Verdict: undecided.String(),
			Numbers: fmt.Sprintf("cannot fit: %d budgets with results (three needed), or the excesses do not fall", len(ts))}, true
	}
	var pts []string
	for i, p := range ps {
		pt := fmt.Sprintf("%.3gM: %.4f", ts[i]/1e6, es[i])
		if p.n < p.of {
			pt += fmt.Sprintf(" (%d of %d seeds)", p.n, p.of)
		}
		pts = append(pts, pt)
	}
	exact := "through the points"
	if rms := math.Sqrt(law.SSE / float64(len(ts))); rms > 1e-7 {
		exact = fmt.Sprintf("least squares, rms residual %.2g nats/symbol", rms)
	}
	text := fmt.Sprintf("mean over seeds (%s): c = %.4f, b = %.2f (%s)", strings.Join(pts, "; "), law.C, law.B, exact)
	verdict := fails.String()
	if T, ok := law.Reaches(target); ok {
		verdict = holds.String()
		text += fmt.Sprintf("; it reaches %s's %.4f at ≈ %.3g tokens, %.3g× the 1× budget", ctw.Name, target, T, T/cfg.TrainTokens())
	} else {
		text += fmt.Sprintf("; the floor is %.4f above %s's %.4f, so by this form it never reaches it", law.C-target, ctw.Name, target)
	}
	if lo, hi, n, of := floorRange(ps); n > 0 {
		text += fmt.Sprintf("; moving each budget's excess within its 95%% interval (lower end, mean, upper end: %d combinations, %d fitted) moves c over [%.4f, %.4f]", of, n, lo, hi)
	}
	var seeds []string
	for s := range cfg.SeedsOf(top) {
		sts, ses := tokensExcess(ladderPoints(cfg, res, top, s))
		if sl, ok := powerfit.Floor(sts, ses); ok {
			fit := fmt.Sprintf("seed %d c = %.4f, b = %.2f", s, sl.C, sl.B)
			if len(sts) < len(ts) {
				fit += fmt.Sprintf(" (%d budgets)", len(sts))
			}
			seeds = append(seeds, fit)
		} else {
			seeds = append(seeds, fmt.Sprintf("seed %d cannot be fitted", s))
		}
	}
	if len(seeds) > 1 {
		text += "; by seed: " + strings.Join(seeds, ", ")
	}
	if len(ts) == 3 {
		text += ". With as many parameters as budgets the form is solved, not tested"
	} else if fit := lawResiduals(ps, law); fit != "" {
		text += "; " + fit
	}
	return Check{Claim: claim, Verdict: verdict, Numbers: text}, true
}

// powerResiduals says whether the rule's floorless power law fits its
// points within their test-window intervals: at each budget the residual
// (excess − fit) beside the interval's half-width, and at how many
// budgets it lies outside. Empty when there is no fit or no interval.
func powerResiduals(ps []ladderPoint) string {
	ts, es := tokensExcess(ps)
	law, ok := powerfit.Power(ts, es)
	if !ok || len(ps) < 3 { // two points: the line goes through them
		return ""
	}
	return lawResiduals(ps, law)
}

// lawResiduals says whether law fits the points within their
// test-window intervals (as powerResiduals); empty without intervals.
func lawResiduals(ps []ladderPoint, law powerfit.Law) string {
	var rs, hs []string
	outside := 0
	for _, p := range ps {
		r := p.excess - law.At(p.tokens)
		if !(p.half > 0) {
			return ""
		}
		if math.Abs(r) > p.half {
			outside++
		}
		rs, hs = append(rs, fmt.Sprintf("%+.4f", r)), append(hs, fmt.Sprintf("±%.4f", p.half))
	}
	return fmt.Sprintf("residuals of the fit (excess − fit) %s against the 95%% half-widths %s: outside at %d of %d budgets",
		strings.Join(rs, ", "), strings.Join(hs, ", "), outside, len(ps))
}

// floorRange is the sensitivity of the floor fit to the test windows:
// the least and largest floor c over the fits to every combination of
// each point's excess at the lower end, the mean and the upper end of its
// interval (3^len(ps) combinations, of which n could be fitted).
func floorRange(ps []ladderPoint) (lo, hi float64, n, of int) {
	ts, _ := tokensExcess(ps)
	lo, hi = math.Inf(1), math.Inf(-1)
	of = eachMoved(ps, func(moved []float64) {
		if law, ok := powerfit.Floor(ts, moved); ok {
			lo, hi, n = min(lo, law.C), max(hi, law.C), n+1
		}
	})
	return lo, hi, n, of
}

// eachMoved calls f with every combination of each point's excess at the
// lower end, the mean and the upper end of its 95% interval (excess ±
// half) and returns their number, 3^len(ps). f must not keep its slice.
func eachMoved(ps []ladderPoint, f func(moved []float64)) int {
	_, es := tokensExcess(ps)
	of := 1
	for range ps {
		of *= 3
	}
	moved := make([]float64, len(es))
	for k := range of {
		for i, j := 0, k; i < len(es); i, j = i+1, j/3 {
			moved[i] = es[i] + float64(j%3-1)*ps[i].half
		}
		f(moved)
	}
	return of
}
