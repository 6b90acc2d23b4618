package reproduce

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
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
}

// Check is one part of a paper's claim decided from this run's numbers.
type Check struct {
	Claim   string `json:"claim"`
	Verdict string `json:"verdict"` // "holds", "fails" or "inconclusive"
	Numbers string `json:"numbers"`
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

// settle sets Verdict and Agrees from the checks (without checks, from
// Agrees) and appends the count of checks by verdict to Found.
func (f *Finding) settle() {
	if len(f.Checks) == 0 {
		f.Verdict = map[bool]string{true: holds.String(), false: fails.String()}[f.Agrees]
		return
	}
	n := map[string]int{}
	for _, c := range f.Checks {
		n[c.Verdict]++
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
	f.Found += fmt.Sprintf(" Verdict: the claim %s (of its %d checks below, %d hold, %d fail, %d are inconclusive).",
		f.Verdict, len(f.Checks), n[holds.String()], n[fails.String()], n[undecided.String()])
}

// worse decides "a's second-half excess over CTW is higher than b's":
// holds when a's 95% interval lies above b's, fails when it lies below,
// inconclusive when they overlap (intervals across the test windows).
func worse(a, b *eval.MethodResult) (verdict, string) {
	v := undecided
	switch {
	case clearlyAbove(a, b):
		v = holds
	case clearlyAbove(b, a):
		v = fails
	}
	return v, fmt.Sprintf("%s %s vs %s %s", a.Name, excessSH(a), b.Name, excessSH(b))
}

// notWorse decides "a is not worse than b": fails when a's interval lies
// above b's, holds otherwise (a clearly better, or within noise).
func notWorse(a, b *eval.MethodResult) (verdict, string) {
	v, text := worse(a, b)
	if v == holds {
		return fails, text
	}
	return holds, text
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
