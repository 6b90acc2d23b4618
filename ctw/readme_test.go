package ctw_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMESnippet checks that the README's library snippet (the first Go
// block of "Using vomc as a library") is exactly the body of ExampleNew, so
// the snippet compiles and its output is tested.
func TestREADMESnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skip("no README.md:", err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Using vomc as a library")
	if !ok {
		t.Fatal(`README.md has no section "Using vomc as a library"`)
	}
	_, block, ok := strings.Cut(sec, "```go\n")
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("the library section of README.md has no Go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func ExampleNew() {\n")
	if ok {
		body, _, ok = strings.Cut(body, "\t// Output:")
	}
	if !ok {
		t.Fatal("example_test.go has no ExampleNew with an Output comment")
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		want.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if block != want.String() {
		t.Errorf("README.md's library snippet differs from ExampleNew's body; README:\n%s\nExampleNew:\n%s", block, want.String())
	}
}
