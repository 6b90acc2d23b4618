package reproduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/transformer"
)

// Finding is what a figure's paragraph says: the paper's claim and what
// this run found (generated from the numbers).
type Finding struct {
	Claim string `json:"claim"`
	Found string `json:"found"`
	// Agrees is false when the run's finding differs from the claim.
	Agrees bool `json:"agrees"`
	// Checks are the parts of the claim, each decided from the numbers;
	// Verdict sums them up: "fails" when one fails, else "inconclusive"
	// when one is, else "holds" (settle).
	Checks  []Check `json:"checks,omitempty"`
	Verdict string  `json:"verdict,omitempty"`
	// Summary states the verdict and the count of checks by verdict.
	Summary string `json:"summary,omitempty"`
}

// acrossReplicates is find's finding with every check decided on each
// training replicate (the study's models replaced by their replicate r,
// r = 0..S−1; the baselines are shared) and the verdicts combined by
// combineSeeds. A check is matched across replicates by its claim; a
// replicate that lacks a check's models (a missing stage or log) gives it
// no vote, and the check's numbers and the summary say so. Its numbers
// are replicate 0's with the per-seed verdicts; the text (Found) is
// replicate 0's.
func acrossReplicates(cfg Config, mg *merged, find func(Config, *merged) Finding) Finding {
	f := find(cfg, mg)
	S := cfg.NumSeeds()
	if S < 2 || len(f.Checks) == 0 {
		return f
	}
	per := make([][]string, len(f.Checks)) // per[i][r]: check i's verdict on replicate r
	for i, c := range f.Checks {
		per[i] = []string{c.Verdict}
	}
	for r := 1; r < S; r++ {
		byClaim := claimVerdicts(find(cfg, replicateView(cfg, mg, r)).Checks)
		seen := map[string]int{}
		for i, c := range f.Checks {
			k := claimKey(c.Claim, seen)
			v, ok := byClaim[k]
			if !ok {
				v = noVote
			}
			per[i] = append(per[i], v)
		}
	}
	short := 0
	for i := range f.Checks {
		f.Checks[i].Verdict = combineSeeds(per[i])
		f.Checks[i].Numbers += " (replicate 0; " + bySeed(per[i]) + ")"
		if votes(per[i]) < S {
			short++
		}
	}
	f.settle()
	if short == 0 {
		f.Summary += fmt.Sprintf("; each check decided on each of the %d training seeds", S)
	} else {
		f.Summary += fmt.Sprintf("; each check decided on each of the %d training seeds that has its models (%d check%s on fewer seeds: results missing, see “by seed”)", S, short, plural(short))
	}
	return f
}

// noVote marks a replicate that has no result for a check.
const noVote = "no result"

// combineSeeds combines one check's verdicts on the training seeds (noVote
// entries left out): it holds when it holds on every seed that voted,
// fails when it fails on a strict majority of them, and is inconclusive
// otherwise (also when no seed voted).
func combineSeeds(per []string) string {
	n := map[string]int{}
	for _, v := range per {
		n[v]++
	}
	voted := len(per) - n[noVote]
	switch {
	case voted == 0:
		return undecided.String()
	case n[holds.String()] == voted:
		return holds.String()
	case 2*n[fails.String()] > voted:
		return fails.String()
	}
	return undecided.String()
}

// votes is the number of seeds in per that voted.
func votes(per []string) int {
	k := 0
	for _, v := range per {
		if v != noVote {
			k++
		}
	}
	return k
}

// bySeed lists the per-seed verdicts: "by seed: holds, fails, no result".
func bySeed(per []string) string { return "by seed: " + strings.Join(per, ", ") }

// claimVerdicts maps each check's claim (numbered when it repeats, see
// claimKey) to its verdict.
func claimVerdicts(cs []Check) map[string]string {
	m := map[string]string{}
	seen := map[string]int{}
	for _, c := range cs {
		m[claimKey(c.Claim, seen)] = c.Verdict
	}
	return m
}

// claimKey is claim, with its occurrence number when it is not the first
// (counted in seen), so that repeated claims match in order.
func claimKey(claim string, seen map[string]int) string {
	k := seen[claim]
	seen[claim]++
	if k == 0 {
		return claim
	}
	return fmt.Sprintf("%s #%d", claim, k+1)
}

// replicateView is mg with each of the study's models replaced by its
// training replicate r (named as replicate 0, so that a finding's code
// reads it unchanged); a model without replicate r is left out.
func replicateView(cfg Config, mg *merged, r int) *merged {
	res := *mg.Res
	res.Methods = nil
	rep := map[string]string{} // label → replicate r's label
	for _, m := range cfg.Models() {
		rep[m.Label()] = RepLabel(m, r)
	}
	for _, mr := range mg.Res.Methods {
		if isReplicate(cfg, mr.Name) {
			continue
		}
		if name, ok := rep[mr.Name]; ok {
			rr := mg.Res.Method(name)
			if rr == nil {
				continue
			}
			c := *rr
			c.Name = mr.Name
			res.Methods = append(res.Methods, c)
			continue
		}
		res.Methods = append(res.Methods, mr)
	}
	if mg.Res.Reference < len(mg.Res.Methods) {
		ref := mg.Res.Ref()
		for i := range res.Methods {
			if res.Methods[i].Name == ref.Name {
				res.Reference = i
			}
		}
	}
	v := &merged{Res: &res, Construct: mg.Construct, CInfo: mg.CInfo, Train: mg.Train, Logs: map[string][]transformer.LogEntry{}}
	for label, name := range rep {
		if h, ok := mg.Logs[name]; ok {
			v.Logs[label] = h
		}
	}
	return v
}

// Check is one part of a paper's claim decided from this run's numbers.
// A caveat is a condition under which the other checks mean what they
// say (e.g. that a model had finished learning): when it fails, the
// claim is inconclusive rather than failed.
type Check struct {
	Claim   string `json:"claim"`
	Verdict string `json:"verdict"` // "holds", "fails" or "inconclusive"
	Numbers string `json:"numbers"`
	Caveat  bool   `json:"caveat,omitempty"`
}

// String is the verdict's word: "holds", "fails" or "inconclusive".
func (v verdict) String() string {
	switch v {
	case holds:
		return "holds"
	case fails:
		return "fails"
	}
	return "inconclusive"
}

// check adds a part of the claim with its verdict and the numbers that
// decided it.
func (f *Finding) check(claim string, v verdict, numbers string) {
	f.Checks = append(f.Checks, Check{Claim: claim, Verdict: v.String(), Numbers: numbers})
}

// caveat adds a caveat (see Check) with its verdict and numbers.
func (f *Finding) caveat(claim string, v verdict, numbers string) {
	f.Checks = append(f.Checks, Check{Claim: claim, Verdict: v.String(), Numbers: numbers, Caveat: true})
}

// settle sets Verdict and Agrees from the checks (without checks, from
// Agrees) and appends the count of checks by verdict to Found. A failed
// caveat counts as inconclusive.
func (f *Finding) settle() {
	if len(f.Checks) == 0 {
		f.Verdict = map[bool]string{true: holds.String(), false: fails.String()}[f.Agrees]
		return
	}
	n := map[string]int{}
	for _, c := range f.Checks {
		v := c.Verdict
		if c.Caveat && v == fails.String() {
			v = undecided.String()
		}
		n[v]++
	}
	switch {
	case n[fails.String()] > 0:
		f.Verdict = fails.String()
	case n[undecided.String()] > 0:
		f.Verdict = undecided.String()
	default:
		f.Verdict = holds.String()
	}
	f.Agrees = f.Verdict == holds.String()
	verb := f.Verdict
	if verb == undecided.String() {
		verb = "is " + verb
	}
	f.Summary = fmt.Sprintf("the claim %s (of its %d checks below, %d hold, %d fail, %d are inconclusive or failed caveats)",
		verb, len(f.Checks), n[holds.String()], n[fails.String()], n[undecided.String()])
}

// settleChecked is settle for a finding decided by checks only: without
// any check (nothing to compare) its verdict is inconclusive.
func (f *Finding) settleChecked() {
	if len(f.Checks) == 0 {
		f.Verdict, f.Agrees = undecided.String(), false
		f.Summary = "inconclusive (nothing to check the claim against)"
		return
	}
	f.settle()
}

// NonInferiorityMargin (nats per symbol of second-half excess over CTW)
// is how much worse a model may be than another and still count as "not
// worse" (notWorse: a deeper transformer against a shallower one, Fig. 3):
// a smaller difference is not a degradation one could read off a figure,
// and with 1000 test windows a far smaller one is statistically clear.
const NonInferiorityMargin = 0.005

// difference is the 95% interval of a − b in second-half excess over CTW
// (nats per symbol) and the text that states it. When both results hold
// per-window losses (the same test windows) it is the paired interval
// across windows (eval.PairedSecondHalf); otherwise the conservative
// [a.Lo − b.Hi, a.Hi − b.Lo] from the two intervals, which contains the
// difference whenever both intervals contain their means. Lo and Hi are
// NaN when undefined (a single window). paired says which interval it is.
func difference(a, b *eval.MethodResult) (d eval.Interval, paired bool, text string) {
	text = fmt.Sprintf("%s %s vs %s %s", a.Name, excessSH(a), b.Name, excessSH(b))
	if p, ok := eval.PairedSecondHalf(a, b, eval.DefaultConfidence); ok && !math.IsNaN(p.Lo) {
		return p, true, text + fmt.Sprintf("; paired difference %+.4f ± %.4f", p.Mean, p.HalfWidth())
	}
	x, y := a.ExcessSecondHalf, b.ExcessSecondHalf
	return eval.Interval{Mean: x.Mean - y.Mean, Lo: x.Lo - y.Hi, Hi: x.Hi - y.Lo}, false, text
}

// worse decides "a's second-half excess over CTW is higher than b's" by
// the interval of a − b (difference): holds when it lies above 0, fails
// when below, inconclusive when it contains 0 or is undefined.
func worse(a, b *eval.MethodResult) (verdict, string) {
	d, _, text := difference(a, b)
	switch {
	case d.Lo > 0:
		return holds, text
	case d.Hi < 0:
		return fails, text
	}
	return undecided, text
}

// notWorse decides "a is not worse than b" as a non-inferiority test at
// NonInferiorityMargin on the interval of a − b (difference): holds when
// its upper end is at most the margin, fails when its lower end is above
// the margin, inconclusive otherwise and when it is undefined.
func notWorse(a, b *eval.MethodResult) (verdict, string) {
	d, _, text := difference(a, b)
	text += fmt.Sprintf("; margin %g nats", NonInferiorityMargin)
	switch {
	case d.Hi <= NonInferiorityMargin:
		return holds, text
	case d.Lo > NonInferiorityMargin:
		return fails, text
	}
	return undecided, text
}

// equivalent decides "a and b are within ±tol of each other" as an
// equivalence test on the interval of a − b (difference): see within.
func equivalent(a, b *eval.MethodResult, tol float64) (verdict, string) {
	d, paired, text := difference(a, b)
	if !paired {
		text += fmt.Sprintf("; difference %+.4f, interval [%+.4f, %+.4f]", d.Mean, d.Lo, d.Hi)
	}
	return within(d.Lo, d.Hi, tol), text + fmt.Sprintf("; tolerance ±%g nats", tol)
}

// within decides "the difference is within ±tol" from its interval
// [lo, hi]: holds when the whole interval lies within ±tol, fails when it
// lies wholly outside (above tol or below −tol), inconclusive when it
// reaches across a bound or is undefined (NaN).
func within(lo, hi, tol float64) verdict {
	switch {
	case lo >= -tol && hi <= tol:
		return holds
	case lo > tol || hi < -tol:
		return fails
	}
	return undecided
}

// excessSH formats a method's second-half excess over CTW.
func excessSH(m *eval.MethodResult) string {
	return fmt.Sprintf("%.3f ± %.3f", m.ExcessSecondHalf.Mean, m.ExcessSecondHalf.HalfWidth())
}

// clearlyAbove reports whether a's second-half excess interval lies above b's.
func clearlyAbove(a, b *eval.MethodResult) bool {
	return a.ExcessSecondHalf.Lo > b.ExcessSecondHalf.Hi
}

// relation says how a compares with b over the second half: "clearly
// better than", "clearly worse than" (decided by worse) or "within noise
// of".
func relation(a, b *eval.MethodResult) string {
	switch v, _ := worse(a, b); v {
	case holds:
		return "clearly worse than"
	case fails:
		return "clearly better than"
	}
	return "within noise of"
}

// first is the first method of res whose name starts with prefix, or nil.
func first(res *eval.Result, prefix string) *eval.MethodResult {
	for i := range res.Methods {
		if strings.HasPrefix(res.Methods[i].Name, prefix) {
			return &res.Methods[i]
		}
	}
	return nil
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
