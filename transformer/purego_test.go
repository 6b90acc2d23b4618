//go:build !purego

package transformer

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vomc/vomc/transformer/kernels"
)

// TestPuregoBuild runs `go vet -tags purego ./...` in this directory
// (every transformer package) and `go test -tags purego` on the
// transformer packages whose build the tag changes (kernels and every
// package that imports it: the CPU backend, the model, trainrun; not the
// cuda backend, whose code is the same either way) with
// VOMC_KERNELS=portable, so that the README's single test command, `go
// vet ./... && go test ./...` (what .ci/run runs), also tests the build
// that has only the portable kernel set, as every build for an
// architecture without SIMD kernels does. It is skipped with -short and
// where there is no go command (a test binary run elsewhere, e.g. under
// qemu by scripts/test_arm64.sh), and is not compiled into the purego
// build itself.
func TestPuregoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping go vet and go test -tags purego ./transformer/... (about a minute on 2 cores)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH: cannot test the -tags purego build")
	}
	statModuleSources(t)
	env := []string{kernels.EnvVar + "=portable"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, kernels.EnvVar+"=") {
			env = append(env, kv)
		}
	}
	goCmd := func(args ...string) ([]byte, error) {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = "." // this package's directory: ./... is ./transformer/...
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("go %s (in transformer/): %v\n%s", strings.Join(args, " "), err, out)
		}
		return out, err
	}
	if _, err := goCmd("vet", "-tags", "purego", "./..."); err != nil {
		return
	}
	list, err := goCmd("list", "-tags", "purego", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	if err != nil {
		return
	}
	kpkg := reflect.TypeFor[kernels.Set]().PkgPath()
	var pkgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == kpkg || slices.Contains(f[1:], kpkg)) {
			pkgs = append(pkgs, f[0])
		}
	}
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %v using %s", pkgs, kpkg)
	}
	out, err := goCmd(append([]string{"test", "-tags", "purego", "-timeout", "8m"}, pkgs...)...)
	if err == nil {
		t.Logf("go test -tags purego:\n%s", out)
	}
}

// statModuleSources looks at every source file of the module (the root is
// the directory above this one). go test caches a passing result keyed
// on the files the test process itself looks at, not on those its go
// commands read, so without this a cached pass would hide a change in
// another package (such as the cuda backend) that breaks the purego
// build; the nested go test keeps its own per-package cache.
func statModuleSources(t *testing.T) {
	t.Helper()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".s", ".h", ".c", ".cu", ".mod", ".sum":
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
