package methods

import (
	"fmt"
	"strings"
)

// Names are the method kinds, in the order the documentation lists them.
var Names = []string{"bayes", "ctw", "kn", "ppm", "markov", "unigram", "tf", "construct", "synth", "npy", "torch"}

// suggest is `; did you mean "x"?` for the candidate closest to s by edit
// distance, case ignored, when it is close (at most a third of the
// longer's length, and at most 2), else "".
func suggest(s string, candidates []string) string {
	best, bd := "", 1<<30
	for _, c := range candidates {
		if d := Distance(strings.ToLower(s), strings.ToLower(c)); d < bd {
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
