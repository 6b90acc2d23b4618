"""data against Go: a data set written by `vomc data` reads as Go's own .npy
export of it; every kind of damage is refused; split_by_tree and
run_windows give the windows of transformer.SplitByTree and trainrun.Data
(testdata/split.json, testdata/windows.json from the generator)."""
from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from conftest import DS, reference
from vomc_torch.data import DataError, Dataset, Windows, read_dataset, run_windows, split_by_tree


@pytest.fixture(scope="session")
def vomc_data(vomc_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A training set made by `vomc data` (A=3, K=40, 4 windows of 64 per tree) with its .npy export."""
    d = tmp_path_factory.mktemp("vomcdata") / "train"
    r = subprocess.run([str(vomc_bin), "data", "-K", "40", "-N", "64", "-NK", "256", "--fresh=false", "--npy",
                        "--seed", "3", "--out", str(d)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return d


def test_read_vomc_data(vomc_data: Path) -> None:
    """read_dataset on `vomc data` output equals Go's symbols.npy and tree_of.npy."""
    ds = read_dataset(str(vomc_data))
    assert (ds.A, ds.N, ds.K) == (3, 64, 40)
    assert ds.symbols.shape == (160, 64) and ds.symbols.dtype == np.uint8
    np.testing.assert_array_equal(ds.symbols, np.load(vomc_data / "symbols.npy"))
    np.testing.assert_array_equal(ds.tree_of, np.load(vomc_data / "tree_of.npy"))
    assert ds.checksum == hashlib.sha256((vomc_data / "symbols.bin").read_bytes()).hexdigest()
    assert "trees" not in ds.manifest


def _manifest(d: Path) -> dict:
    return json.loads((d / "manifest.json").read_text())


def _set_manifest(d: Path, **kw) -> None:
    m = _manifest(d)
    m.update(kw)
    (d / "manifest.json").write_text(json.dumps(m))


def _rewrite(d: Path, name: str, b: bytes) -> None:
    """Replace file name with b and fix its checksum in the manifest."""
    (d / name).write_bytes(b)
    key = "symbols_sha256" if name == "symbols.bin" else "tree_of_sha256"
    _set_manifest(d, **{key: hashlib.sha256(b).hexdigest()})


def truncate_symbols(d: Path) -> None:
    (d / "symbols.bin").write_bytes((d / "symbols.bin").read_bytes()[:-1])


def extend_symbols(d: Path) -> None:
    (d / "symbols.bin").write_bytes((d / "symbols.bin").read_bytes() + b"\x00")


def flip_symbol(d: Path) -> None:
    b = bytearray((d / "symbols.bin").read_bytes())
    b[100] = (b[100] + 1) % 3  # still in the alphabet: only the checksum tells
    (d / "symbols.bin").write_bytes(bytes(b))


def symbol_outside_alphabet(d: Path) -> None:
    b = bytearray((d / "symbols.bin").read_bytes())
    b[37] = 3
    _rewrite(d, "symbols.bin", bytes(b))


def swap_tree_of(d: Path) -> None:
    t = np.frombuffer((d / "tree_of.bin").read_bytes(), dtype="<i4").copy()
    t[5], t[9] = t[9], t[5]  # windows 5 (tree 1) and 9 (tree 2)
    _rewrite(d, "tree_of.bin", t.tobytes())


def flip_tree_of(d: Path) -> None:
    b = bytearray((d / "tree_of.bin").read_bytes())
    b[8] ^= 1
    (d / "tree_of.bin").write_bytes(bytes(b))


def missing_symbols(d: Path) -> None:
    (d / "symbols.bin").unlink()


@pytest.mark.parametrize("damage,match", [
    (truncate_symbols, r"symbols.bin is truncated: expected 768 bytes"),
    (extend_symbols, r"symbols.bin is too long"),
    (flip_symbol, r"symbols.bin is corrupt: SHA-256"),
    (symbol_outside_alphabet, r"symbol 3 at byte 37 \(window 2, position 5\) is outside the alphabet 0..2"),
    (swap_tree_of, r"tree_of.bin: window 5 has tree index 2, want 1"),
    (flip_tree_of, r"tree_of.bin is corrupt"),
    (missing_symbols, r"symbols.bin does not exist"),
    (lambda d: _set_manifest(d, format="vomc-dataset2"), r"format 'vomc-dataset2'"),
    (lambda d: _set_manifest(d, version=2), r"version 2, this reader reads 1"),
    (lambda d: _set_manifest(d, windows=47), r"inconsistent sizes"),
    (lambda d: _set_manifest(d, k=11), r"inconsistent sizes"),
    (lambda d: _set_manifest(d, symbols_file="../x.bin"), r"file names"),
    (lambda d: _set_manifest(d, trees=[]), r"0 trees, k = 12"),
    (lambda d: (d / "manifest.json").write_text("{not json"), r"not valid JSON"),
    (lambda d: (d / "manifest.json").unlink(), r"no manifest.json"),
], ids=lambda v: getattr(v, "__name__", None) if callable(v) else None)
def test_read_errors(ds_copy: Path, damage: Callable[[Path], None], match: str) -> None:
    """Each damage is refused with a DataError naming it (the intact copy reads)."""
    read_dataset(str(ds_copy))
    damage(ds_copy)
    with pytest.raises(DataError, match=match):
        read_dataset(str(ds_copy))


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not a directory"):
        read_dataset(str(tmp_path / "nothing"))


def _synthetic(K: int, per: int = 1, N: int = 4) -> Dataset:
    """A data set of K trees with per windows each; symbol bytes count up."""
    W = K * per
    sym = (np.arange(W * N) % 251).astype(np.uint8).reshape(W, N)
    return Dataset(path="(synthetic)", manifest={"k": K, "n": N, "prior": {"alphabet": 256}}, symbols=sym,
                   tree_of=(np.arange(W) // per).astype(np.int32), checksum="")


@pytest.mark.parametrize("case", reference("split.json"), ids=lambda c: f"K={c['K'] or 'ds'},f={c['Frac']:.3g},s={c['Seed']}")
def test_split_by_tree(case: dict) -> None:
    """split_by_tree equals transformer.SplitByTree (on testdata/ds, or on K one-window trees)."""
    ds = read_dataset(str(DS)) if case["K"] == 0 else _synthetic(case["K"])
    tr, va = split_by_tree(ds, case["Frac"], case["Seed"])
    assert tr.tolist() == case["Train"]
    assert va.tolist() == case["Val"]


@pytest.mark.parametrize("frac", [-0.1, 1.0, float("nan")])
def test_split_bad_fraction(frac: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        split_by_tree(_synthetic(4), frac, 1)


@pytest.mark.parametrize("case", reference("windows.json"), ids=lambda c: ",".join(f"{k}={v}" for k, v in sorted(c["Meta"].items())))
def test_run_windows(case: dict) -> None:
    """run_windows gives trainrun.Data's training and validation windows, in
    order: split, cut into N, limited to max_windows."""
    meta = dict(case["Meta"], data=str(DS))
    train, val, A, out = run_windows(meta)
    assert A == 3
    assert [bytes(w).hex() for w in train.batch(np.arange(len(train)))] == case["Train"]
    got_val = [] if val is None else [bytes(w).hex() for w in val.batch(np.arange(len(val)))]
    assert got_val == case["Val"]
    assert out["data_checksum"] == _manifest(DS)["symbols_sha256"]


def test_run_windows_checksum_mismatch() -> None:
    """A run recorded on other data (data_checksum) is refused."""
    with pytest.raises(DataError, match="the run was trained on"):
        run_windows({"data": str(DS), "val_frac": "0", "N": "0", "split_seed": "1", "data_checksum": "0" * 64})


@pytest.mark.parametrize("n", ["1", "17"])
def test_run_windows_bad_n(n: str) -> None:
    with pytest.raises(DataError, match=f"-N {n} outside 2..16"):
        run_windows({"data": str(DS), "val_frac": "0", "N": n, "split_seed": "1"})


@pytest.mark.parametrize("rows,N,n", [([0, 1, 2], 4, 2), ([3, 0, 2], 4, 4), ([1, 2], 10, 3), ([4, 0], 7, 2)])
def test_windows_cut(rows: list, N: int, n: int) -> None:
    """cut(n): window i is piece i % per of window i // per, per = N // n (trainrun's cutWindows)."""
    ds = _synthetic(5, N=N)
    w = Windows(ds, np.array(rows), N).cut(n)
    per = N // n
    assert len(w) == len(rows) * per and w.n == n
    for i in range(len(w)):
        off = (i % per) * n
        assert w.batch(np.array([i]))[0].tolist() == ds.symbols[rows[i // per], off:off + n].tolist()
    twice = Windows(ds, np.array(rows), N).cut(n).cut(1)  # cuts compose
    assert twice.batch(np.arange(len(twice)))[:, 0].tolist() == w.batch(np.arange(len(w))).reshape(-1).tolist()


@pytest.mark.parametrize("k,want", [(0, 6), (1, 1), (4, 4), (6, 6), (100, 6)])
def test_windows_first(k: int, want: int) -> None:
    """first(k): the first k windows, all of them for k = 0 or k >= len."""
    ds = _synthetic(6)
    w = Windows(ds, np.arange(6)[::-1], 4).first(k)
    assert len(w) == want
    np.testing.assert_array_equal(w.batch(np.arange(want)), ds.symbols[::-1][:want])
