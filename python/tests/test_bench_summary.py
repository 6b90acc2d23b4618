"""scripts/gpu/bench_summary.py: medians, ratio of medians and paired ratios of cpu_bench16.sh's reports."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bs():
    spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "scripts" / "gpu" / "bench_summary.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def write(d: Path, t: int, engine: str, rep: int, tps: dict[str, float]) -> None:
    """A report as `vomc bench train --json` writes it for the engine."""
    if engine == "go":  # fastest step 4/5 of the mean
        reports = [{"name": k, "tokens_per_s": v, "mean_step_ns": 5e8, "min_step_ns": 4e8} for k, v in tps.items()]
    else:  # fastest step 1/2 of the mean
        reports = [{"config": k, "reports": [{"mode": "plain", "tokens_per_s": 1.0, "mean_step_s": 1, "min_step_s": 1},
                                             {"mode": "engine", "tokens_per_s": v, "mean_step_s": 2.0, "min_step_s": 1.0}]}
                   for k, v in tps.items()]
    (d / f"t{t}-{engine}-r{rep}.json").write_text(json.dumps(reports))


def test_summary(bs, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for rep, (g, p) in enumerate([(150.0, 100.0), (120.0, 100.0), (180.0, 90.0)], start=1):
        write(tmp_path, 1, "go", rep, {"C1": g})
        write(tmp_path, 1, "torch", rep, {"C1": p})
    write(tmp_path, 2, "go", 1, {"C1": 10.0})
    (tmp_path / "t4-go-r1.json").write_text("[{")  # cut off: skipped, named
    (tmp_path / "t8-go-r1.json").write_text('[{"name": "C1", "tokens_per_s": 1.0, "mean_step_ns": 1, "min_step_ns": 0}]')
    (tmp_path / "t16-go-extra-r1.json").write_text("[]")  # not a report's name
    rows = bs.summarise(bs.load(tmp_path))
    said = capsys.readouterr().out
    for name in ("t4-go-r1.json", "t8-go-r1.json", "t16-go-extra-r1.json"):
        assert f"skipping {name}" in said
    # medians 150 and 100: 1.50×; paired 1.50, 1.20, 2.00; fastest steps 180·5/4 against 100·2
    assert rows[1].split() == ["1", "C1", "150", "(3)", "100", "(3)", "1.50×", "1.20..2.00", "1.12×"]
    assert "incomplete (go 1, torch 0 runs)" in rows[2]
    assert len(rows) == 3
