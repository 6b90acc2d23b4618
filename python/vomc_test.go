package python

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildLibvomc builds the shared library libvomc (cmd/libvomc) and the
// vomc binary into dir, or skips saying why it cannot (no go, no cgo).
func buildLibvomc(t *testing.T, dir string) (lib, bin string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build libvomc")
	}
	if out, err := exec.Command(gobin, "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skipf("cgo is off (go env CGO_ENABLED = %q; a C compiler is needed): libvomc, a c-shared library, cannot be built", strings.TrimSpace(string(out)))
	}
	lib, bin = filepath.Join(dir, "libvomc.so"), filepath.Join(dir, "vomc")
	for _, args := range [][]string{{"build", "-buildmode=c-shared", "-o", lib, "./cmd/libvomc"}, {"build", "-o", bin, "./cmd/vomc"}} {
		cmd := exec.Command(gobin, args...)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return lib, bin
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
	lib, bin := buildLibvomc(t, t.TempDir())
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
// --no-build-isolation --no-index ./python: no network), which builds
// libvomc with go, and uses it from another directory.
func TestPipInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the install of ./python into a fresh virtual environment (builds libvomc)")
	}
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import numpy, setuptools, wheel, venv, ensurepip").CombinedOutput(); err != nil {
		t.Skipf("%s cannot make the virtual environment and build the wheel offline (Debian: python3-venv python3-setuptools python3-wheel python3-numpy): %s", py, strings.TrimSpace(string(out)))
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH: pip install ./python builds libvomc with it")
	}
	ctx := withDeadline(t)
	dir := t.TempDir()
	venv := filepath.Join(dir, "venv")
	if out, err := exec.CommandContext(ctx, py, "-m", "venv", "--system-site-packages", venv).CombinedOutput(); err != nil {
		t.Skipf("%s -m venv: %v: %s", py, err, out)
	}
	pip := exec.CommandContext(ctx, filepath.Join(venv, "bin", "pip"), "install", "--no-build-isolation", "--no-index", "./python")
	pip.Dir = ".."
	pip.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1")
	if err := runLogged(t, pip); err != nil {
		t.Fatalf("pip install --no-build-isolation --no-index ./python: %v", err)
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
