"""docs/figures/ladder/pairs.py: paired t-intervals of the ladder's write-up."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pairs():
    spec = importlib.util.spec_from_file_location("pairs", ROOT / "docs" / "figures" / "ladder" / "pairs.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


@pytest.mark.parametrize("df,want", [(30, 2.0423), (99, 1.9842), (999, 1.9623), (10**6, 1.9600)])
def test_t_quantile(pairs, df: int, want: float) -> None:
    """Student-t 97.5% quantiles from tables, to four decimals."""
    assert pairs.t_quantile(df) == pytest.approx(want, abs=1e-4)


def test_pair_by_hand(pairs) -> None:
    """Mean and half-width of a - b on four windows, computed by hand."""
    a, b = [1.0, 2.0, 3.0, 6.0], [0.0, 1.0, 1.0, 2.0]  # d = 1, 1, 2, 4: mean 2, sd sqrt(2)
    h = pairs.t_quantile(3) * math.sqrt(2.0) / 2.0
    assert pairs.pair(a, b) == f"{2.0:+.4f} [{2.0 - h:+.4f}, {2.0 + h:+.4f}]"


def test_pair_refuses_unequal(pairs) -> None:
    with pytest.raises(ValueError, match="cannot pair 2 windows with 3"):
        pairs.pair([1.0, 2.0], [1.0, 2.0, 3.0])


def test_load_and_main(pairs, tmp_path: Path, capsys) -> None:
    """main reads each eval stage's methods and prints the excess over Bayes."""
    ms = [("Bayes", [0.5, 0.6, 0.7]), ("CTW(D=5)", [0.6, 0.6, 0.8]), ("Markov(k=4,α=0.5)", [0.7, 0.8, 0.9]),
          ("TF(4,4)", [0.6, 0.7, 0.8])]
    for i, (name, w) in enumerate(ms):
        d = tmp_path / f"eval-{i}"
        d.mkdir()
        (d / "results.json").write_text(json.dumps({"methods": [{"name": name, "second_half_windows": w}]}))
    assert set(pairs.load(str(tmp_path))) == {n for n, _ in ms}
    import sys

    old = sys.argv
    sys.argv = ["pairs.py", str(tmp_path)]
    try:
        pairs.main()
    finally:
        sys.argv = old
    out = capsys.readouterr().out
    assert "3 test windows" in out
    assert "TF(4,4)" in out and "+0.1000 [+0.1000, +0.1000]" in out


def test_main_without_stages(pairs, tmp_path: Path, monkeypatch) -> None:
    """Without eval stages (a fresh clone before finish) main says what to run."""
    monkeypatch.setattr("sys.argv", ["pairs.py", str(tmp_path)])
    with pytest.raises(SystemExit, match="scripts/ladder.sh finish"):
        pairs.main()
