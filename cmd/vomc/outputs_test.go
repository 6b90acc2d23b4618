package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsCheckedFirst runs commands whose output already exists
// (without --force) or whose output's parent is a file: each must fail
// before any work, so the input files may even be missing, and must leave
// nothing behind.
func TestOutputsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	if err := os.WriteFile(p("file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(p("done"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"results.json", "tree0.png", "existing.png"} {
		if err := os.WriteFile(filepath.Join(p("done"), f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// missing is never created: the commands must fail before reading
	// their inputs.
	missing := p("missing")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"eval existing", []string{"eval", "--data", missing, "--out", p("done")}},
		{"eval parent file", []string{"eval", "--data", missing, "--out", p("file/out")}},
		{"eval export parent file", []string{"eval", "--data", missing, "--out", p("new"), "--export", p("file/x")}},
		{"plot existing", []string{"plot", missing, p("done/existing.png")}},
		{"plot parent file", []string{"plot", missing, p("file/loss.png")}},
		{"construct weights", []string{"construct", "--weights", p("file/w.safetensors")}},
		{"construct plot existing", []string{"construct", "--error-plot", p("done/existing.png")}},
		{"quickstart existing", []string{"quickstart", "--out", p("done"), "-K", "2", "--K-train", "2", "-N", "4"}},
		{"quickstart parent file", []string{"quickstart", "--out", p("file/q"), "-K", "2", "--K-train", "2", "-N", "4"}},
		{"attention parent file", []string{"attention", "--model", missing, "--data", missing, "--out", p("file/att")}},
		{"attention out is a file", []string{"attention", "--model", missing, "--data", missing, "--out", p("file")}},
		{"bench logits existing", []string{"bench", "logits", "--model", missing, "--input", "0,1", "--out", p("done/existing.png")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			saved := os.Stderr
			os.Stderr = w
			code := run(c.args)
			os.Stderr = saved
			w.Close()
			msg, _ := io.ReadAll(r)
			if code == 0 {
				t.Fatalf("vomc %v succeeded", c.args)
			}
			// The error is about the output, not the (missing) input.
			if strings.Contains(string(msg), "missing") || !strings.Contains(string(msg), dir) {
				t.Errorf("error does not name the output: %s", msg)
			}
			for _, d := range []string{p("new"), filepath.Join(p("done"), "data"), missing} {
				if _, err := os.Stat(d); err == nil {
					t.Errorf("%s was created", d)
				}
			}
			ents, _ := os.ReadDir(p("done"))
			if len(ents) != 3 {
				t.Errorf("%d entries in the existing output directory, want 3", len(ents))
			}
		})
	}
}
