"""predict, ctw_weights and evaluate against `vomc eval --export`, `vomc
ctw` and `vomc eval` on the same windows (item 6: exact methods to 1e-12)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import vomc
from conftest import run

SPECS = ["bayes", "ctw", "ctw:D=2", "kn", "ppm", "markov:k=3", "unigram"]


def exported(d: Path, method_prefix: str) -> np.ndarray:
    (f,) = [p for p in d.iterdir() if p.name.startswith(method_prefix)]
    return np.load(f)


@pytest.fixture(scope="module")
def cli_eval(vomc_bin, test_set, train_set, tmp_path_factory):
    """`vomc eval` of SPECS and an npy model on test_set (KN tuned on
    train_set), with --export."""
    d = tmp_path_factory.mktemp("eval")
    ds = vomc.Dataset.read(str(test_set))
    mine = 0.9 * vomc.predict("markov:k=1", ds) + 0.1 / 3  # causal: a function of markov's rows
    np.save(d / "mine.npy", mine)
    run(vomc_bin, "eval", "--data", test_set, "--train", train_set, "--methods",
        ",".join(SPECS) + f",npy:path={d / 'mine.npy'}:name=mine", "--out", d / "out", "--export", d / "export")
    return d, ds, mine


def test_predict_is_the_export(cli_eval, train_set):
    d, ds, _ = cli_eval
    train = vomc.Dataset.read(str(train_set))
    for spec, prefix in [("bayes", "Bayes"), ("ctw", "CTW_D=5"), ("kn", "KN"), ("ppm", "PPM"),
                         ("markov:k=3", "Markov_k=3"), ("unigram", "Unigram")]:
        want = exported(d / "export", prefix)
        got = vomc.predict(spec, ds, train=train if spec == "kn" else None)
        assert got.shape == (40, 64, 3) and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=spec)


def test_predict_defaults_without_prior(cli_eval):
    _, ds, _ = cli_eval
    x = ds.symbols
    a = vomc.predict("ctw", x)  # A = 1 + the largest symbol, D=3, λ=0.15, α=0.5 as `vomc eval --file`
    b = vomc.predict("ctw:D=3:lambda=0.15:alpha=0.5", x, alphabet=3)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="prior"):
        vomc.predict("bayes", x)
    with pytest.raises(ValueError, match="one method"):
        vomc.predict("ctw,kn", x)
    with pytest.raises(ValueError, match="ctx"):  # vomc's did-you-mean names the method
        vomc.predict("ctx", x)


def test_evaluate_is_vomc_eval(cli_eval, train_set):
    d, ds, mine = cli_eval
    cli = json.loads((d / "out" / "results.json").read_text())
    train = vomc.Dataset.read(str(train_set))
    res = vomc.evaluate(ds, {"mine": mine}, reference="bayes", methods=SPECS[1:], train=train)
    py = res.json
    assert py["config"]["reference"] == cli["config"]["reference"]
    for k in ("windows", "window_length", "alphabet_size", "confidence", "ci_method", "critical_value"):
        assert py["config"][k] == cli["config"][k]
    assert [m["name"] for m in py["methods"]] == [m["name"] for m in cli["methods"]]
    for pm, cm in zip(py["methods"], cli["methods"]):
        assert pm == cm, f"{pm['name']}: the numbers differ from vomc eval's"
    assert res.table == (d / "out" / "summary.txt").read_text()
    ctw = res["CTW(D=5,λ=0.15,α=0.5)"]
    assert ctw.position.shape == (64, 4) and ctw.second_half_windows.shape == (40,)
    assert ctw.excess_window.mean > 0 and res[res.reference].excess_window.mean == 0


def test_evaluate_callables_and_reference(cli_eval):
    _, ds, mine = cli_eval
    a = vomc.evaluate(ds, {"mine": mine, "ctwp": vomc.predict("ctw:D=5", ds)}, reference="ctwp")
    b = vomc.evaluate(ds, {"mine": lambda x: 0.9 * vomc.predict("markov:k=1", x, alphabet=3) + 0.1 / 3},
                      reference="ctw:D=5", prior=ds.prior)
    assert a.reference == "ctwp" and b.reference.startswith("CTW(D=5")
    assert a["mine"].excess_window.mean == pytest.approx(b["mine"].excess_window.mean, rel=1e-12)


def test_ctw_weights_are_vomc_ctw(vomc_bin, cli_eval, tmp_path):
    _, ds, _ = cli_eval
    x = ds.symbols[:3]
    omega, logml = vomc.ctw_weights(x, D=4, lam=0.15, alpha=0.5)
    assert omega.shape == (3, 64, 5)
    np.testing.assert_allclose(omega.sum(axis=2), 1, rtol=1e-12)
    for w in range(3):
        (tmp_path / "x.txt").write_text("".join(map(str, x[w])))
        out = run(vomc_bin, "ctw", tmp_path / "x.txt", "-D", 4, "--lambda", 0.15, "--alpha", 0.5, "--init", "pad",
                  "--alphabet", "012", "--weights", tmp_path / "w.csv", "--force")
        csv = np.loadtxt(tmp_path / "w.csv", delimiter=",", skiprows=1)
        np.testing.assert_allclose(omega[w], csv[:, 2:], rtol=1e-9, atol=1e-12)
        ln = float(re.search(r"ln P\(x\) = (\S+) nats", out).group(1))
        assert logml[w] == pytest.approx(ln, abs=1e-6)
        # ln P(x) is the log-loss sum of CTW's predictions
        p = vomc.predict("ctw:D=4", x[w:w + 1], alphabet=3)[0]
        assert logml[w] == pytest.approx(np.log(p[np.arange(64), x[w]]).sum(), rel=1e-12)
