"""An LSTM trained by the CLI (`train --arch lstm`) and exported with
`predict`: the .npy has vomc's layout (W, N, A), rows are distributions, row
0 is uniform, rows are causal, and vomc (Go) scores it as numpy does."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import DS
from vomc_torch.__main__ import main
from vomc_torch.data import Dataset, read_dataset
from vomc_torch.predict import predict
from vomc_torch.train import load_model_file


@pytest.fixture(scope="module")
def lstm_npy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer LSTM trained 30 steps on testdata/ds, its predictions on ds as run/p.npy."""
    out = tmp_path_factory.mktemp("lstm") / "run"
    assert main(["train", "--out", str(out), "--data", str(DS), "--arch", "lstm", "-E", "8", "--hidden", "6",
                 "--layers", "1", "--batch", "4", "--max-steps", "30", "--device", "cpu", "--quiet"]) == 0
    assert main(["predict", "--model", str(out), "--data", str(DS), "--out", str(out / "p.npy"), "--device", "cpu"]) == 0
    return out / "p.npy"


def test_npy_layout(lstm_npy: Path) -> None:
    """(W, N, A) float32, every row a distribution, row 0 uniform, later rows not."""
    p = np.load(lstm_npy)
    assert p.shape == (48, 16, 3) and p.dtype == np.float32
    assert (p > 0).all()
    np.testing.assert_allclose(p.sum(axis=2), 1, atol=1e-6)
    assert (p[:, 0] == np.float32(1 / 3)).all()
    assert np.abs(p[:, 1:] - 1 / 3).max() > 1e-3


def test_npy_rows_are_model_rows(lstm_npy: Path) -> None:
    """Row t of window w is softmax(model(window w)[t-1])."""
    model, cfg = load_model_file(str(lstm_npy.parent / "model.safetensors"))
    assert cfg["arch"] == "lstm" and cfg["hidden"] == 6
    ds = read_dataset(str(DS))
    with torch.no_grad():
        q = torch.softmax(model(torch.from_numpy(ds.symbols[:5].astype(np.int64))), dim=-1).numpy()
    np.testing.assert_allclose(np.load(lstm_npy)[:5, 1:], q[:, :-1], atol=1e-6)


@pytest.mark.parametrize("k", [0, 1, 7, 14, 15])
def test_causal(lstm_npy: Path, k: int) -> None:
    """Changing symbol k of every window leaves rows 0..k unchanged (they
    see symbols before k only) and changes row k+1."""
    model, _ = load_model_file(str(lstm_npy.parent / "model.safetensors"))
    ds = read_dataset(str(DS))
    sym = ds.symbols.copy()
    sym[:, k] = (sym[:, k] + 1) % 3
    other = Dataset(path=ds.path, manifest=ds.manifest, symbols=sym, tree_of=ds.tree_of, checksum="")
    base = np.load(lstm_npy)
    got = predict(model, other, torch.device("cpu"), batch=7)
    np.testing.assert_array_equal(got[:, :k + 1], base[:, :k + 1])
    if k + 1 < ds.N:
        assert (np.abs(got[:, k + 1] - base[:, k + 1]).max(axis=1) > 1e-6).all()


def test_predict_refuses(lstm_npy: Path, capsys: pytest.CaptureFixture) -> None:
    """An existing --out is kept without --force."""
    before = lstm_npy.read_bytes()
    assert main(["predict", "--model", str(lstm_npy.parent), "--data", str(DS), "--out", str(lstm_npy)]) == 2
    assert "exists" in capsys.readouterr().err
    assert lstm_npy.read_bytes() == before


def test_predict_symbols(lstm_npy: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """--symbols (raw windows, as vomc eval's torch: method hands them over)
    gives the bytes --data gives for the same windows; --symbols that do not
    fit --n or --alphabet, and --n without --symbols, are refused."""
    sym = tmp_path / "symbols.bin"
    sym.write_bytes(read_dataset(str(DS)).symbols.tobytes())
    out = tmp_path / "q.npy"
    assert main(["predict", "--model", str(lstm_npy.parent), "--symbols", str(sym), "--n", "16", "--alphabet", "3",
                 "--out", str(out), "--device", "cpu"]) == 0
    assert out.read_bytes() == lstm_npy.read_bytes()
    for args, want in [(["--symbols", str(sym), "--n", "15", "--alphabet", "3"], "not a whole number"),
                       (["--symbols", str(sym), "--n", "16", "--alphabet", "2"], "outside the alphabet"),
                       (["--data", str(DS), "--n", "16"], "go with --symbols")]:
        assert main(["predict", "--model", str(lstm_npy.parent), *args, "--out", str(tmp_path / "x.npy"), "--device", "cpu"]) == 2
        assert want in capsys.readouterr().err
        assert not (tmp_path / "x.npy").exists()


def test_vomc_eval_reads_npy(lstm_npy: Path, vomc_bin: Path, tmp_path: Path) -> None:
    """`vomc eval --methods ctw,npy:path=F.npy` reads the file and reports
    the mean loss numpy computes from it (-log p[w, t, x[w, t]])."""
    r = subprocess.run([str(vomc_bin), "eval", "--data", str(DS), "--methods", f"ctw,npy:path={lstm_npy}",
                        "--out", str(tmp_path / "eval")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "eval" / "results.json").read_text())
    (m,) = [m for m in res["methods"] if not m["name"].startswith("CTW")]
    x = read_dataset(str(DS)).symbols.astype(np.int64)
    p = np.load(lstm_npy).astype(np.float64)
    loss = -np.log(np.take_along_axis(p, x[:, :, None], axis=2)[:, :, 0])
    assert m["window"]["mean"] == pytest.approx(loss.mean(), rel=1e-6)
    np.testing.assert_allclose(m["position"]["mean"], loss.mean(axis=0), rtol=1e-6)
