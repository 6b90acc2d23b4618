"""label_heads, attention maps and the hooked torch model against `vomc
attention` and vomc's Go engine on the shipped model models/d3-tf44."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import vomc
from conftest import ROOT, run

MODEL = ROOT / "models" / "d3-tf44"


def test_label_heads_is_vomc_attention(vomc_bin, d3_set, tmp_path):
    run(vomc_bin, "attention", "--model", MODEL, "--data", d3_set, "--window", 0, "--windows", 8, "--k", 3,
        "--out", tmp_path / "attn")
    cli = json.loads((tmp_path / "attn" / "scores.json").read_text())
    ds = vomc.Dataset.read(str(d3_set))
    x = ds.symbols[:8]
    maps = vomc.attention_maps(str(MODEL), x)
    assert maps.shape == (8, 2, 4, 256, 256) and maps.dtype == np.float32
    got = vomc.label_heads(x, maps, D=3, alphabet=3)
    assert got.report["max_k"] == cli["max_k"]
    assert got.heads == cli["heads"], "the scores and labels differ from vomc attention's"
    same = vomc.label_heads(x, str(MODEL), D=3, alphabet=3)  # a model directory: the same maps
    assert same.heads == got.heads
    first8 = vomc.Dataset(ds.manifest, ds.symbols[:8], ds.tree_of[:8])  # D from the data set's prior
    assert vomc.label_heads(first8, maps).heads == got.heads
    assert got.labels[0][0].startswith("previous-token d=1")
    assert "head  label" in got.table


torch = pytest.importorskip("torch", reason="vomc.load_model needs torch")


def test_load_model_hooks_and_cache(d3_set):
    from vomc_torch.train import load_model_file
    m = vomc.load_model(str(MODEL))
    ref, _ = load_model_file(str(MODEL / "model.safetensors"))
    ds = vomc.Dataset.read(str(d3_set))
    x = torch.from_numpy(ds.symbols[:4].astype(np.int64))
    with torch.no_grad():
        assert torch.equal(m(x), ref(x)), "the hooked forward is not vomc_torch's"
    logits, cache = m.run_with_cache(x)
    for name, shape in [("blocks.0.attn.hook_pattern", (4, 4, 256, 256)), ("blocks.1.hook_resid_post", (4, 256, 64)),
                        ("blocks.0.attn.hook_q", (4, 256, 4, 16)), ("blocks.1.mlp.hook_post", (4, 256, 256)),
                        ("hook_embed", (4, 256, 64))]:
        assert tuple(cache[name].shape) == shape, name
    assert torch.allclose(cache["blocks.0.attn.hook_pattern"].sum(-1), torch.ones(4, 4, 256))
    # the torch model's attention is the Go engine's, to float32 rounding
    go = vomc.attention_maps(m, ds.symbols[:4])
    assert np.abs(m.attention_patterns(x).numpy() - go).max() < 1e-5
    # and its distributions are vomc's tf method's
    np.testing.assert_allclose(vomc.model_probs(m, ds.symbols[:4], 3),
                               vomc.predict(f"tf:path={MODEL}", ds.symbols[:4], alphabet=3), atol=1e-5)
    # a hook that zeroes layer 2's attention output changes the logits
    zeroed = m.run_with_hooks(x, [("blocks.1.hook_attn_out", lambda a, hook: a * 0)])
    assert not torch.allclose(zeroed, logits)
    assert torch.equal(m(x), logits.detach()) or torch.allclose(m(x), logits)  # hooks removed afterwards
    with pytest.raises(KeyError, match="no hook point"):
        m.run_with_cache(x, "blocks.9.hook_resid_post")


def test_label_heads_of_a_callable(d3_set):
    m = vomc.load_model(str(MODEL))
    ds = vomc.Dataset.read(str(d3_set))
    x = ds.symbols[:8]
    a = vomc.label_heads(x, m.attention_patterns, D=3, alphabet=3)
    b = vomc.label_heads(x, vomc.attention_maps(m, x), D=3, alphabet=3)
    assert [h["label"].split(",")[0] for h in a.heads] == [h["label"].split(",")[0] for h in b.heads]


def test_evaluate_a_torch_model(d3_set):
    m = vomc.load_model(str(MODEL))
    ds = vomc.Dataset.read(str(d3_set))
    res = vomc.evaluate(ds, {"TF": m}, reference="bayes", methods=[f"tf:path={MODEL}"])
    go = [n for n in res.names if n not in ("TF", res.reference)][0]
    assert res["TF"].window.mean == pytest.approx(res[go].window.mean, abs=1e-6)


def test_load_model_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        vomc.load_model(str(tmp_path / "none"))
