package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutputs checks the refusals of CheckOutputs and CheckOutputDir
// and that they sweep (and report) the temporaries of dead processes.
func TestCheckOutputs(t *testing.T) {
	dir := t.TempDir()
	p := func(s string) string { return filepath.Join(dir, s) }
	os.WriteFile(p("file"), []byte("x"), 0o644)
	os.Mkdir(p("sub"), 0o755)
	for _, c := range []struct {
		name  string
		force bool
		paths []string
		want  string // substring of the error; "" for none
	}{
		{"new", false, []string{p("new"), "", p("a/b/c")}, ""},
		{"exists", false, []string{p("file")}, "file exists"},
		{"exists force", true, []string{p("file")}, ""},
		{"dir force", true, []string{p("sub")}, "is a directory"},
		{"parent file", false, []string{p("file/x")}, "not a directory"},
	} {
		err := CheckOutputs(nil, c.force, c.paths...)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := CheckOutputs(nil, false, p("file")); !errors.Is(err, ErrExists) {
		t.Errorf("existing output: %v does not wrap ErrExists", err)
	}
	for _, c := range []struct {
		dir   string
		names []string
		want  string
	}{{p("sub"), []string{"a"}, ""}, {p("new"), nil, ""}, {p("file"), nil, "not a directory"}, {dir, []string{"file"}, "file exists"}} {
		err := CheckOutputDir(nil, c.dir, false, c.names...)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("dir %s %v: %v, want %q", c.dir, c.names, err, c.want)
		}
	}
	// a temporary of a process that cannot exist is swept and reported
	stale := p(fmt.Sprintf(".out.tmp-%d-1", 1<<30))
	os.WriteFile(stale, nil, 0o644)
	var log bytes.Buffer
	if err := CheckOutputs(&log, false, p("out")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil || !strings.Contains(log.String(), "removed "+stale) {
		t.Errorf("stale temporary not swept or reported: %q", log.String())
	}
}

func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	os.WriteFile(f, []byte("x"), 0o644)
	if r, err := OpenInput(f); err != nil {
		t.Error(err)
	} else {
		r.Close()
	}
	if _, err := OpenInput(dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := OpenInput(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file opened")
	}
}
