// Package opterr is vomc's one error type for a bad option: of a library
// call (a field of its options), of a configuration (a key), or of a
// command line (a flag). It names the option, the value given and what is
// accepted, or the closest known name ("did you mean …?"), and names the
// options the way the library knows them, so that a command can write
// them as its flags (Error.Flag) without parsing messages.
package opterr

import (
	"fmt"
	"strings"
	"unicode"
)

// Error is a bad option. Its message, with every option written as
// name(option) (Error.Text), is
//
//	name(Option) [Value] Msg [: want Want] [Hint]
//
// where Value is written with %q when it is a string and %v otherwise,
// and Msg, the free part, has a %s verb for each option of Also, then the
// verbs of Args (a Msg with neither is used as it is). Option may be empty
// when Msg names every option itself. Pkg, when set, prefixes Error's
// message ("reproduce: …"), not Flag's.
type Error struct {
	Pkg    string
	Option string
	Value  any
	Msg    string
	Also   []string
	Args   []any
	Want   string
	Hint   string
	Err    error
}

// New is the Error of package pkg with format naming the options in
// options (separated by spaces) by %s verbs, followed by the verbs of
// args.
func New(pkg, format, options string, args ...any) *Error {
	return &Error{Pkg: pkg, Msg: format, Also: strings.Fields(options), Args: args}
}

// Bad is the Error "option value: want want" of package pkg: value is the
// value given, want the form it should have.
func Bad(pkg, option string, value any, want string) *Error {
	return &Error{Pkg: pkg, Option: option, Value: value, Want: want}
}

// Unknown is the Error of an unknown name among known: `option "name"
// unknown; did you mean "x"?` when one is close, else with the known
// names as the accepted form.
func Unknown(pkg, option, name string, known []string) *Error {
	e := &Error{Pkg: pkg, Option: option, Value: name, Msg: " is unknown"}
	if e.Hint = DidYouMean(name, known, "", true); e.Hint == "" {
		e.Want = "one of " + strings.Join(known, ", ")
	}
	return e
}

// Error is the message naming the options as the library does, prefixed
// by the package's name.
func (e *Error) Error() string {
	s := e.Text(func(o string) string { return o })
	if e.Pkg == "" || strings.HasPrefix(s, e.Pkg+": ") {
		return s
	}
	return e.Pkg + ": " + s
}

func (e *Error) Unwrap() error { return e.Err }

// Flag is the message naming each option as prefix followed by its name
// in lower-case words joined by hyphens (Hyphenated): with prefix "--",
// ProfileWindows is "--profile-windows" and max_steps "--max-steps".
func (e *Error) Flag(prefix string) string {
	return e.Text(func(o string) string { return prefix + Hyphenated(o) })
}

// Text is the message with every option it names written as name(option).
func (e *Error) Text(name func(option string) string) string {
	var b strings.Builder
	if e.Option != "" {
		b.WriteString(name(e.Option))
	}
	switch v := e.Value.(type) {
	case nil:
	case string:
		fmt.Fprintf(&b, " %q", v)
	default:
		fmt.Fprintf(&b, " %v", v)
	}
	msg := e.Msg
	if len(e.Also)+len(e.Args) > 0 {
		args := make([]any, 0, len(e.Also)+len(e.Args))
		for _, o := range e.Also {
			args = append(args, name(o))
		}
		msg = fmt.Sprintf(msg, append(args, e.Args...)...)
	}
	b.WriteString(msg)
	if e.Want != "" {
		b.WriteString(": want " + e.Want)
	}
	b.WriteString(e.Hint)
	return strings.TrimPrefix(b.String(), " ")
}

// Hyphenated writes a Go name or a key in lower-case words joined by
// hyphens; a word starts after '_' or '-', at an upper-case letter after
// a lower-case one, or before one (the last capital of an initialism:
// "FFMaxK" is "ff-max-k", "max_steps" is "max-steps").
func Hyphenated(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if r == '_' {
			r = '-'
		}
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// DidYouMean is `; did you mean prefix+"x"?` (x quoted when quote is set)
// for the candidate x closest to s, or "" when none is close. A candidate
// is close when it is at most 2 edits (Levenshtein, ignoring case) and at
// most half of s away, when s (3 letters or more) begins it, or when s is
// one of its words or it one of the words of s (the parts between '-' or
// '_': "steps" for "max-steps", "reference" for "reference-method"). Among close candidates the fewest edits win, then the
// first.
func DidYouMean(s string, candidates []string, prefix string, quote bool) string {
	best, bd := "", 1<<30
	for _, c := range candidates {
		d := 2 * distance(strings.ToLower(s), strings.ToLower(c))
		if d > 4 || d > len(s) {
			d = 1 << 20
		}
		if strings.HasPrefix(c, s) && len(s) >= 3 {
			d = min(d, 5)
		}
		if ls, lc := strings.ToLower(s), strings.ToLower(c); len(s) >= 3 && isWordOf(ls, lc) || len(c) >= 3 && isWordOf(lc, ls) {
			d = min(d, 5)
		}
		if d < bd {
			best, bd = c, d
		}
	}
	if bd > 5 {
		return ""
	}
	if quote {
		return fmt.Sprintf("; did you mean %s%q?", prefix, best)
	}
	return fmt.Sprintf("; did you mean %s%s?", prefix, best)
}

// isWordOf reports whether w is one of c's words, the parts of c between
// '-' and '_'.
func isWordOf(w, c string) bool {
	for _, p := range strings.FieldsFunc(c, func(r rune) bool { return r == '-' || r == '_' }) {
		if p == w && p != c {
			return true
		}
	}
	return false
}

// distance is the Levenshtein edit distance between a and b (bytes).
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
