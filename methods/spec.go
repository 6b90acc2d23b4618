package methods

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Spec is one method specification, parsed once (ParseSpec, Parse) into
// its kind and its parameters, every value checked against the kind's
// table (kinds) before any work. Check, MemoryEstimate, Build, the labels
// and Find all read this value; none parses the text again.
//
// Case is handled one way: kinds and parameter names are matched without
// regard to case ("CTW:d=5" is "ctw:D=5"), and so are keyword values (init,
// form, escape, the booleans, c=inf); paths and labels (path=, name=) are
// taken as typed. Spaces around each part are ignored. String gives the
// canonical form: the kind in lower case, the parameters in the order of
// the kind's table and spelled as documented, numbers in their shortest
// form, keywords as documented, flags that are false left out (false is
// every flag's default). Two specs with the same canonical form build the
// same predictor.
type Spec struct {
	// Kind is the method's kind in lower case, one of Names.
	Kind   string
	params []Param // canonical, in the kind's table order
	text   string  // as typed (trimmed)
}

// Param is one parameter of a Spec: its canonical name and value.
type Param struct{ Name, Value string }

// Params are the parameters given, in canonical form and in the order of
// the kind's table.
func (s Spec) Params() []Param { return slices.Clone(s.params) }

// Text is the specification as it was typed (without surrounding spaces).
func (s Spec) Text() string { return s.text }

// String is the canonical form (see Spec).
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Kind)
	for _, p := range s.params {
		b.WriteString(":" + p.Name)
		if !kinds[s.Kind].param(p.Name).flag {
			b.WriteString("=" + p.Value)
		}
	}
	return b.String()
}

// Value is the canonical value of the parameter with the canonical name
// name, and whether it was given.
func (s Spec) Value(name string) (string, bool) {
	for _, p := range s.params {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}

// ParseSpec parses one method specification: KIND[:NAME=VALUE]…, a flag
// parameter given as :NAME alone. Errors name the problem: an unknown kind
// or parameter (with the closest valid name, "did you mean …?", and the
// valid ones), a value of the wrong type or not among a keyword's values,
// a parameter given twice, a required parameter missing.
func ParseSpec(text string) (Spec, error) {
	text = strings.TrimSpace(text)
	parts := strings.Split(text, ":")
	s := Spec{Kind: strings.ToLower(strings.TrimSpace(parts[0])), text: text}
	if s.Kind == "" {
		return s, fmt.Errorf("methods: empty method name in %q", text)
	}
	k, ok := kinds[s.Kind]
	if !ok {
		return s, fmt.Errorf("methods: unknown method %q%s (methods: %s)", s.Kind, suggest(s.Kind, Names), strings.Join(Names, ", "))
	}
	given := map[string]string{}
	for _, part := range joinColons(parts[1:], k) {
		name, value, hasValue := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		def := k.lookup(name)
		switch {
		case name == "":
			return s, fmt.Errorf("methods: %q: empty parameter name", text)
		case def == nil:
			return s, fmt.Errorf("methods: %q: %s takes no parameter %q%s (its parameters: %s)", text, s.Kind, name, suggest(name, k.names()), k.paramList())
		case !hasValue && !def.flag:
			return s, fmt.Errorf("methods: %q: %s needs a value (%s=…)", text, def.name, def.name)
		case !hasValue:
			value = "true"
		}
		if _, dup := given[def.name]; dup {
			return s, fmt.Errorf("methods: %q gives %s twice", text, def.name)
		}
		v, err := def.value(value)
		if err != nil {
			return s, fmt.Errorf("methods: %q: %s=%q %v", text, def.name, value, err)
		}
		given[def.name] = v
	}
	for _, def := range k.params {
		v, ok := given[def.name]
		switch {
		case !ok && def.required != "":
			return s, fmt.Errorf("methods: %q: %s needs %s=%s", text, s.Kind, def.name, def.required)
		case ok && !(def.flag && v == "false"):
			s.params = append(s.params, Param{def.name, v})
		}
	}
	return s, nil
}

// joinColons rejoins the parts of a value that holds ':' (a parameter
// marked colons): a part that begins with a digit, after such a
// parameter's part, continues its value ("pattern=L1H1=offset", "1" →
// "pattern=L1H1=offset:1"). No parameter name begins with a digit.
func joinColons(parts []string, k kindDef) []string {
	var out []string
	open := false
	for _, part := range parts {
		t := strings.TrimSpace(part)
		if open && t != "" && t[0] >= '0' && t[0] <= '9' {
			out[len(out)-1] += ":" + t
			continue
		}
		name, _, _ := strings.Cut(part, "=")
		def := k.lookup(strings.TrimSpace(name))
		open = def != nil && def.colons
		out = append(out, part)
	}
	return out
}

// List is a parsed comma-separated list of method specifications. It is
// a flag.Value (Set parses, String is the canonical form) and a
// text (JSON) value in the same form.
type List []Spec

// Parse parses a comma-separated list of method specifications
// (ParseSpec; empty items are skipped). A list without a method, or with
// one method twice (the same canonical form), is an error.
func Parse(list string) (List, error) {
	var l List
	seen := map[string]string{}
	for _, item := range strings.Split(list, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		s, err := ParseSpec(item)
		if err != nil {
			return nil, err
		}
		if prev, dup := seen[s.String()]; dup {
			return nil, fmt.Errorf("methods: %q and %q are the same method %s", prev, s.text, s)
		}
		seen[s.String()] = s.text
		l = append(l, s)
	}
	if len(l) == 0 {
		return nil, fmt.Errorf("methods: no method in %q", list)
	}
	return l, nil
}

// MustParse is Parse for lists written in the program; it panics on an
// error.
func MustParse(list string) List {
	l, err := Parse(list)
	if err != nil {
		panic(err)
	}
	return l
}

// String is the canonical form of the list, its specs' canonical forms
// joined by commas.
func (l List) String() string {
	s := make([]string, len(l))
	for i, sp := range l {
		s[i] = sp.String()
	}
	return strings.Join(s, ",")
}

// Set parses list into l (flag.Value).
func (l *List) Set(list string) error {
	p, err := Parse(list)
	if err != nil {
		return err
	}
	*l = p
	return nil
}

// MarshalText is the canonical form.
func (l List) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText parses a list; an empty text is the empty list.
func (l *List) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*l = nil
		return nil
	}
	return l.Set(string(b))
}

// Check checks, before any work, what parsing could not: that the files
// and directories the path parameters name exist. (Parsing checked the
// rest: kinds, parameter names and values.)
func (l List) Check() error {
	if len(l) == 0 {
		return fmt.Errorf("methods: no method")
	}
	for _, s := range l {
		if p, ok := s.Value("path"); ok {
			if _, err := os.Stat(p); err != nil {
				return fmt.Errorf("methods: %q: %w", s.text, err)
			}
		}
		if check := kinds[s.Kind].check; check != nil {
			if err := check(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// UsesBackend reports whether a method of l loads a model onto
// Defaults.Backend (tf and synth), so that a caller opens a compute
// device only for a list that has one.
func (l List) UsesBackend() bool {
	for _, s := range l {
		if kinds[s.Kind].backend {
			return true
		}
	}
	return false
}

// Has reports whether l has a method of the given kind.
func (l List) Has(kind string) bool {
	return slices.ContainsFunc(l, func(s Spec) bool { return s.Kind == kind })
}

// paramDef is one parameter a kind accepts.
type paramDef struct {
	// name is the canonical spelling; it is matched regardless of case.
	name string
	// value checks a value (as typed, trimmed) and returns its canonical
	// form, or an error that completes `NAME="VALUE" …`.
	value func(string) (string, error)
	// required, when not empty, makes the parameter obligatory and says
	// what its value is (for the error).
	required string
	// flag marks a boolean given as :NAME alone (true); false, the
	// default, is left out of the canonical form.
	flag bool
	// colons marks a value that may hold ':' (tf's pattern=L1H1=offset:1):
	// a part after it that begins with a digit continues it (joinColons).
	colons bool
}

// kindDef is one kind of method: its parameters (in documentation order),
// whether its model runs on Defaults.Backend, its builder and its memory
// estimate.
type kindDef struct {
	params  []paramDef
	backend bool
	build   func(*args, Defaults) (Built, error)
	memory  func(Spec, Workload) int64
	// check, when not nil, checks before any work what parsing cannot:
	// what a spec asks of the files it names (List.Check).
	check func(Spec) error
}

// lookup is the parameter named name (in any case), or nil.
func (k kindDef) lookup(name string) *paramDef {
	for i := range k.params {
		if strings.EqualFold(k.params[i].name, name) {
			return &k.params[i]
		}
	}
	return nil
}

// param is the parameter with the canonical name name (the zero paramDef
// if none).
func (k kindDef) param(name string) paramDef {
	if p := k.lookup(name); p != nil {
		return *p
	}
	return paramDef{}
}

// names are the canonical names of the parameters.
func (k kindDef) names() []string {
	out := make([]string, len(k.params))
	for i, p := range k.params {
		out[i] = p.name
	}
	return out
}

// paramList lists the parameters for an error ("none" when there are none).
func (k kindDef) paramList() string {
	if len(k.params) == 0 {
		return "none"
	}
	return strings.Join(k.names(), ", ")
}

// intValue accepts an integer ≥ lo.
func intValue(lo int) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.Atoi(v)
		if err != nil {
			return "", fmt.Errorf("is not an integer")
		}
		if n < lo {
			return "", fmt.Errorf("is below %d", lo)
		}
		return strconv.Itoa(n), nil
	}
}

// floatValue accepts a finite number.
func floatValue(v string) (string, error) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f-f != 0 {
		return "", fmt.Errorf("is not a finite number")
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// boolValue accepts the booleans of strconv.ParseBool in any case.
func boolValue(v string) (string, error) {
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return "", fmt.Errorf("is not a boolean (true, false)")
	}
	return strconv.FormatBool(b), nil
}

// textValue accepts any non-empty text, kept as typed (paths, labels).
func textValue(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("is empty")
	}
	return v, nil
}

// keyword accepts one of values in any case, canonical as listed.
func keyword(values ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, k := range values {
			if strings.EqualFold(k, v) {
				return k, nil
			}
		}
		return "", fmt.Errorf("is not one of %s%s", strings.Join(values, ", "), suggest(v, values))
	}
}

// positiveOrInf accepts a positive finite number or inf (in any case).
func positiveOrInf(v string) (string, error) {
	if strings.EqualFold(v, "inf") {
		return "inf", nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f > 0) || f-f != 0 {
		return "", fmt.Errorf("is not a positive number or inf")
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

// args is a Spec as its builder reads it: typed values with defaults, and
// a record of the parameters read, so that Build refuses a table entry
// its builder ignores (a parameter accepted and silently dropped).
type args struct {
	Spec
	read map[string]bool
}

func (a *args) value(name string) (string, bool) {
	if a.read == nil {
		a.read = map[string]bool{}
	}
	a.read[name] = true
	return a.Value(name)
}

// str is the value of name, or def.
func (a *args) str(name, def string) string {
	if v, ok := a.value(name); ok {
		return v
	}
	return def
}

// int is the value of name (an integer, checked by ParseSpec), or def.
func (a *args) int(name string, def int) int {
	if v, ok := a.value(name); ok {
		n, _ := strconv.Atoi(v)
		return n
	}
	return def
}

// float is the value of name (a number, checked by ParseSpec), or def;
// given says whether it was given.
func (a *args) float(name string, def float64) (f float64, given bool) {
	if v, ok := a.value(name); ok {
		f, _ = strconv.ParseFloat(v, 64)
		return f, true
	}
	return def, false
}

// flag is the value of the flag name (false when not given).
func (a *args) flag(name string) bool {
	v, _ := a.value(name)
	return v == "true"
}

// unread reports a parameter given but not read by the builder: a bug of
// the builder, which would silently drop it.
func (a *args) unread() error {
	for _, p := range a.params {
		if !a.read[p.Name] {
			return fmt.Errorf("methods: %q: internal error: the %s builder ignores %s", a.text, a.Kind, p.Name)
		}
	}
	return nil
}
