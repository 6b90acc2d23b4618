package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandSize keeps the command thin (issue 32, item 4): cmd/vomc has
// at most 1,530 non-test lines (1,500, and 30 for 'vomc probe' of issue
// 47, whose flags live in package probe), its Go files and its help texts
// (help/*.txt) together, and no non-test function over 60 lines. Work
// belongs in the packages; long prose in docs/.
func TestCommandSize(t *testing.T) {
	const maxLines, maxFunc = 1530, 60
	goFiles, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	helpFiles, err := filepath.Glob("help/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	total, fset := 0, token.NewFileSet()
	for _, name := range append(goFiles, helpFiles...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, b, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n > maxFunc {
					t.Errorf("%s: %s is %d lines long, more than %d: split it, or move its work into a package", name, fd.Name.Name, n, maxFunc)
				}
			}
		}
	}
	if total > maxLines {
		t.Errorf("cmd/vomc has %d non-test lines (Go and help/*.txt), more than %d: move work into the packages, long help prose into docs/", total, maxLines)
	}
}
