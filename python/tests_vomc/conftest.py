"""Fixtures of the vomc package's tests: the package from this checkout
(python/ on sys.path; libvomc from $VOMC_LIB, else built by the package),
a vomc binary ($VOMC_BIN, else built), and small data sets written by the
command line, on which both doors are compared."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYDIR = ROOT / "python"
if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))


@pytest.fixture(scope="session")
def vomc_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vomc binary: $VOMC_BIN, else built from this checkout."""
    if os.environ.get("VOMC_BIN"):
        return Path(os.environ["VOMC_BIN"])
    go = shutil.which("go")
    if go is None:
        pytest.skip("no `go` on PATH to build the vomc binary (set VOMC_BIN to use a built one)")
    out = tmp_path_factory.mktemp("bin") / "vomc"
    r = subprocess.run([go, "build", "-o", str(out), "./cmd/vomc"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"go build ./cmd/vomc failed:\n{r.stderr}")
    return out


def run(vomc_bin: Path, *args, cwd=None) -> str:
    """Run vomc ARGS; its standard output (a failure shows stderr)."""
    r = subprocess.run([str(vomc_bin), *map(str, args)], capture_output=True, text=True, timeout=600, cwd=cwd)
    assert r.returncode == 0, f"vomc {' '.join(map(str, args))}: exit {r.returncode}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="session")
def test_set(vomc_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A test set from the paper's mixed-depth prior: 40 fresh windows of
    N=64 (A=3, D∈1..5), written by `vomc data`."""
    d = tmp_path_factory.mktemp("data") / "test"
    run(vomc_bin, "data", "-A", 3, "-D", "1,2,3,4,5", "-K", 40, "-N", 64, "--seed", 7, "--out", d)
    return d


@pytest.fixture(scope="session")
def train_set(vomc_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A training set for KN's discount: 20 trees, 2 windows each."""
    d = tmp_path_factory.mktemp("data") / "train"
    run(vomc_bin, "data", "-A", 3, "-D", "1,2,3,4,5", "-K", 20, "--NK", 128, "-N", 64, "--fresh=false",
        "--seed", 8, "--out", d)
    return d


@pytest.fixture(scope="session")
def d3_set(vomc_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Test windows of the shipped model models/d3-tf44's prior (A=3, D=3):
    12 windows of N=256."""
    d = tmp_path_factory.mktemp("data") / "d3"
    run(vomc_bin, "data", "-A", 3, "-D", 3, "-K", 12, "-N", 256, "--seed", 12, "--out", d)
    return d
