package experiment

import (
	"fmt"
	"strings"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/methods"
	"github.com/vomc/vomc/plot"
)

// Pairs are pairs of methods whose paired difference A − B is reported
// beside the excesses (eval.Config.Pairs), each method named as
// methods.Find reads a name: its spec in any spelling, its label, or its
// bare kind when one method has it. As a flag value each Set adds the
// pairs of "A,B" or "A,B;C,D": pairs are separated by ';', and the two
// names of a pair by the one comma outside parentheses and brackets, so
// that labels such as "CTW(D=5,λ=0.15,α=0.5)" keep theirs.
type Pairs []eval.Pair

// Set adds the pairs of s (flag.Value).
func (p *Pairs) Set(s string) error {
	for _, item := range strings.Split(s, ";") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		names := plot.SplitTop(item)
		if len(names) != 2 || names[0] == "" || names[1] == "" {
			return fmt.Errorf("pair %q: want two methods, A,B (by spec or label; several pairs: A,B;C,D)", item)
		}
		*p = append(*p, eval.Pair{A: names[0], B: names[1]})
	}
	return nil
}

// String is the flag form, "A,B;C,D".
func (p Pairs) String() string {
	s := make([]string, len(p))
	for i, q := range p {
		s[i] = q.A + "," + q.B
	}
	return strings.Join(s, ";")
}

// check checks, before any work, the names of the pairs that are written
// as specifications (methods.List.CheckName).
func (p Pairs) check(list methods.List) error {
	for _, q := range p {
		for _, name := range []string{q.A, q.B} {
			if err := list.CheckName(name); err != nil {
				return fmt.Errorf("pair %s,%s: %w", q.A, q.B, err)
			}
		}
	}
	return nil
}

// resolve are the pairs with each name replaced by the label of the
// method it means among built (methods.Find).
func (p Pairs) resolve(built []methods.Built) ([]eval.Pair, error) {
	out := make([]eval.Pair, len(p))
	for i, q := range p {
		a, err := methods.Find(built, q.A)
		if err != nil {
			return nil, fmt.Errorf("pair %s,%s: %w", q.A, q.B, err)
		}
		b, err := methods.Find(built, q.B)
		if err != nil {
			return nil, fmt.Errorf("pair %s,%s: %w", q.A, q.B, err)
		}
		out[i] = eval.Pair{A: built[a].Predictor.Name(), B: built[b].Predictor.Name()}
	}
	return out, nil
}
