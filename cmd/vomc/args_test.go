package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
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
		if got := interleaved(fs, c.in); !slices.Equal(got, c.want) {
			t.Errorf("interleaved(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFlagsAnywhere checks that flags may follow positional arguments, that
// "--" ends the flags, and that the removed name bench-compress says which
// command to use.
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	runOK(t, "tree", "sample", "-A", "3", "-D", "2", "--seed", "4", "--out", "tree.json")
	runOK(t, "generate", "tree.json", "-n", "50", "--out", "after.txt")
	runOK(t, "generate", "-n", "50", "--out", "before.txt", "tree.json")
	runOK(t, "generate", "--out", "mixed.txt", "tree.json", "-n", "50")
	tree, err := os.ReadFile("tree.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("-x", tree, 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "generate", "-n", "50", "--out", "dash.txt", "--", "-x")
	runFail(t, "generate", "-n", "50", "--out", "dash2.txt", "-x") // -x is a flag without "--"
	want, err := os.ReadFile("before.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"after.txt", "mixed.txt", "dash.txt"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("%s differs from before.txt", f)
		}
	}
	if code := run([]string{"generate", "tree.json", "-n"}); code != 2 {
		t.Errorf("a flag without its value exited %d, want 2", code)
	}
	if code := run([]string{"bench-compress", "tree.json"}); code != 2 {
		t.Errorf("bench-compress exited %d, want 2", code)
	}
	runOK(t, "bench", "compress", "tree.json", "--tools=false")
}
