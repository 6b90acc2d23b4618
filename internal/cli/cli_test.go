package cli

import (
	"errors"
	"flag"
	"slices"
	"testing"

	"github.com/vomc/vomc/internal/opterr"
)

func TestInterleaved(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("n", 0, "")
	fs.Bool("v", false, "")
	fs.String("out", "", "")
	for _, c := range []struct{ in, want []string }{
		{[]string{"a", "-n", "5"}, []string{"-n", "5", "--", "a"}},
		{[]string{"-n", "5", "a"}, []string{"-n", "5", "--", "a"}},
		{[]string{"a", "-v", "b", "--out=o", "c"}, []string{"-v", "--out=o", "--", "a", "b", "c"}},
		{[]string{"--out", "-", "a", "-v=false"}, []string{"--out", "-", "-v=false", "--", "a"}},
		{[]string{"a", "--", "-x", "-n", "1"}, []string{"--", "a", "-x", "-n", "1"}},
		{[]string{"-", "-v", "-n"}, []string{"-v", "-n"}},
		{[]string{"a", "--bogus", "b"}, []string{"--bogus", "--", "a", "b"}},
		{nil, []string{"--"}},
	} {
		if got := Interleaved(fs, c.in); !slices.Equal(got, c.want) {
			t.Errorf("interleaved(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		n    int
		ok   bool
	}{{nil, 0, true}, {[]string{"a"}, 0, false}, {[]string{"a", "b"}, 2, true}, {[]string{"a"}, 2, false},
		{[]string{"a", "b", "c"}, -2, true}, {[]string{"a"}, -2, false}, {[]string{"-x"}, 0, false}} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		if err := ParseArgs(fs, c.args, c.n, "A and B"); (err == nil) != c.ok {
			t.Errorf("ParseArgs(%q, %d) = %v", c.args, c.n, err)
		}
	}
}

// TestCheckModes: a flag given outside the modes its usage names is
// refused, naming the flag and the mode; inside them, or without a mode,
// it is accepted.
func TestCheckModes(t *testing.T) {
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.String("file", "", "a file")
		fs.Bool("half", false, "with --file: half")
		fs.Int("N", 0, "with --file, without --half: windows")
		fs.String("ff", "exact", "exact or mlp")
		fs.Int("width", 0, "with --ff mlp: width")
		fs.String("alphabet", "", "with --file (text): alphabet")
		fs.Int("free", 0, "with or without anything: no mode (no flag named)")
		InMode(fs, "without --half", func() { fs.Bool("bits", false, "bits") })
		return fs
	}
	for _, c := range []struct {
		args []string
		want string // "" accepted
	}{
		{[]string{"--file", "f", "-N", "3"}, ""},
		{[]string{"-N", "3"}, "--N has no effect without --file"},
		{[]string{"--file", "f", "--half", "-N", "3"}, "--N has no effect with --half"},
		{[]string{"--half"}, "--half has no effect without --file"},
		{[]string{"--width", "3"}, "--width has no effect unless --ff is mlp"},
		{[]string{"--ff", "mlp", "--width", "3"}, ""},
		{[]string{"--alphabet", "ab", "--file", "f"}, ""},
		{[]string{"--free", "1"}, ""},
		{[]string{"--bits"}, ""},
		{[]string{"--file", "f", "--half", "--bits"}, "--bits has no effect with --half"},
	} {
		err := Parse(newFS(), c.args)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("%q: %v, want %q", c.args, err, c.want)
		}
	}
	if u := newFS().Lookup("bits").Usage; u != "without --half: bits" {
		t.Errorf("InMode: usage %q", u)
	}
}

// TestAsUsage: an option error becomes a usage error without its
// package's prefix (the command's name stands there), still wrapping it.
func TestAsUsage(t *testing.T) {
	oe := opterr.Bad("reproduce", "N", 4, "≥ 8")
	err := AsUsage(oe)
	if err.Error() != "N 4: want ≥ 8" || !errors.Is(err, oe) {
		t.Errorf("AsUsage(%v) = %v", oe, err)
	}
	if other := AsUsage(errors.New("x")); other.Error() != "x" {
		t.Errorf("AsUsage(x) = %v", other)
	}
	if AsUsage(nil) != nil {
		t.Error("AsUsage(nil) is not nil")
	}
}
