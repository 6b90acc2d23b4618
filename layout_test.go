package vomc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// internalLeafImports are the vomc packages that a package under internal/
// may import besides other internal/ packages: leaves themselves.
var internalLeafImports = map[string]bool{"github.com/vomc/vomc/predict": true}

// TestInternalLeaves checks that internal/ holds leaves only: no package
// under internal/ (tests included) imports a vomc package other than
// internal/ ones and the leaves of internalLeafImports. Code that serves a
// higher package lives next to it (experiment, perf, memest).
func TestInternalLeaves(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}", "./internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/vomc/vomc/"
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, mod+"internal/") && !internalLeafImports[imp] {
				t.Errorf("%s imports %s: internal/ holds leaves only", f[0], imp)
			}
		}
	}
	for imp := range internalLeafImports {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", imp).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", imp, err, out)
		}
		for _, i := range strings.Fields(string(out)) {
			if strings.HasPrefix(i, mod) {
				t.Errorf("%s, allowed under internal/ as a leaf, imports %s", imp, i)
			}
		}
	}
}
