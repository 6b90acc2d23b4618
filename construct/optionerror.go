package construct

import (
	"fmt"
	"strings"
	"unicode"
)

// OptionError is an error in the options of Compare. Its message names the
// CompareOptions fields Options: Format has a verb for each of them, followed by
// the verbs of Args.
type OptionError struct {
	Format  string
	Options []string
	Args    []any
}

// optErr is the OptionError of format naming the fields in options
// (separated by spaces), with args.
func optErr(format, options string, args ...any) *OptionError {
	return &OptionError{Format: format, Options: strings.Fields(options), Args: args}
}

// Error is the message naming the options by their fields, prefixed by
// the package's name.
func (e *OptionError) Error() string {
	s := e.text(e.Options)
	if strings.HasPrefix(s, "construct: ") {
		return s
	}
	return "construct: " + s
}

// Flag is the message naming each option as prefix followed by its
// field's name in lower-case words joined by hyphens: with prefix "--",
// ProfileWindows is "--profile-windows" and FFMaxK "--ff-max-k".
func (e *OptionError) Flag(prefix string) string {
	names := make([]string, len(e.Options))
	for i, o := range e.Options {
		names[i] = prefix + hyphenated(o)
	}
	return e.text(names)
}

// text is the message naming the options as names.
func (e *OptionError) text(names []string) string {
	args := make([]any, 0, len(names)+len(e.Args))
	for _, n := range names {
		args = append(args, n)
	}
	return fmt.Sprintf(e.Format, append(args, e.Args...)...)
}

// hyphenated writes a Go name in lower-case words joined by hyphens; a
// word starts at an upper-case letter after a lower-case one, or before
// one (the last capital of an initialism: "FFMaxK" is "ff-max-k").
func hyphenated(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
