package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// noExamplesYet are the help files without examples (none now).
var noExamplesYet = map[string]bool{}

// stderrOf runs vomc with args and returns its exit status and what it
// wrote on standard error.
func stderrOf(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	code := run(args)
	os.Stderr = old
	w.Close()
	return code, string(<-done)
}

// TestHelpFiles checks that 'vomc X -h' of every command and sub-command
// prints its help file (help/X.txt, sub-commands as X-SUB.txt), that
// every help file is used, and that 'vomc help' lists every command.
func TestHelpFiles(t *testing.T) {
	args := map[string][]string{}
	for name := range commands {
		if name != "version" {
			args[name] = []string{name, "-h"}
		}
	}
	for _, sub := range []string{"tree sample", "tree show", "bench train", "bench compress", "bench logits"} {
		args[strings.ReplaceAll(sub, " ", "-")] = append(strings.Fields(sub), "-h")
	}
	files, err := helpFiles.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(f.Name(), ".txt"); args[name] == nil && name != "vomc" {
			t.Errorf("help/%s is not the help of a command", f.Name())
		}
	}
	for name, a := range args {
		code, out := stderrOf(t, a...)
		text, examples, _ := strings.Cut(help(name), "\nExamples:\n")
		if text = strings.TrimSpace(text); code != 0 || !strings.HasPrefix(out, text+"\n") {
			t.Errorf("vomc %s: exit %d, output does not start with help/%s.txt:\n%s", strings.Join(a, " "), code, name, out)
		}
		// Issue 35: each command's -h ends with two or three examples.
		if n := strings.Count(examples, "\n  vomc ") + 1; (n < 1 || n > 3 || !strings.HasSuffix(out, "\nExamples:\n"+examples)) && !noExamplesYet[name] {
			t.Errorf("vomc %s: the help does not end with one to three examples (help/%s.txt: Examples:)", strings.Join(a, " "), name)
		}
	}
	var b bytes.Buffer
	usage(&b)
	listed := map[string]bool{}
	_, list, _ := strings.Cut(b.String(), "\nCommands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, line := range strings.Split(list, "\n") {
		listed[strings.Fields(line)[0]] = true
	}
	for name := range commands {
		if !listed[name] {
			t.Errorf("'vomc help' does not list %s", name)
		}
	}
	if len(listed) != len(commands) {
		t.Errorf("'vomc help' lists %d commands, want %d", len(listed), len(commands))
	}
}

// TestHelpExamples: every example in the help files is a command line
// vomc accepts: its command exists and its flags are the command's (each
// is run with -h appended, which stops before any work).
func TestHelpExamples(t *testing.T) {
	files, err := helpFiles.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		_, examples, ok := strings.Cut(help(strings.TrimSuffix(f.Name(), ".txt")), "\nExamples:\n")
		if !ok {
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(examples), "\n") {
			line, _, _ = strings.Cut(line, "  #")
			for _, cmd := range strings.Split(line, "&&") {
				args := strings.Fields(strings.ReplaceAll(cmd, `"`, ""))
				if len(args) == 0 || args[0] != "vomc" {
					t.Errorf("help/%s: example %q is not a vomc command", f.Name(), cmd)
					continue
				}
				if code, out := stderrOf(t, append(args[1:], "-h")...); code != 0 {
					t.Errorf("help/%s: example %q: exit %d:\n%.300s", f.Name(), cmd, code, out)
				}
			}
		}
	}
}

// TestUnknownFlagsEveryCommand: an unknown flag of every command and
// sub-command gets a did-you-mean (cli.Parse, the one place flags are
// parsed): every flag of its -h with its first letter dropped, and words of
// compound flags ("--steps" for --max-steps).
func TestUnknownFlagsEveryCommand(t *testing.T) {
	cmds := [][]string{{"tree", "sample"}, {"tree", "show"}, {"bench", "train"}, {"bench", "compress"}, {"bench", "logits"}}
	for name := range commands {
		if name != "version" && name != "tree" {
			cmds = append(cmds, []string{name})
		}
	}
	tried := 0
	for _, c := range cmds {
		_, out := stderrOf(t, append(c, "-h")...)
		_, flags, _ := strings.Cut(out, "\nFlags:\n")
		for _, line := range strings.Split(flags, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(line, "  -") {
				continue
			}
			name := strings.TrimLeft(f[0], "-")
			if len(name) < 4 {
				continue
			}
			typo := strings.TrimLeft(name[1:], "-")
			args := append(append([]string{}, c...), "--"+typo)
			if code, out := stderrOf(t, args...); code != 2 || !strings.Contains(out, "unknown flag --"+typo+"; did you mean --") {
				t.Errorf("vomc %s: exit %d, want 2 and a did-you-mean:\n%s", strings.Join(args, " "), code, out)
			}
			tried++
		}
	}
	if tried < 100 {
		t.Errorf("tried %d flags, want the flags of every command (≥ 100)", tried)
	}
	for _, c := range [][]string{{"train", "--steps", "5"}, {"synth", "--steps", "5"}, {"eval", "--reference-method", "ctw"}, {"eval", "--plot", "ctw"}} {
		code, out := stderrOf(t, c...)
		if code != 2 || !strings.Contains(out, "; did you mean --") {
			t.Errorf("vomc %s: exit %d, want a did-you-mean:\n%s", strings.Join(c, " "), code, out)
		}
	}
}
