package results

import (
	"math"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/reproduce/study"
)

// MethodNames returns the result's names of the methods whose names start
// with one of the prefixes, in the order of the prefixes.
func MethodNames(res *eval.Result, prefixes ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range prefixes {
		for _, m := range res.Methods {
			if strings.HasPrefix(m.Name, p) && !seen[m.Name] {
				seen[m.Name] = true
				out = append(out, m.Name)
			}
		}
	}
	return out
}

// Labels of the models of a list.
func Labels(specs []string) []string {
	var out []string
	for _, s := range specs {
		if m, err := study.ParseModel(s); err == nil {
			out = append(out, m.Label())
		}
	}
	return out
}

// Exact returns the names in want that res has.
func Exact(res *eval.Result, want ...string) []string {
	var out []string
	for _, w := range want {
		if res.Method(w) != nil {
			out = append(out, w)
		}
	}
	return out
}

// RefShort names the reference of the excesses briefly ("Bayes" or
// "CTW"); RefLong with its full name.
func RefShort(res *eval.Result) string {
	if strings.HasPrefix(res.Ref().Name, "Bayes") {
		return "Bayes"
	}
	return "CTW"
}

func RefLong(res *eval.Result) string {
	if strings.HasPrefix(res.Ref().Name, "Bayes") {
		return "the exact Bayes predictor " + res.Ref().Name
	}
	return res.Ref().Name
}

// ValLoss is a method's mean second-half loss on the validation windows,
// averaged over the given replicate labels present in val; ok is false
// when none is.
func ValLoss(val *eval.Result, names ...string) (float64, bool) {
	if val == nil {
		return 0, false
	}
	s, k := 0.0, 0
	for _, n := range names {
		if r := val.Method(n); r != nil {
			s += r.SecondHalf.Mean
			k++
		}
	}
	if k == 0 {
		return 0, false
	}
	return s / float64(k), true
}

// SelectedFixedOrder is the Markov(k) estimator with the lowest
// second-half loss on the validation windows (its test result), or nil.
func SelectedFixedOrder(mg *Merged) *eval.MethodResult {
	best, bestLoss := "", math.Inf(1)
	for _, n := range MethodNames(mg.Res, "Markov") {
		if l, ok := ValLoss(mg.Val, n); ok && l < bestLoss {
			best, bestLoss = n, l
		}
	}
	if best == "" {
		return nil
	}
	return mg.Res.Method(best)
}

// First is the first method of res whose name starts with prefix, or nil.
func First(res *eval.Result, prefix string) *eval.MethodResult {
	for i := range res.Methods {
		if strings.HasPrefix(res.Methods[i].Name, prefix) {
			return &res.Methods[i]
		}
	}
	return nil
}
