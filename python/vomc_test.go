package python

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// shared is the one build of libvomc (cmd/libvomc, c-shared) and of the
// vomc binary that this package's tests share: building them takes most
// of a minute of CPU, so a `go test` process builds them once, on first
// use, into a temporary directory that TestMain removes.
var shared struct {
	once     sync.Once
	dir      string
	lib, bin string
	skip     string // why they cannot be built here (no go, no cgo)
	err      error  // a failed build
}

// TestMain runs the tests and removes the shared build.
func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// buildLibvomc returns the shared library libvomc and the vomc binary
// built from this checkout (once per test process, see shared), or skips
// saying why they cannot be built (no go, no cgo), or fails with the
// build's output.
func buildLibvomc(t *testing.T) (lib, bin string) {
	t.Helper()
	shared.once.Do(buildShared)
	if shared.skip != "" {
		t.Skip(shared.skip)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.lib, shared.bin
}

// buildShared builds libvomc and vomc into a new temporary directory.
func buildShared() {
	gobin, err := exec.LookPath("go")
	if err != nil {
		shared.skip = "no go command on PATH to build libvomc"
		return
	}
	if out, err := exec.Command(gobin, "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		shared.skip = fmt.Sprintf("cgo is off (go env CGO_ENABLED = %q; a C compiler is needed): libvomc, a c-shared library, cannot be built", strings.TrimSpace(string(out)))
		return
	}
	if shared.dir, err = os.MkdirTemp("", "vomc-python-test-"); err != nil {
		shared.err = err
		return
	}
	lib, bin := filepath.Join(shared.dir, "libvomc.so"), filepath.Join(shared.dir, "vomc")
	for _, args := range [][]string{{"build", "-buildmode=c-shared", "-o", lib, "./cmd/libvomc"}, {"build", "-o", bin, "./cmd/vomc"}} {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			shared.err = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
			return
		}
	}
	shared.lib, shared.bin = lib, bin
}

// withDeadline is a context ending 30 s before the test's deadline.
func withDeadline(t *testing.T) context.Context {
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		t.Cleanup(cancel)
	}
	return ctx
}

// TestVomcPackage runs the tests of the Python package vomc
// (python/tests_vomc: both doors give the same numbers and bytes, errors,
// Ctrl-C) with libvomc and vomc built from this checkout. Its torch tests
// are skipped by pytest where torch is missing.
func TestVomcPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the vomc Python package's tests (builds libvomc, about a minute)")
	}
	py, why := pythonWith("numpy, pytest")
	if py == "" {
		t.Skipf("no Python with numpy and pytest (set VOMC_PYTHON to one): %s", why)
	}
	lib, bin := buildLibvomc(t)
	cmd := exec.CommandContext(withDeadline(t), py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests_vomc")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "VOMC_LIB="+lib, "VOMC_BIN="+bin, "OMP_NUM_THREADS=1")
	t.Logf("%s -m pytest -q python/tests_vomc", py)
	if err := runLogged(t, cmd); err != nil {
		t.Fatalf("pytest: %v", err)
	}
}

// TestPipInstall installs the package from this checkout as the README
// says, into a fresh virtual environment of Debian's Python
// (/usr/bin/python3 -m venv --system-site-packages; pip install
// --no-build-isolation --no-index ./python: no network), and uses it from
// another directory. The install takes libvomc from $VOMC_LIB (setup.py's
// other door, documented in docs/python.md), set to the library the
// package's tests share, instead of building it a second time with the
// same `go build -buildmode=c-shared` command: what is tested is that the
// wheel carries the library into site-packages and the installed package
// finds and uses it.
func TestPipInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the install of ./python into a fresh virtual environment (builds libvomc)")
	}
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import numpy, setuptools, wheel, venv, ensurepip").CombinedOutput(); err != nil {
		t.Skipf("%s cannot make the virtual environment and build the wheel offline (Debian: python3-venv python3-setuptools python3-wheel python3-numpy): %s", py, strings.TrimSpace(string(out)))
	}
	lib, _ := buildLibvomc(t)
	ctx := withDeadline(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("%s -m venv: %v: %s", py, err, out)
	}
	pip := exec.CommandContext(ctx, filepath.Join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index", "./python")
	pip.Dir = ".."
	pip.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "VOMC_LIB="+lib)
	if err := runLogged(t, pip); err != nil {
		t.Fatalf("VOMC_LIB=%s pip install --no-build-isolation --no-index ./python: %v", lib, err)
	}
	const check = `import vomc, numpy as np
assert "site-packages" in str(vomc.find_library()), vomc.find_library()
p = vomc.Prior(A=3, depths=[1, 2, 3], lam=0.15, alpha=0.5)
ds = p.dataset(K=5, N=32, seed=1)
r = vomc.evaluate(ds, {"ctw": vomc.predict("ctw", ds)}, reference="bayes")
print(vomc.version()["go"], r["ctw"].window)`
	run := exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), "-c", check)
	run.Dir = dir // not the checkout: the installed package
	run.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "VOMC_LIB=")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the installed package: %v\n%s", err, out)
	}
	t.Logf("installed vomc: %s", strings.TrimSpace(string(out)))
}
