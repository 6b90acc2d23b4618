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
// r = 0..S−1; the baselines are shared): a check holds when it holds for
// every replicate, fails when it fails for most, and is inconclusive
// otherwise; its numbers are replicate 0's with the per-seed verdicts.
// The text (Found) is replicate 0's.
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
		fr := find(cfg, replicateView(cfg, mg, r))
		if len(fr.Checks) != len(f.Checks) {
			continue // replicate r is incomplete: it does not vote
		}
		for i, c := range fr.Checks {
			if c.Claim == f.Checks[i].Claim {
				per[i] = append(per[i], c.Verdict)
			}
		}
	}
	for i := range f.Checks {
		n := map[string]int{}
		for _, v := range per[i] {
			n[v]++
		}
		v := undecided.String()
		switch {
		case n[holds.String()] == len(per[i]):
			v = holds.String()
		case 2*n[fails.String()] > len(per[i]):
			v = fails.String()
		}
		f.Checks[i].Verdict = v
		f.Checks[i].Numbers += fmt.Sprintf(" (replicate 0; by seed: %s)", strings.Join(per[i], ", "))
	}
	f.settle()
	f.Summary += fmt.Sprintf("; each check decided on each of the %d training seeds", S)
	return f
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

// worse decides "a's second-half excess over CTW is higher than b's".
// When both results hold per-window losses (the same test windows), by the
// paired 95% interval of a − b across windows (eval.PairedSecondHalf):
// holds when it lies above 0, fails when below, inconclusive when it
// contains 0. Otherwise by the two intervals: holds when a's lies above
// b's, fails when below, inconclusive when they overlap (conservative).
func worse(a, b *eval.MethodResult) (verdict, string) {
	text := fmt.Sprintf("%s %s vs %s %s", a.Name, excessSH(a), b.Name, excessSH(b))
	if d, ok := eval.PairedSecondHalf(a, b, eval.DefaultConfidence); ok && !math.IsNaN(d.Lo) {
		text += fmt.Sprintf("; paired difference %+.4f ± %.4f", d.Mean, d.HalfWidth())
		switch {
		case d.Lo > 0:
			return holds, text
		case d.Hi < 0:
			return fails, text
		}
		return undecided, text
	}
	v := undecided
	switch {
	case clearlyAbove(a, b):
		v = holds
	case clearlyAbove(b, a):
		v = fails
	}
	return v, text
}

// notWorse decides "a is not worse than b": fails when a is worse (see
// worse); holds when a's mean is at most b's upper bound (a better, or
// within b's own interval); inconclusive otherwise, and when an interval
// is undefined (a single window).
func notWorse(a, b *eval.MethodResult) (verdict, string) {
	v, text := worse(a, b)
	switch {
	case v == holds:
		return fails, text
	case math.IsNaN(a.ExcessSecondHalf.Mean) || math.IsNaN(b.ExcessSecondHalf.Hi):
		return undecided, text
	case a.ExcessSecondHalf.Mean <= b.ExcessSecondHalf.Hi:
		return holds, text
	}
	return undecided, text
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
