package methods

import (
	"fmt"
	"strings"
)

// Find returns the index of the method of built that name means, tried
// in this order:
//
//  1. its label (the predictor's Name), exactly: "CTW(D=5,λ=0.15,α=0.5)";
//  2. its specification in any spelling (ParseSpec, then the same
//     canonical form): "ctw:D=5", "CTW:d=5";
//  3. a bare kind that exactly one method has: "bayes", "tf".
//
// Otherwise it is an error that lists the methods by spec and label, with
// the closest of them when one is close (did you mean …?).
func Find(built []Built, name string) (int, error) {
	name = strings.TrimSpace(name)
	for i, b := range built {
		if b.Predictor.Name() == name {
			return i, nil
		}
	}
	if s, err := ParseSpec(name); err == nil {
		for i, b := range built {
			if b.Spec.String() == s.String() {
				return i, nil
			}
		}
		if len(s.params) == 0 {
			found := -1
			for i, b := range built {
				if b.Spec.Kind == s.Kind {
					if found >= 0 {
						return 0, fmt.Errorf("%q is ambiguous: %s and %s are both %s methods (name one by its spec or label)", name, built[found].Spec.text, b.Spec.text, s.Kind)
					}
					found = i
				}
			}
			if found >= 0 {
				return found, nil
			}
		}
	}
	var all, cands []string
	for _, b := range built {
		all = append(all, fmt.Sprintf("%s (%q)", b.Spec.text, b.Predictor.Name()))
		cands = append(cands, b.Spec.text, b.Predictor.Name())
	}
	return 0, fmt.Errorf("no method %q%s among %s", name, suggest(name, cands), strings.Join(all, ", "))
}

// Reference returns the index in built of the reference of every excess:
// the method name means (Find) when name is given; else, by kind, the
// first bayes method (the exact Bayes predictor of the data's prior), else
// the first ctw, else the first method.
func Reference(built []Built, name string) (int, error) {
	if len(built) == 0 {
		return 0, fmt.Errorf("methods: no methods to choose a reference among")
	}
	if name != "" {
		i, err := Find(built, name)
		if err != nil {
			return 0, fmt.Errorf("reference method: %w", err)
		}
		return i, nil
	}
	for _, kind := range []string{"bayes", "ctw"} {
		for i, b := range built {
			if b.Spec.Kind == kind {
				return i, nil
			}
		}
	}
	return 0, nil
}
