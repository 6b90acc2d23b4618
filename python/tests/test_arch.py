"""Custom architectures (arch "MODULE:FACTORY", vomc_torch/arch.py): the
module is resolved once into a record (file, folder, SHA-256), loaded back
from it without PYTHONPATH, and refused when its file has changed or
vanished; an interpreter without numpy or torch is named, never a bare
traceback."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DS, PYDIR, cli_cmd, cli_env

from vomc_torch.arch import ArchError, load_factory, resolve

GRU = Path(__file__).resolve().parent / "models" / "gru.py"  # the tiny GRU of the custom-architecture tests


@pytest.fixture
def moddir(tmp_path: Path) -> Path:
    """A folder holding a copy of gru.py (as gru_arch.py: a name no other test imports) and a helper package."""
    d = tmp_path / "models"
    d.mkdir()
    shutil.copy(GRU, d / "gru_arch.py")
    (d / "pkg_arch").mkdir()
    (d / "pkg_arch" / "__init__.py").write_text("")
    shutil.copy(GRU, d / "pkg_arch" / "net.py")
    (d / "broken_arch.py").write_text("import no_such_package_xyz\n")
    (d / "raising_arch.py").write_text("def make(cfg):\n    raise RuntimeError('bad width')\n")
    return d


@pytest.fixture(autouse=True)
def fresh_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test imports the modules of its own folder: sys.path and the test modules' entries restored after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [n for n in sys.modules if n.split(".")[0].endswith("_arch")]:
        del sys.modules[name]


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize("spec,module,rel", [
    ("gru_arch.py:make", "gru_arch", "gru_arch.py"),
    ("./gru_arch.py:make", "gru_arch", "gru_arch.py"),
    ("gru_arch:make", "gru_arch", "gru_arch.py"),  # a module name, found in the current directory
    ("pkg_arch.net:make", "pkg_arch.net", "pkg_arch/net.py"),
])
def test_resolve(moddir: Path, monkeypatch: pytest.MonkeyPatch, spec: str, module: str, rel: str) -> None:
    monkeypatch.chdir(moddir)
    src = resolve(spec)
    f = (moddir / rel).resolve()
    assert src == {"module": module, "factory": "make", "file": str(f), "root": str(moddir.resolve()), "sha256": sha(f)}


@pytest.mark.parametrize("spec,match", [
    ("gru_arch", "want MODULE:FACTORY"),
    ("gru_arch.py:", "want MODULE:FACTORY"),
    ("nosuch_arch:make", "no module 'nosuch_arch' on the path of"),
    ("nosuch.py:make", "there is no file"),
    ("gru_arch.py:build", "has no function 'build'"),
    ("broken_arch.py:make", r"importing .*broken_arch.py with .*python.* failed at .*broken_arch.py:1: ModuleNotFoundError"),
])
def test_resolve_errors(moddir: Path, monkeypatch: pytest.MonkeyPatch, spec: str, match: str) -> None:
    monkeypatch.chdir(moddir)
    with pytest.raises(ArchError, match=match):
        resolve(spec)


def test_factory_error_names_the_line(moddir: Path) -> None:
    from vomc_torch.model import build_model
    src = resolve(str(moddir / "raising_arch.py") + ":make")
    with pytest.raises(ArchError, match=r"the factory raised at .*raising_arch.py:2: RuntimeError: bad width"):
        build_model({"arch": "raising_arch.py:make", "arch_source": src})


def test_changed_and_vanished(moddir: Path) -> None:
    f = moddir / "gru_arch.py"
    src = resolve(str(f) + ":make")
    f.write_text(f.read_text() + "# changed\n")
    with pytest.raises(ArchError, match=f"recorded as {f.resolve()} \\(sha256 {src['sha256']}\\), and that file has changed since \\(sha256 now {sha(f)}\\)"):
        load_factory("gru_arch.py:make", src)
    f.unlink()
    with pytest.raises(ArchError, match="and that file no longer exists"):
        load_factory("gru_arch.py:make", src)


def run_cli(*args: str, cwd: Path, env: dict = None) -> subprocess.CompletedProcess:
    return subprocess.run(cli_cmd(*args), env=env or cli_env(), cwd=cwd, capture_output=True, text=True, timeout=300)


def test_cli_train_predict_elsewhere(moddir: Path, tmp_path: Path) -> None:
    """Trained from the module's folder by name, predicted from another folder with only vomc_torch on PYTHONPATH."""
    pytest.importorskip("torch")
    out = tmp_path / "run"
    r = run_cli("train", "--out", out, "--data", DS, "--arch", "gru_arch:make", "-E", "4", "--hidden", "5", "--layers", "1",
                "--batch", "4", "--max-steps", "3", "--device", "cpu", "--quiet", cwd=moddir)
    assert r.returncode == 0, r.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_cli("predict", "--model", out, "--data", DS, "--out", tmp_path / "p.npy", "--device", "cpu", cwd=elsewhere)
    assert r.returncode == 0, r.stderr
    (moddir / "gru_arch.py").unlink()
    r = run_cli("predict", "--model", out, "--data", DS, "--out", tmp_path / "q.npy", "--device", "cpu", cwd=elsewhere)
    assert r.returncode == 2 and "no longer exists" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_interpreter_without_numpy(tmp_path: Path) -> None:
    """An interpreter without numpy (simulated: a numpy that cannot be imported) is named, with the way out; no traceback, nothing written."""
    fake = tmp_path / "fake"
    (fake / "numpy").mkdir(parents=True)
    (fake / "numpy" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    env = dict(cli_env(), PYTHONPATH=os.pathsep.join([str(fake), str(PYDIR)]))
    for args in (["train", "--out", tmp_path / "run", "--data", DS], ["check"]):
        r = run_cli(*args, cwd=tmp_path, env=env)
        assert r.returncode == 4, r.stderr
        assert "Traceback" not in r.stderr and f"this Python, {sys.executable}" in r.stderr, r.stderr
        assert "No module named 'numpy'" in r.stderr and "VOMC_PYTHON" in r.stderr, r.stderr
    assert not (tmp_path / "run").exists()
