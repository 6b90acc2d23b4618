"""Per-position predictive distributions of a model on a data set, as .npy.

The array has shape (W, N, A), float32: row [w, t] is the model's
distribution of symbol t (0-based) of window w given symbols 0..t-1, so
row 0 is the uniform distribution (the model sees no symbol before the
first; vomc's transformer predictor and CTW under the symmetric prior give
the same) and row t >= 1 is softmax(logits[w, t-1]).  This is the layout
vomc's `npy:path=FILE.npy` method reads, so `vomc eval --data TEST --methods
ctw,npy:path=FILE.npy` compares any PyTorch model with CTW.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np
import torch

from . import stfile
from .data import Dataset


@torch.no_grad()
def predict(model: torch.nn.Module, ds: Dataset, device: torch.device, batch: int = 64) -> np.ndarray:
    """The (W, N, A) float32 distributions of model on every window of ds."""
    model = model.to(device).eval()
    W, N, A = len(ds.symbols), ds.N, ds.A
    out = np.empty((W, N, A), dtype=np.float32)
    out[:, 0, :] = 1.0 / A
    for s in range(0, W, batch):
        x = torch.from_numpy(ds.symbols[s:s + batch].astype(np.int64)).to(device)
        p = torch.softmax(model(x)[:, :-1].float(), dim=-1)
        if p.shape[-1] != A:
            raise ValueError(f"the model gives {p.shape[-1]} logits per position, the data's alphabet is {A}")
        out[s:s + batch, 1:, :] = p.cpu().numpy()
    return out


@dataclass
class Windows:
    """Windows to predict without a data set: symbols (W, N) uint8 over an
    alphabet of A symbols (predict reads symbols, N and A)."""
    symbols: np.ndarray
    N: int
    A: int


def read_windows(path: str, n: int, alphabet: int) -> Windows:
    """The windows of n symbols in the raw file path (one symbol 0..alphabet-1
    a byte, window after window), as vomc eval's torch: method writes them."""
    if n < 1 or alphabet < 2 or alphabet > 256:
        raise ValueError(f"--symbols needs --n >= 1 and --alphabet in 2..256 (got {n} and {alphabet})")
    b = np.fromfile(path, dtype=np.uint8)
    if len(b) == 0 or len(b) % n:
        raise ValueError(f"{path}: {len(b)} bytes, not a whole number (>= 1) of windows of {n} symbols")
    if b.max() >= alphabet:
        raise ValueError(f"{path}: symbol {int(b.max())} outside the alphabet 0..{alphabet - 1}")
    return Windows(b.reshape(-1, n), n, alphabet)


def save_npy(path: str, a: np.ndarray) -> None:
    """Write a as a .npy file atomically."""
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    stfile.write_atomic(path, buf.getvalue())
