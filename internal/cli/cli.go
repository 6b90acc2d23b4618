// Package cli is the command-line plumbing of vomc's commands: flag sets
// whose -h prints a command's help with its examples, flags anywhere on
// the command line, usage errors of one or two lines with "did you mean
// …?", as cmd/go's internal/base does for the go command.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vomc/vomc/internal/opterr"
)

// UsageError marks an error in the command line itself: Msg, and the
// error it was made from, if any (Err, for errors.Is and errors.As).
type UsageError struct {
	Msg string
	Err error
}

func (e UsageError) Error() string { return e.Msg }

func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError of the formatted message.
func Usagef(format string, a ...any) error { return UsageError{Msg: fmt.Sprintf(format, a...)} }

// AsUsage makes a non-nil err a usage error; an option error
// (opterr.Error) is written without its package's prefix, which the
// command's name replaces.
func AsUsage(err error) error {
	var oe *opterr.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &oe) && oe.Error() == err.Error():
		return UsageError{oe.Text(func(o string) string { return o }), err}
	}
	return UsageError{err.Error(), err}
}

// UsageOf makes err a usage error, its message after prefix, when it is
// (wraps) an E; other errors are returned as they are.
func UsageOf[E error](err error, prefix string) error {
	var e E
	if errors.As(err, &e) {
		return UsageError{prefix + err.Error(), err}
	}
	return err
}

// Strings is a repeatable flag collecting its values in order (--set a=1
// --set b=2).
type Strings []string

func (s *Strings) String() string     { return strings.Join(*s, " ") }
func (s *Strings) Set(v string) error { *s = append(*s, v); return nil }

// Given is the set of the flags given on the command line.
func Given(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// NewFlags makes a FlagSet whose -h output is the command's help text
// (its usage line and description), its flags, then the examples (the
// text after a line "Examples:").
func NewFlags(name, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		text, examples, _ := strings.Cut(help, "\nExamples:\n")
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", strings.TrimSpace(text))
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(fs.Output(), "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// Parse parses flags, turning a parse failure into a usage error. Flags
// may come before, between or after the positional arguments (`vomc
// generate tree.json -n 50`); "--" ends the flags, so every argument after
// it is positional even when it starts with "-".
func Parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard) // the flag package's message and full usage
	err := fs.Parse(Interleaved(fs, args))
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil:
		return UsageError{Msg: flagMessage(fs, err)}
	}
	return CheckModes(fs)
}

// CheckModes refuses a flag given on the command line that would have no
// effect: one whose usage begins with the modes it is for, up to a colon,
// when one of them is off. The modes are "with --NAME" (NAME is set: not
// empty, 0 or false), "with --NAME VALUE" (NAME's value is VALUE) and
// "without --NAME" (NAME is not set), separated by ", " (a later mode
// without "with"/"without" takes the previous one's); a parenthesised
// word is a comment, and a mode naming no flag of fs is ignored:
//
//	fs.IntVar(&n, "N", 0, "with --file, without --half: cut the file into windows of N symbols")
func CheckModes(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil {
			err = checkMode(fs, f)
		}
	})
	return err
}

// checkMode is CheckModes for the flag f.
func checkMode(fs *flag.FlagSet, f *flag.Flag) error {
	modes, _, ok := strings.Cut(f.Usage, ":")
	if !ok || !strings.HasPrefix(modes, "with ") && !strings.HasPrefix(modes, "without ") {
		return nil
	}
	with := true
	for _, m := range strings.Split(modes, ", ") {
		if rest, ok := strings.CutPrefix(m, "without "); ok {
			m, with = rest, false
		} else if rest, ok := strings.CutPrefix(m, "with "); ok {
			m, with = rest, true
		}
		words := strings.Fields(m)
		if len(words) == 0 || !strings.HasPrefix(words[0], "-") {
			continue
		}
		mf := fs.Lookup(strings.TrimLeft(words[0], "-"))
		if mf == nil {
			continue
		}
		v := mf.Value.String()
		set := v != "" && v != "0" && v != "false"
		switch {
		case len(words) > 1 && !strings.HasPrefix(words[1], "("):
			if with && v != words[1] {
				return Usagef("--%s has no effect unless --%s is %s", f.Name, mf.Name, words[1])
			}
		case with && !set:
			return Usagef("--%s has no effect without --%s", f.Name, mf.Name)
		case !with && set:
			return Usagef("--%s has no effect with --%s", f.Name, mf.Name)
		}
	}
	return nil
}

// InMode defines flags (define's) on fs that are for mode only ("without
// --half"): their usage begins with it, for CheckModes.
func InMode(fs *flag.FlagSet, mode string, define func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	define()
	fs.VisitAll(func(f *flag.Flag) {
		switch {
		case before[f.Name]:
		case strings.HasPrefix(f.Usage, "with ") || strings.HasPrefix(f.Usage, "without "):
			f.Usage = mode + ", " + f.Usage
		default:
			f.Usage = mode + ": " + f.Usage
		}
	})
}

// ParseArgs is Parse wanting n positional arguments (n < 0: at least
// −n), which want names in the usage error ("IN and OUT"; unused for 0).
func ParseArgs(fs *flag.FlagSet, args []string, n int, want string) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	switch k := fs.NArg(); {
	case n == 0 && k > 0:
		return Usagef("unexpected arguments %q", fs.Args())
	case n > 0 && k != n || k < -n:
		return Usagef("want %s, got %d arguments", want, k)
	}
	return nil
}

// flagMessage rewords a parse error of the flag package in one line, with
// the closest flag for an unknown one.
func flagMessage(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return fmt.Sprintf("unknown flag --%s%s", name, opterr.DidYouMean(name, names, "--", false))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s needs a value (--%s X or --%s=X)", name, name, name)
	}
	return strings.Replace(msg, "for flag -", "for flag --", 1)
}

// Interleaved reorders args so that the flag package, which stops at the
// first positional argument, sees every flag: the flags (with the values
// of non-boolean flags that are given as a separate argument) first, then
// "--" and the positional arguments in their order. An argument is a flag
// when it starts with "-" and is not "-" itself, up to the first "--".
// Unknown flags, and a last flag missing its value, are kept among the
// flags, so fs.Parse reports them.
func Interleaved(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimPrefix(a[1:], "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				return flags // fs.Parse: "flag needs an argument"
			}
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(append(flags, "--"), pos...)
}

// isBoolFlag reports whether f takes no value argument (-v rather than -v x).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
