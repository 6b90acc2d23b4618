"""The build step of `pip install ./python`: setuptools (pyproject.toml)
plus libvomc, vomc's Go core as a shared library, built from the
checkout's cmd/libvomc with `go build -buildmode=c-shared` into the
package vomc (or copied from $VOMC_LIB when set).  The wheel is therefore
specific to the platform."""
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

LIBNAME = {"darwin": "libvomc.dylib", "win32": "vomc.dll"}.get(sys.platform, "libvomc.so")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # the vomc checkout that holds python/


def build_libvomc(out: str) -> None:
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    given = os.environ.get("VOMC_LIB")
    if given:
        shutil.copyfile(given, out)
        return
    gomod = os.path.join(ROOT, "go.mod")
    if not os.path.isfile(gomod):
        sys.exit(f"vomc: {gomod} not found: build from a vomc checkout (pip install ./python), "
                 "or set VOMC_LIB to a built libvomc")
    go = shutil.which("go")
    if go is None:
        sys.exit("vomc: `go` is not on PATH: it builds vomc's core (libvomc) at install; install Go 1.26.8 or newer "
                 "(https://go.dev/dl), or set VOMC_LIB to a libvomc built elsewhere with "
                 "`go build -buildmode=c-shared -o libvomc.so ./cmd/libvomc`")
    cmd = [go, "build", "-buildmode=c-shared", "-o", out, "./cmd/libvomc"]
    print("vomc: " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, cwd=ROOT)
    if r.returncode != 0:
        sys.exit(f"vomc: building libvomc failed (exit {r.returncode}); without network access, Go needs vomc's "
                 "modules in its module cache (run `go mod download` once online) or GOFLAGS=-mod=vendor")
    header = os.path.splitext(out)[0] + ".h"
    if os.path.exists(header):
        os.remove(header)


class BuildPyWithGo(build_py):
    """build_py, then libvomc into the built package vomc."""

    def run(self) -> None:
        super().run()
        build_libvomc(os.path.join(self.build_lib, "vomc", LIBNAME))


class BinaryDistribution(Distribution):
    """The wheel holds a shared library: tag it with the platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithGo}, distclass=BinaryDistribution)
