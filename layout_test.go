package vomc_test

import (
	"os/exec"
	"strings"
	"testing"
)

// module is the import path prefix of vomc's packages.
const module = "github.com/vomc/vomc/"

// layers is the order of vomc's top-level folders, the ground first: the
// packages of a folder (tests included) import only packages of their own
// folder and of folders on lower layers, so that no import runs back up
// (`go list -deps` shows none). Place a new folder on the
// lowest layer above everything it imports; an import that would run up or
// sideways means that code lives on the wrong floor: move it, or move the
// folder up when it belongs there. A sub-folder named here (reproduce/report)
// is a folder of its own, apart from the folder above it.
var layers = [][]string{
	{"predict", "safetensors", "arith", "python", "scripts", "models", "events", "jsonfloat", "panics"}, // nothing of vomc's
	{"internal", "eval"},
	{"markov", "kn", "ppm", "npy", "source", "plot", "pipeline"},
	{"ctw", "dataset", "compress", "leafprior"},
	{"bayes", "construct", "transformer"},
	{"trainrun"}, // the training driver: flags, run directories, budgets, the torch engine's subprocess
	{"synth", "attnmap", "perf"},
	{"methods", "probe"},
	{"experiment"},
	{"dynamics"},
	{"explore"},
	{"reproduce/study"},                         // the study's configuration
	{"reproduce/results", "reproduce/powerfit"}, // stage and file names, records, merged results; the ladder's power laws
	{"reproduce/figures"},
	{"reproduce/report"}, // findings, verdict rules, HTML and text
	{"reproduce"},        // the stage graph, running it, the command
	{"cmd"},
}

// importLists runs go list on pkgs and returns, per package, its import
// path followed by its imports, its tests' and its external tests'.
func importLists(t *testing.T, pkgs ...string) [][]string {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}} {{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}"}, pkgs...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var lists [][]string
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) > 0 {
			lists = append(lists, f)
		}
	}
	return lists
}

// TestLayers checks that every vomc package (but the module root's
// module-wide tests) stands in a folder of layers and imports, tests
// included, only packages of its own folder and of lower layers.
func TestLayers(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, folder := range l {
			layer[folder] = i
		}
	}
	// folder is the longest folder of layers that holds pkg, or else
	// pkg's top-level folder.
	folder := func(pkg string) string {
		f := strings.TrimPrefix(pkg, module)
		for {
			if _, ok := layer[f]; ok {
				return f
			}
			i := strings.LastIndex(f, "/")
			if i < 0 {
				return f
			}
			f = f[:i]
		}
	}
	for _, f := range importLists(t, "./...") {
		if !strings.HasPrefix(f[0], module) {
			continue // the module root
		}
		from := folder(f[0])
		l, ok := layer[from]
		if !ok {
			t.Errorf("%s: folder %s/ is on no layer: add it to layers", f[0], from)
			continue
		}
		for _, imp := range f[1:] {
			to := folder(imp)
			if !strings.HasPrefix(imp, module) || to == from {
				continue
			}
			if li, ok := layer[to]; ok && li >= l {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import runs up or sideways", f[0], l+1, imp, li+1)
			}
		}
	}
}

// internalLeafImports are the vomc packages that a package under internal/
// may import besides other internal/ packages: leaves themselves.
var internalLeafImports = map[string]bool{"github.com/vomc/vomc/predict": true, "github.com/vomc/vomc/panics": true}

// TestInternalLeaves checks that internal/ holds leaves only: no package
// under internal/ (tests included) imports a vomc package other than
// internal/ ones and the leaves of internalLeafImports. Code that serves a
// higher package lives next to it (experiment, perf).
func TestInternalLeaves(t *testing.T) {
	for _, f := range importLists(t, "./internal/...") {
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module) && !strings.HasPrefix(imp, module+"internal/") && !internalLeafImports[imp] {
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
			if strings.HasPrefix(i, module) {
				t.Errorf("%s, allowed under internal/ as a leaf, imports %s", imp, i)
			}
		}
	}
}
