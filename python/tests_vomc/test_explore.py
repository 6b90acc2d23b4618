"""vomc.explore: the page of `vomc explore --static`."""
from __future__ import annotations

import pytest

import vomc
from conftest import ROOT, run

MODEL = ROOT / "models" / "d3-tf44"


def test_explore_is_the_static_page(vomc_bin, d3_set, tmp_path):
    run(vomc_bin, "explore", "--model", MODEL, "--data", d3_set, "--static", tmp_path / "p.html", "--window", 2,
        "--head-windows", 4, "--mean-windows", 4)
    page = vomc.explore(str(MODEL), str(d3_set), window=2, head_windows=4, mean_windows=4)
    assert page.html == (tmp_path / "p.html").read_text()
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "&lt;html" in frame.lower()
    page.save(str(tmp_path / "q.html"))
    assert (tmp_path / "q.html").read_text() == page.html
    with pytest.raises(ValueError, match="window 99"):
        vomc.explore(str(MODEL), str(d3_set), window=99, head_windows=4, mean_windows=4)
    with pytest.raises(TypeError, match="explore shows vomc models"):
        vomc.explore(object(), str(d3_set))
