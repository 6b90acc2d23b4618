package cli

import (
	"flag"
	"slices"
	"testing"
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
