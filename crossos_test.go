// Package vomc_test holds the module-wide checks that belong to no
// package: the module builds and vets on every supported system.
package vomc_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// crossTargets are the systems besides this machine's that the module must
// build and vet for.
var crossTargets = []struct{ goos, goarch string }{
	{"windows", "amd64"},
	{"darwin", "arm64"},
	{"darwin", "amd64"},
	{"linux", "arm64"},
}

// TestCrossOSVet runs `go build ./...` and `go vet ./...` (which also
// type-checks the tests) from the module root with GOOS and GOARCH set to
// each of crossTargets, so that the README's `go vet ./... && go test ./...`
// fails when the module stops building or vetting on one of them.
func TestCrossOSVet(t *testing.T) {
	goTool := goForModule(t, "go build and go vet for windows/amd64, darwin/arm64, darwin/amd64 and linux/arm64 (about 90 s each with an empty build cache)")
	for _, tg := range crossTargets {
		t.Run(tg.goos+"_"+tg.goarch, func(t *testing.T) {
			for _, verb := range []string{"build", "vet"} {
				cmd := exec.Command(goTool, verb, "./...")
				cmd.Dir = "." // this package's directory is the module root
				cmd.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "CGO_ENABLED=0")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("GOOS=%s GOARCH=%s go %s ./...: %v\n%s", tg.goos, tg.goarch, verb, err, out)
				}
			}
		})
	}
}

// goForModule returns the go command for a test that runs it over the
// module (what: the runs, for the skip messages), after statSources; it
// skips the test with -short or without a go command on PATH.
func goForModule(t *testing.T, what string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping " + what)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: skipping " + what)
	}
	statSources(t)
	return goTool
}

// statSources looks at every source file of the module. go test caches a
// passing result keyed on the files the test process itself looks at (not
// on those its go commands read), so without this a cached pass would
// hide a change elsewhere in the module that breaks another system.
func statSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".s", ".h", ".mod", ".sum":
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNoDemoBuild: the device binary's variant (-tags nodemo: without the
// shipped models; docs/figures/paper_shape_gpu/device/continue.sh) builds
// and vets, and its models package says why it has none.
func TestNoDemoBuild(t *testing.T) {
	goTool := goForModule(t, "go build, vet and test with -tags nodemo")
	for _, args := range [][]string{{"build", "-tags", "nodemo", "-o", os.DevNull, "./cmd/vomc"}, {"vet", "-tags", "nodemo", "./..."}, {"test", "-count=1", "-tags", "nodemo", "./models"}} {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = "."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
