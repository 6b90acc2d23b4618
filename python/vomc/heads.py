"""Attention maps and null-tested head labels — vomc's attnmap package
through libvomc: the same tests, p-values and labels as `vomc attention`."""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import _arrays
from ._lib import call
from .sources import Dataset


def attention_maps(model, windows) -> np.ndarray:
    """A vomc model's attention weights on the windows, computed by vomc's
    Go engine (the maps `vomc attention` scores): float32 of shape (W, L, H,
    N, N), [w, l, h, i, j] the weight of query i on key j (0 above the
    diagonal).  model: a run directory of `vomc train` or a .safetensors
    file (or a module from vomc.load_model)."""
    path = getattr(model, "vomc_path", model)
    if not isinstance(path, str):
        raise TypeError(f"model: {type(model).__name__}, want a vomc model directory (or vomc.load_model's module)")
    x = _arrays.windows(windows.symbols if isinstance(windows, Dataset) else windows, 256)
    W, N = x.shape
    info, blobs = call("attention_maps", {"model": path, "W": W, "N": N}, [x])
    L, H = info["layers"], info["heads"]
    return np.frombuffer(blobs[0], dtype=np.float32).reshape(W, L, H, N, N).copy()


class HeadLabels:
    """The labels of label_heads: report (scores.json's form: "heads" with
    each head's layer, head, label, labelled and its scores), table (the
    table `vomc attention` prints) and labels[l][h] (strings, 0-based)."""

    def __init__(self, report: dict, table: str) -> None:
        self.report, self.table = report, table
        L = max((h["layer"] for h in report["heads"]), default=0)
        H = max((h["head"] for h in report["heads"]), default=0)
        self.labels = [["" for _ in range(H)] for _ in range(L)]
        for h in report["heads"]:
            self.labels[h["layer"] - 1][h["head"] - 1] = h["label"]

    @property
    def heads(self) -> list:
        return self.report["heads"]

    def __str__(self) -> str:
        return self.table

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(self.table)

    def _repr_html_(self) -> str:
        import html
        return "<pre>" + html.escape(self.table) + "</pre>"


def label_heads(windows, attn, D: Optional[int] = None, max_k: int = 0, perms: int = 0, seed: int = 1,
                alphabet: Optional[int] = None, model: str = "model", source: str = "windows",
                workers: int = 0) -> HeadLabels:
    """Label every attention head by vomc's null tests (`vomc attention`):
    suffix-match (k, offset) and relative-position (d) hypotheses up to max_k
    (default D+1), permutation p-values Bonferroni-corrected over heads ×
    hypotheses, a label only where a hypothesis is significant and its mass
    is enough above chance.

    attn: float (W, L, H, T, T) attention weights on the (W, T) windows (row
    i of a map: query i's weights over keys, summing to 1), or a callable
    giving it from the windows (e.g. a hooked torch model), or a vomc model
    directory (its Go engine's maps, vomc.attention_maps).  perms: the
    permutations (0: vomc's default), seed: their seed (`vomc attention
    --seed`, default 1).  D: the source depth (default: a Dataset's largest
    depth, as `vomc attention --data`, else 3).
    """
    if isinstance(windows, Dataset):
        if alphabet is None:
            alphabet = windows.A
        if D is None:
            D = windows.prior.D
        windows = windows.symbols
    if D is None:
        D = 3
    A = _arrays.alphabet_of(windows, alphabet)
    x = _arrays.windows(windows, A)
    W, T = x.shape
    if isinstance(attn, str) or hasattr(attn, "vomc_path"):
        attn = attention_maps(attn, x)
    elif callable(attn):
        attn = attn(x.astype(np.int64))
        try:
            import torch
            if isinstance(attn, torch.Tensor):
                attn = attn.detach().cpu().numpy()
        except ImportError:
            pass
    a = np.asarray(attn)
    if a.ndim != 5 or a.shape[0] != W or a.shape[3] != T or a.shape[4] != T:
        raise ValueError(f"attention: shape {a.shape}, want (W, L, H, T, T) = ({W}, L, H, {T}, {T})")
    a = _arrays.floats(a, a.shape, "attention", dtype=np.float32)
    _, L, H, _, _ = a.shape
    rep, blobs = call("label_heads", {"W": W, "T": T, "L": L, "H": H, "A": A, "D": int(D), "max_k": int(max_k),
                                      "perms": int(perms), "seed": int(seed), "workers": int(workers),
                                      "model": model, "source": source}, [x, a])
    return HeadLabels(rep, blobs[0].decode())
