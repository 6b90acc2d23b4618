"""Priors, trees, generation and data sets: the bytes of the command line."""
from __future__ import annotations

import filecmp
import json
from pathlib import Path

import numpy as np
import pytest

import vomc
from conftest import run


def same_dirs(a: Path, b: Path) -> None:
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for n in names:
        assert filecmp.cmp(a / n, b / n, shallow=False), f"{n} differs"


def test_prior_checked_by_vomc():
    p = vomc.Prior(A=3, depths=[1, 2, 3, 4, 5], lam=0.15, alpha=0.5, leaves="dirichlet")
    assert p.json == {"alphabet": 3, "depths": [1, 2, 3, 4, 5], "lambda": 0.15, "alpha": [0.5], "leaves": "dirichlet"}
    assert (p.A, p.D, p.lam) == (3, 5, 0.15)
    for kw, msg in [({"A": 1}, "alphabet"), ({"lam": 1.5}, "λ"), ({"leaves": "dirichlte"}, "dirichlet, sparse or mixed"),
                    ({"sparse_frac": 0.3}, "mixed")]:
        with pytest.raises(ValueError, match=msg):
            vomc.Prior(**kw)


def test_sample_is_tree_sample_and_data_trees(vomc_bin, tmp_path, test_set):
    p = vomc.Prior(A=3, depths=[1, 2, 3, 4, 5])
    run(vomc_bin, "tree", "sample", "-A", 3, "-D", "1,2,3,4,5", "--seed", 9, "--out", tmp_path / "t.json")
    assert p.sample(1, seed=9)[0].json == vomc.Tree.read(str(tmp_path / "t.json")).json
    ds = vomc.Dataset.read(str(test_set))
    assert [t.json for t in p.sample(40, seed=7)] == [t.json for t in ds.trees]


def test_generate_is_vomc_generate(vomc_bin, tmp_path):
    run(vomc_bin, "tree", "sample", "-A", 4, "-D", 4, "--seed", 3, "--out", tmp_path / "t.json")
    run(vomc_bin, "generate", tmp_path / "t.json", "--raw", "-n", 5000, "--seed", 11, "--out", tmp_path / "x.bin")
    x = vomc.Tree.read(str(tmp_path / "t.json")).generate(5000, seed=11)
    assert x.dtype == np.uint8 and x.tobytes() == (tmp_path / "x.bin").read_bytes()


def test_make_dataset_is_vomc_data(vomc_bin, tmp_path):
    run(vomc_bin, "data", "-A", 3, "-D", "2,4", "-K", 9, "--NK", 100, "-N", 30, "--fresh=false", "--seed", 5,
        "--npy", "--out", tmp_path / "cli")
    p = vomc.Prior(A=3, depths=[2, 4])
    ds = vomc.make_dataset(str(tmp_path / "py"), p, K=9, NK=100, N=30, fresh=False, seed=5, npy=True)
    same_dirs(tmp_path / "cli", tmp_path / "py")
    mem = p.dataset(K=9, NK=100, N=30, fresh=False, seed=5)
    assert np.array_equal(mem.symbols, ds.symbols) and np.array_equal(mem.tree_of, ds.tree_of)
    assert mem.symbols.shape == (27, 30) and list(mem.tree_of[:4]) == [0, 0, 0, 1]


def test_dataset_read_write_round_trip(test_set, tmp_path):
    ds = vomc.Dataset.read(str(test_set))
    assert ds.symbols.shape == (40, 64) and ds.A == 3 and ds.N == 64 and len(ds) == 40
    ds.write(str(tmp_path / "copy"))
    same_dirs(test_set, tmp_path / "copy")
    with pytest.raises(ValueError, match="exists and is not empty"):
        ds.write(str(tmp_path / "copy"))
    ds.write(str(tmp_path / "copy"), force=True)
    bad = vomc.Dataset(ds.manifest, ds.symbols.copy(), ds.tree_of)
    bad.symbols[0, 0] = 3
    with pytest.raises(ValueError, match="symbol 3 outside the alphabet 0..2"):
        bad.write(str(tmp_path / "bad"))
    with pytest.raises(FileNotFoundError):
        vomc.Dataset.read(str(tmp_path / "missing"))
