package methods

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// knownParams are the parameters each method accepts (lower case).
var knownParams = map[string][]string{
	"bayes":     nil,
	"ctw":       {"d", "lambda", "alpha", "init", "form"},
	"kn":        {"order", "delta", "cont"},
	"ppm":       {"order", "escape", "excl", "norm"},
	"markov":    {"k", "alpha", "init"},
	"unigram":   {"alpha", "init"},
	"tf":        {"path", "name"},
	"synth":     {"path", "name"},
	"npy":       {"path", "name"},
	"construct": {"d", "lambda", "alpha", "c"},
}

// Names are the method names, in the order the documentation lists them.
var Names = []string{"bayes", "ctw", "kn", "ppm", "markov", "unigram", "tf", "construct", "synth", "npy"}

// Check parses every method of list and checks, before anything is built
// or tuned, that each names a known method with known parameters (an
// unknown one gets the closest known name, "did you mean …?", and the list
// of valid ones) and that the files its path parameter names exist. Build
// calls it first, so that a typo in the fifth method is reported before
// the first is tuned.
func Check(list string) error {
	n := 0
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		n++
		sp, err := parseOne(s)
		if err != nil {
			return err
		}
		params, ok := knownParams[sp.name]
		if !ok {
			return fmt.Errorf("methods: unknown method %q%s (methods: %s)", sp.name, suggest(sp.name, Names), strings.Join(Names, ", "))
		}
		keys := make([]string, 0, len(sp.params))
		for k := range sp.params {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !contains(params, k) {
				valid := "none"
				if len(params) > 0 {
					valid = strings.Join(params, ", ")
				}
				return fmt.Errorf("methods: %q: %s takes no parameter %q%s (its parameters: %s)", sp.text, sp.name, k, suggest(k, params), valid)
			}
		}
		if p, ok := sp.params["path"]; ok {
			if _, err := os.Stat(p); err != nil {
				return fmt.Errorf("methods: %q: %w", sp.text, err)
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("methods: no method in %q", list)
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// suggest is `; did you mean "x"?` for the candidate closest to s by edit
// distance when it is close (at most a third of the longer's length, and
// at most 2), else "".
func suggest(s string, candidates []string) string {
	best, bd := "", 1<<30
	for _, c := range candidates {
		if d := Distance(s, c); d < bd {
			best, bd = c, d
		}
	}
	if best == "" || bd > 2 || 3*bd > max(len(s), len(best)) {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// Distance is the Levenshtein edit distance between a and b (insertions,
// deletions and substitutions of bytes, each costing 1).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
