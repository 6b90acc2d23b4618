package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

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
