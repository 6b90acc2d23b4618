// Package opterr is the error of a library's options that names them by
// their Go field names, so that a command can write them as its flags.
package opterr

import (
	"fmt"
	"strings"
	"unicode"
)

// Error is an error in the options of a library call. Its message names
// the option fields Options: Format has a verb for each of them, followed
// by the verbs of Args. Pkg is the library's name, the message's prefix.
type Error struct {
	Pkg     string
	Format  string
	Options []string
	Args    []any
}

// New is the Error of package pkg with format naming the fields in options
// (separated by spaces), with args.
func New(pkg, format, options string, args ...any) *Error {
	return &Error{Pkg: pkg, Format: format, Options: strings.Fields(options), Args: args}
}

// Error is the message naming the options by their fields, prefixed by
// the package's name.
func (e *Error) Error() string {
	s := e.text(e.Options)
	if strings.HasPrefix(s, e.Pkg+": ") {
		return s
	}
	return e.Pkg + ": " + s
}

// Flag is the message naming each option as prefix followed by its
// field's name in lower-case words joined by hyphens: with prefix "--",
// ProfileWindows is "--profile-windows" and FFMaxK "--ff-max-k".
func (e *Error) Flag(prefix string) string {
	names := make([]string, len(e.Options))
	for i, o := range e.Options {
		names[i] = prefix + Hyphenated(o)
	}
	return e.text(names)
}

// text is the message naming the options as names.
func (e *Error) text(names []string) string {
	args := make([]any, 0, len(names)+len(e.Args))
	for _, n := range names {
		args = append(args, n)
	}
	return fmt.Sprintf(e.Format, append(args, e.Args...)...)
}

// Hyphenated writes a Go name in lower-case words joined by hyphens; a
// word starts at an upper-case letter after a lower-case one, or before
// one (the last capital of an initialism: "FFMaxK" is "ff-max-k").
func Hyphenated(name string) string {
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
