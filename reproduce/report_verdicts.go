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
