"""VomcTransformer against Go's transformer: models written by Go
(WriteSafetensors, random parameters) load and give Go's logits
(testdata/model_logits.json: Forward + Activations.Logits) within 1e-5, for
learned and sinusoidal positions, with and without LayerNorm and
feed-forward, ReLU and GELU, per-layer head counts and zero layers."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import torch

from conftest import TESTDATA, reference
from vomc_torch.model import LSTMModel, VomcTransformer, build_model, flat_params, sinusoidal_table, unflatten
from vomc_torch.train import load_model_file, model_bytes

REFS = reference("model_logits.json")


@pytest.mark.parametrize("ref", REFS, ids=lambda r: r["Name"])
def test_logits_equal_go(ref: dict) -> None:
    """Max |logit difference| <= 1e-5 (Go's GELU uses an erf approximation of error <= 3e-7)."""
    model, cfg = load_model_file(str(TESTDATA / f"model_{ref['Name']}.safetensors"))
    assert cfg == ref["Config"]
    x = torch.tensor(ref["Inputs"], dtype=torch.int64).reshape(ref["B"], ref["T"])
    with torch.no_grad():
        got = model(x).numpy()
    want = np.array(ref["Logits"], dtype=np.float32).reshape(ref["B"], ref["T"], cfg["alphabet"])
    assert np.abs(got - want).max() <= 1e-5
    assert np.abs(want).max() > 0.1  # the reference is not trivially small


@pytest.mark.parametrize("ref", REFS, ids=lambda r: r["Name"])
def test_layout_is_go_file_order(ref: dict) -> None:
    """layout() lists the tensors, names and shapes, in the order of Go's file (its Layout)."""
    raw = (TESTDATA / f"model_{ref['Name']}.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__")
    go = [(k, v["shape"]) for k, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"])]
    assert VomcTransformer(ref["Config"]).layout() == go


@pytest.mark.parametrize("ref", REFS, ids=lambda r: r["Name"])
def test_model_bytes_equal_go(ref: dict) -> None:
    """model_bytes of a model loaded from Go's file rewrites Go's file byte for byte."""
    path = TESTDATA / f"model_{ref['Name']}.safetensors"
    model, cfg = load_model_file(str(path))
    assert model_bytes(model, cfg) == path.read_bytes()


def test_sinusoidal_table() -> None:
    """PE[p, 2i] = sin(p w_i), PE[p, 2i+1] = cos(p w_i), w_i = 10000^(-2i/E)."""
    t = sinusoidal_table(7, 6).numpy()
    p, i = 5, 2
    w = 10000.0 ** (-2 * i / 6)
    assert t[p, 2 * i] == pytest.approx(np.sin(p * w), abs=1e-7)
    assert t[p, 2 * i + 1] == pytest.approx(np.cos(p * w), abs=1e-7)
    np.testing.assert_array_equal(t[0, 0::2], 0)
    np.testing.assert_array_equal(t[0, 1::2], 1)


@pytest.mark.parametrize("model", [
    VomcTransformer(REFS[0]["Config"]),
    LSTMModel({"alphabet": 3, "embed": 4, "hidden": 5, "layers": 2}),
], ids=["transformer", "lstm"])
def test_causal(model: torch.nn.Module) -> None:
    """Changing token k changes no logits before position k, and some at k."""
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.uniform_(-0.5, 0.5)
        x = torch.randint(0, 3, (2, 8))
        base = model(x)
        for k in (0, 3, 7):
            y = x.clone()
            y[:, k] = (y[:, k] + 1) % 3
            out = model(y)
            assert torch.equal(out[:, :k], base[:, :k])
            assert not torch.allclose(out[:, k], base[:, k])


def test_flat_params_round_trip() -> None:
    """unflatten(flat_params) restores every tensor; a wrong length is refused."""
    m = VomcTransformer(REFS[1]["Config"])
    m.init_gpt2(3)
    flat = flat_params(m)
    assert flat.shape == (sum(p.numel() for p in m.parameters()),)
    sd = unflatten(m, flat)
    for n, p in m.named_parameters():
        assert torch.equal(sd[n], p.detach())
    with pytest.raises(ValueError, match="parameters"):
        unflatten(m, np.append(flat, 0))
    with pytest.raises(ValueError):
        unflatten(m, flat[:-1])


@pytest.mark.parametrize("cfg,match", [
    ({"arch": "nosuch"}, "unknown arch"),
    ({"arch": "json:dumps"}, "not an nn.Module"),
    ({"arch": "no_such_module_xyz:f"}, "cannot import"),
    ({"arch": "lstm", "alphabet": 3, "embed": 0, "hidden": 4, "layers": 1}, "embed"),
    (dict(REFS[0]["Config"], heads=[3, 4]), "heads"),
    (dict(REFS[0]["Config"], activation="tanh"), "activation"),
    ({"layers": 1}, "without"),
])
def test_build_model_errors(cfg: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_model(cfg)
