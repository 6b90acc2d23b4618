package report

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/results"
	"github.com/vomc/vomc/reproduce/study"
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
func acrossReplicates(cfg study.Config, mg *results.Merged, find func(study.Config, *results.Merged) Finding) Finding {
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
		k := 0
		for _, v := range per[i] {
			if v == holds.String() {
				k++
			}
		}
		f.Checks[i].Numbers += fmt.Sprintf(" (replicate 0; holds in %d of %d seeds; %s)", k, votes(per[i]), bySeed(per[i]))
		if votes(per[i]) < S {
			short++
		}
	}
	f.settle()
	if short == 0 {
		f.Summary += fmt.Sprintf("; each check decided on each of the %d training seeds (Holm-adjusted within each seed) and combined with seeds as the unit: it holds when it holds in every seed, fails when it fails in a strict majority, and is inconclusive otherwise", S)
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
func replicateView(cfg study.Config, mg *results.Merged, r int) *results.Merged {
	res := *mg.Res
	res.Methods = nil
	rep := map[string]string{} // label → replicate r's label
	for _, m := range cfg.Models() {
		rep[m.Label()] = results.RepLabel(m, r)
	}
	for _, mr := range mg.Res.Methods {
		if results.IsReplicate(cfg, mr.Name) {
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
	v := &results.Merged{Res: &res, Val: mg.Val, Construct: mg.Construct, CInfo: mg.CInfo, Train: mg.Train, Logs: map[string][]transformer.LogEntry{}}
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
	// Tested checks are decided by p-values (see report_stats.go): PHold
	// and PFail as tested, Holm-adjusted across the figure's tested checks
	// by settle.
	Tested bool    `json:"tested,omitempty"`
	PHold  float64 `json:"p_hold,omitempty"`
	PFail  float64 `json:"p_fail,omitempty"`
	// decided is set once adjust has decided the check (a combined
	// verdict across seeds is not decided again).
	decided bool
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

// test adds a part of the claim decided by a test (see report_stats.go);
// its verdict is set by settle, after the multiplicity adjustment.
func (f *Finding) test(claim string, t test) {
	c := Check{Claim: claim, Numbers: t.Text, Verdict: undecided.String()}
	if t.OK {
		c.Tested, c.PHold, c.PFail = true, t.PHold, t.PFail
	}
	f.Checks = append(f.Checks, c)
}

// caveatTest adds a caveat decided by a test.
func (f *Finding) caveatTest(claim string, t test) {
	f.test(claim, t)
	f.Checks[len(f.Checks)-1].Caveat = true
}

// adjust decides the tested checks: their PHold and PFail are
// Holm-adjusted across the tested checks of the finding; a check holds when
// its adjusted PHold is below Alpha, fails when its adjusted PFail is, and
// is inconclusive otherwise. The numbers state the adjusted p-values.
func (f *Finding) adjust() {
	var idx []int
	var ph, pf []float64
	for i, c := range f.Checks {
		if c.Tested && !c.decided {
			idx = append(idx, i)
			ph = append(ph, c.PHold)
			pf = append(pf, c.PFail)
		}
	}
	ah, af := eval.Holm(ph), eval.Holm(pf)
	for k, i := range idx {
		c := &f.Checks[i]
		v := undecided
		switch {
		case ah[k] < Alpha:
			v = holds
		case af[k] < Alpha:
			v = fails
		}
		c.Verdict, c.decided = v.String(), true
		c.Numbers += fmt.Sprintf("; p for “holds” %s, for “fails” %s (Holm-adjusted over the %d tests)", pval(ah[k]), pval(af[k]), len(idx))
	}
}

// pval formats a p-value.
func pval(p float64) string {
	if p < 1e-4 {
		return "< 1e-4"
	}
	return fmt.Sprintf("%.3g", p)
}

// caveat adds a caveat (see Check) with its verdict and numbers.
func (f *Finding) caveat(claim string, v verdict, numbers string) {
	f.Checks = append(f.Checks, Check{Claim: claim, Verdict: v.String(), Numbers: numbers, Caveat: true})
}

// settle sets Verdict and Agrees from the checks (without checks, from
// Agrees) and appends the count of checks by verdict to Found. A failed
// caveat counts as inconclusive.
func (f *Finding) settle() {
	f.adjust()
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
	switch {
	case worse(a, b).verdict() == holds:
		return "clearly worse than"
	case worse(b, a).verdict() == holds:
		return "clearly better than"
	case equivalent(a, b, Margin).verdict() == holds:
		return fmt.Sprintf("within ±%g nats of", Margin)
	}
	return "within noise of"
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
