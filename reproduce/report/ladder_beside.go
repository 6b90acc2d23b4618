package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
	"github.com/vomc/vomc/transformer"
)

// This file holds what the report shows beside the ladder's verdict:
// analyses chosen after the rule of docs/figures/ladder/README.md was fixed
// (and after the first models were seen), so they never enter the verdict.
// They answer the questions a reader of an inconclusive verdict asks: is
// criterion (B) failing for the reason the rule meant (a previous-symbol
// head that collapses late in the window), does depth hurt at the smaller
// budgets, and how far is TF(4,4) from CTW's level.

// lateHoldAny reads criterion (B) post hoc: at each late query position
// that has a training target — q = len−ladderLate … len−2; the window's
// last position predicts a symbol past the window, so neither its output
// nor its attention is ever trained — the weight on key q−1 of the best
// layer-1 head at that position, whichever head it is. worst is the least
// of those weights over the positions, serving[h] the number of positions
// at which head h (1-based) is the best and keeps ≥ ladderHold, and last
// the best head's weight at the last position (NaN without a profile).
func lateHoldAny(p results.LadderProfile) (worst float64, serving map[int]int, last float64) {
	worst, last, serving = math.NaN(), math.NaN(), map[int]int{}
	if len(p.Prev) == 0 || len(p.Prev[0]) < 2 {
		return worst, serving, last
	}
	n := len(p.Prev[0])
	worst = math.Inf(1)
	for q := max(1, n-ladderLate); q < n-1; q++ {
		w, h := p.Best(q)
		worst = min(worst, w)
		if w >= ladderHold {
			serving[h]++
		}
	}
	if math.IsInf(worst, 1) { // no late position with a target
		worst = math.NaN()
	}
	last, _ = p.Best(n - 1)
	return worst, serving, last
}

// servingText lists serving as "head 3 at 23 of the 63 positions, head 4
// at 40" (of positions in all).
func servingText(serving map[int]int, of int) string {
	heads := make([]int, 0, len(serving))
	for h := range serving {
		heads = append(heads, h)
	}
	slices.Sort(heads)
	var parts []string
	for i, h := range heads {
		unit := ""
		if i == 0 {
			unit = fmt.Sprintf(" of the %d positions", of)
		}
		parts = append(parts, fmt.Sprintf("head %d at %d%s", h, serving[h], unit))
	}
	if len(parts) == 0 {
		return "no head"
	}
	return strings.Join(parts, ", ")
}

// ladderBeside are the post-hoc checks shown beside the verdict: (B′)
// criterion (B) over the trained positions with any head at each; (C′)
// criterion (C) at every budget with a deeper model; (E′) the budget at
// which TF(4,4)'s excess would reach CTW's (when the reference is not CTW);
// (F′) the same with a floor (ladder_floor.go).
func ladderBeside(cfg study.Config, res *eval.Result, profiles map[string]results.LadderProfile, top study.Model) []Check {
	var out []Check
	lo, hi := max(1, cfg.N-ladderLate), cfg.N-2
	for s := range cfg.SeedsOf(top) {
		label := results.RepLabel(top, s)
		claim := fmt.Sprintf("(B′) seed %d: at every query position %d..%d (0-based: (B)'s %d..%d but the window's last, %d, which has no training target), some layer-1 head of %s keeps ≥ %g of its attention on the previous key — not necessarily the same head at every position", s, lo, hi, lo, hi+1, hi+1, label, ladderHold)
		p, ok := profiles[label]
		if !ok {
			out = append(out, Check{Claim: claim, Verdict: undecided.String(), Numbers: "no attention profile"})
			continue
		}
		worst, serving, last := lateHoldAny(p)
		out = append(out, Check{Claim: claim, Verdict: holdsIf(worst >= ladderHold),
			Numbers: fmt.Sprintf("least best-head weight %.3f; ≥ %g by %s; at position %d (no training target) the best head has %.4f", worst, ladderHold, servingText(serving, hi-lo+1), hi+1, last)})
	}
	out = append(out, depthAtEveryBudget(cfg, res, top)...)
	if c, ok := ctwExtrapolation(cfg, res, top); ok {
		out = append(out, c)
	}
	if c, ok := floorExtrapolation(cfg, res, top); ok {
		out = append(out, c)
	}
	return out
}

// depthAtEveryBudget is criterion (C) at every budget of the ladder: each
// deeper model with learned positions against every seed of the two-layer
// model of its budget (paired second-half interval, upper end below
// +Margin). The largest budget's TF(4,4,4) is criterion (C) itself and is
// left out.
func depthAtEveryBudget(cfg study.Config, res *eval.Result, top study.Model) []Check {
	var out []Check
	for _, s := range cfg.Fig3Models {
		deep, err := study.ParseModel(s)
		if err != nil || deep.Sin || !deep.FF || !deep.LN || len(deep.Heads) <= len(top.Heads) {
			continue
		}
		if len(deep.Heads) == len(top.Heads)+1 && max(1, deep.Budget) == max(1, top.Budget) {
			continue // criterion (C)
		}
		base, ok := sameBudget(cfg, top, deep.Budget)
		if !ok {
			continue
		}
		dm := res.Method(deep.Label())
		for r := range cfg.SeedsOf(base) {
			claim := fmt.Sprintf("(C′) %s is within %g of %s or better (upper end below +%g)", deep.Label(), Margin, results.RepLabel(base, r), Margin)
			bm := res.Method(results.RepLabel(base, r))
			if dm == nil || bm == nil {
				out = append(out, Check{Claim: claim, Verdict: undecided.String(), Numbers: "a result is missing"})
				continue
			}
			m, lo, hi, ok := interval95(term{1, dm}, term{-1, bm})
			out = append(out, Check{Claim: claim, Verdict: pairedVerdict(ok, ok && hi < Margin), Numbers: fmt.Sprintf("%+.4f [%+.4f, %+.4f]", m, lo, hi)})
		}
	}
	return out
}

// sameBudget is the study's model of top's architecture (heads, FF, LN,
// positions) at the given budget.
func sameBudget(cfg study.Config, top study.Model, budget int) (study.Model, bool) {
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err == nil && slices.Equal(m.Heads, top.Heads) && m.Sin == top.Sin && m.FF == top.FF && m.LN == top.LN && max(1, m.Budget) == max(1, budget) {
			return m, true
		}
	}
	return study.Model{}, false
}

// ctwExtrapolation is the rule's extrapolation aimed at CTW's level
// instead of Markov(4)'s: the budget at which TF(4,4)'s second-half excess
// over the reference would equal CTW(D)'s. Not ok when the reference is
// CTW itself or the study has no CTW.
func ctwExtrapolation(cfg study.Config, res *eval.Result, top study.Model) (Check, bool) {
	ctw := results.First(res, "CTW")
	if ctw == nil || res.Reference < 0 || res.Reference >= len(res.Methods) || res.Methods[res.Reference].Name == ctw.Name {
		return Check{}, false
	}
	text := ladderExtrapolation(cfg, res, top, ctw)
	v := undecided.String()
	if strings.Contains(text, "; it reaches") {
		v = "extrapolated"
	}
	sum, n := 0.0, 0
	for r := range cfg.SeedsOf(top) {
		if x := res.Method(results.RepLabel(top, r)); x != nil {
			sum, n = sum+x.ExcessSecondHalf.Mean, n+1
		}
	}
	if n > 0 && sum/float64(n) <= ctw.ExcessSecondHalf.Mean {
		v = "already at or below"
		text = fmt.Sprintf("%s's mean excess %.4f is already at or below %s's %.4f at the largest budget fitted; %s", top.Label(), sum/float64(n), ctw.Name, ctw.ExcessSecondHalf.Mean, text)
	}
	if fit := powerResiduals(ladderPoints(cfg, res, top, -1)); fit != "" {
		text += "; " + fit
	}
	return Check{Claim: fmt.Sprintf("(E′) the budget at which %s's excess over %s would equal %s's (the rule's fit)", top.Architecture(), res.Methods[res.Reference].Name, ctw.Name),
		Verdict: v, Numbers: text}, true
}

// The ladder's plateau (docs/figures/ladder/README.md): every
// learned-position model sits at 0.85–0.86 nats of training loss before it
// drops; it has left the plateau at the first logged step at which the
// mean training loss of the exitRecords log records ending there is
// below exitLevel (nats/symbol).
const (
	exitLevel   = 0.80
	exitRecords = 5
)

// plateauExit is the step at which a training log leaves the plateau, and
// whether it does (records with a NaN loss are skipped).
func plateauExit(hist []transformer.LogEntry) (int, bool) {
	var win []float64
	for _, e := range hist {
		if math.IsNaN(e.TrainLoss) || e.Step == 0 {
			continue
		}
		win = append(win, e.TrainLoss)
		if len(win) > exitRecords {
			win = win[1:]
		}
		if len(win) == exitRecords {
			sum := 0.0
			for _, v := range win {
				sum += v
			}
			if sum/exitRecords < exitLevel {
				return e.Step, true
			}
		}
	}
	return 0, false
}

// exitText is a model's plateauExit in the ladder's table.
func exitText(hist []transformer.LogEntry, ok bool) string {
	switch {
	case !ok:
		return "no training log"
	case len(hist) == 0:
		return "empty training log"
	}
	if step, left := plateauExit(hist); left {
		return fmt.Sprintf("step %d", step)
	}
	last := 0
	for _, e := range hist {
		last = max(last, e.Step)
	}
	return fmt.Sprintf("not by step %d", last)
}

// ladderTable lists every transformer of the ladder, every seed: its
// second-half excess over the reference and its paired second-half
// difference from Markov(4) (95% t-intervals over the test windows), and
// the step at which its training loss left the plateau (plateauExit).
func ladderTable(cfg study.Config, mg *results.Merged, mk *eval.MethodResult) table {
	res := mg.Res
	ref := res.Methods[res.Reference].Name
	t := table{Caption: fmt.Sprintf("Every model of the ladder, every seed (second half of the window, nats/symbol, 95%% t-intervals over the %d test windows, each on its own: not adjusted for multiplicity). Left the plateau: the first logged step at which the mean training loss of the last %d log records is below %.2f nats.", len(mk.SecondHalfWindows), exitRecords, exitLevel),
		Head: []string{"model", "training tokens", "excess over " + ref, "model − " + mk.Name + ", paired", "left the plateau"}}
	for _, s := range cfg.Fig3Models {
		m, err := study.ParseModel(s)
		if err != nil {
			continue
		}
		tokens := cfg.ModelTrainTokens(m)
		for r := range cfg.SeedsOf(m) {
			label := results.RepLabel(m, r)
			x := res.Method(label)
			hist, logged := mg.Logs[label]
			if x == nil {
				t.Rows = append(t.Rows, []string{label, fmt.Sprintf("%.3gM", tokens/1e6), "no result", "", exitText(hist, logged)})
				continue
			}
			e := x.ExcessSecondHalf
			d := "not paired"
			if mean, lo, hi, ok := interval95(term{1, x}, term{-1, mk}); ok {
				d = fmt.Sprintf("%+.4f [%+.4f, %+.4f]", mean, lo, hi)
			}
			t.Rows = append(t.Rows, []string{label, fmt.Sprintf("%.3gM", tokens/1e6), fmt.Sprintf("%.4f [%.4f, %.4f]", e.Mean, e.Lo, e.Hi), d, exitText(hist, logged)})
		}
	}
	return t
}
