"""Shared fixtures of vomc_torch's tests: paths, the Go reference data in
testdata/ (written by `go run ./python/tests/testdata/gen`), a vomc binary
built from this checkout, and runners for `python -m vomc_torch`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

ROOT = Path(__file__).resolve().parents[2]  # the repository root
PYDIR = ROOT / "python"  # holds the package vomc_torch
TESTDATA = Path(__file__).resolve().parent / "testdata"
DS = TESTDATA / "ds"  # a small training set written by Go's dataset.Write (A=3, K=12, 4 windows of N=16 per tree)

if str(PYDIR) not in sys.path:
    sys.path.insert(0, str(PYDIR))


def reference(name: str) -> Any:
    """The Go reference data testdata/name (JSON)."""
    with open(TESTDATA / name, encoding="utf-8") as f:
        return json.load(f)


def cli_env() -> dict:
    """The environment of a `python -m vomc_torch` child: the package on
    PYTHONPATH, one CPU thread (determinism and speed), no bytecode."""
    env = dict(os.environ, PYTHONPATH=str(PYDIR), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
               CUDA_VISIBLE_DEVICES="")
    return env


def cli_cmd(*args: str) -> List[str]:
    return [sys.executable, "-m", "vomc_torch", *map(str, args)]


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m vomc_torch ARGS` to completion (text output captured)."""
    return subprocess.run(cli_cmd(*args), env=cli_env(), capture_output=True, text=True, timeout=timeout)


def cli_popen(*args: str) -> subprocess.Popen:
    """Start `python -m vomc_torch ARGS` (stderr captured, stdout discarded)."""
    return subprocess.Popen(cli_cmd(*args), env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def ds_copy(tmp_path: Path) -> Path:
    """A private, writable copy of testdata/ds."""
    d = tmp_path / "ds"
    shutil.copytree(DS, d)
    return d


@pytest.fixture(scope="session")
def vomc_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vomc binary: $VOMC_BIN, else built from this checkout with `go
    build` (skipped when there is no go on PATH)."""
    if os.environ.get("VOMC_BIN"):
        return Path(os.environ["VOMC_BIN"])
    go = shutil.which("go")
    if go is None:
        pytest.skip("no `go` on PATH to build the vomc binary (set VOMC_BIN to use a built one)")
    out = tmp_path_factory.mktemp("bin") / "vomc"
    r = subprocess.run([go, "build", "-o", str(out), "./cmd/vomc"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"go build ./cmd/vomc failed:\n{r.stderr}")
    return out
