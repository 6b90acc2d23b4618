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
	list := make(List, len(built))
	for i, b := range built {
		list[i] = b.Spec
	}
	if s, ok := asSpec(name); ok {
		if i, err := list.matchSpec(name, s); err != nil || i >= 0 {
			return i, err
		}
	}
	var all, cands []string
	for _, b := range built {
		all = append(all, fmt.Sprintf("%s (%q)", b.Spec.text, b.Predictor.Name()))
		cands = append(cands, b.Spec.text, b.Predictor.Name())
	}
	return 0, fmt.Errorf("no method %q%s among %s", name, suggest(name, cands), strings.Join(all, ", "))
}

// CheckName checks, before any work, a name that Find will look up among
// l's methods once they are built: a name written as a specification must
// mean one of them (the same canonical form, or a bare kind exactly one
// has), unless a method is labelled so (name=); any other name is a label,
// which only Find can check.
func (l List) CheckName(name string) error {
	name = strings.TrimSpace(name)
	s, ok := asSpec(name)
	if !ok {
		return nil // a label
	}
	for _, m := range l {
		if v, ok := m.Value("name"); ok && v == name {
			return nil
		}
	}
	i, err := l.matchSpec(name, s)
	if err == nil && i < 0 {
		texts := make([]string, len(l))
		for j, m := range l {
			texts[j] = m.text
		}
		err = fmt.Errorf("no method %q%s among %s", name, suggest(name, texts), strings.Join(texts, ", "))
	}
	return err
}

// asSpec reads name as a specification: a bare kind (even one with
// required parameters, "tf"), or a whole spec; ok is false when it is
// neither (then it can only be a label).
func asSpec(name string) (s Spec, ok bool) {
	if k := strings.ToLower(name); kinds[k].build != nil {
		return Spec{Kind: k, text: name}, true
	}
	s, err := ParseSpec(name)
	return s, err == nil
}

// matchSpec is the index of the method of l that s (typed as name) means:
// the one of the same canonical form, else, s a bare kind, the one method
// of that kind; −1 when none, an error when several have the kind.
func (l List) matchSpec(name string, s Spec) (int, error) {
	for i, m := range l {
		if m.String() == s.String() {
			return i, nil
		}
	}
	if len(s.params) > 0 {
		return -1, nil
	}
	found := -1
	for i, m := range l {
		if m.Kind == s.Kind {
			if found >= 0 {
				return 0, fmt.Errorf("%q is ambiguous: %s and %s are both %s methods (name one by its spec or label)", name, l[found].text, m.text, s.Kind)
			}
			found = i
		}
	}
	return found, nil
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
